"""parse(source) -> Program: the program language (spec/language.md), deny by default.

Python's `ast` reads the text (never `eval`); one table maps each allowed AST class to a
handler, and anything else is refused with a named error at its line and column. Limits on
size and nesting are checked around `ast.parse` (guards.py). The parser is in four parts:
parser_base.py (its state, positions, refusals and whole numbers), spelling.py (imports,
module prefixes, shapes, attributes and indexes), calls.py (function and method calls) and,
here, the program, its statements and the other expressions.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.autograd.ops import MAX_RANK
from engine.errors import ProgramError
from engine.language import flow_ir as fx
from engine.language import ir
from engine.language.flow_ir import ListExpr
from engine.language.guards import read_tree
from engine.language.name_warnings import name_warnings
from engine.language.parse_functions import FunctionParser, is_grad_transform
from engine.language.vocabulary import BIN_OPS, FUNCTIONS, SYMBOLS
from engine.limits import DEFAULT_LIMITS, Limits


def parse(source: str, limits: Limits = DEFAULT_LIMITS) -> ir.Program:
    """Check and parse a program into the IR; raise ProgramError with a position if it can't.

    A name read as a whole number (`range(n)`) is bound to an int where it is assigned, so a
    program that reads one is read twice: first to find those names (and the names their
    values read, `n = 2 * m`), then with them known."""
    tree = read_tree(source, limits)
    first = Parser(source, limits)
    program = first.program(tree)
    if not first.int_reads:
        return program
    ints = set(first.int_reads)
    todo = list(ints)
    while todo:  # the names an int's value reads are ints too
        for name in first.int_sources.get(todo.pop(), ()):
            if name not in ints:
                ints.add(name)
                todo.append(name)
    return Parser(source, limits, frozenset(ints)).program(tree)


class Parser(FunctionParser):
    """Turns an allowed AST into IR. Every handler is in one table; the rest is refused."""

    def __init__(
        self, source: str, limits: Limits, int_names: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(source, limits)
        self.init_flow(int_names)
        self.expr_handlers: dict[type, Callable[[Any], ir.Expr]] = {
            ast.Constant: self.constant,
            ast.Name: self.name,
            ast.BinOp: self.binop,
            ast.UnaryOp: self.unary,
            ast.Call: self.call,
            ast.Subscript: self.subscript,
            ast.Attribute: self.attribute,
            ast.List: self.list_literal,
            ast.Tuple: self.list_literal,
            ast.ListComp: self.comprehension,
            ast.GeneratorExp: self.comprehension,
            ast.IfExp: self.if_expression,
            ast.Lambda: self.lone_lambda,
        }

    # program and statements
    def program(self, tree: ast.Module) -> ir.Program:
        self.look_ahead(tree)
        self.look_ahead_more(tree)  # spelling.py: requires_grad_(), index lists
        self.look_ahead_functions(tree)  # parse_functions.py: defs, lambdas, lists looped over
        body = self.block(tree.body, top=True)
        if not body:
            raise ProgramError("the program has no statements", 1, 1, code="empty")
        for name, err in self.deferred:
            if name not in self.int_reads:
                raise err
        return ir.Program(
            body,
            self.source,
            tuple(self.free),
            frozenset(self.label_names),
            frozenset(self.int_reads),
            self.torch,  # spelling.py: torch was imported
            name_warnings(tree, self.free, self.source),  # `yy` beside `y`: did you mean y?
            frozenset(self.leaf_names),  # spelling.py: names requires_grad_() makes leaves
        )

    def look_ahead(self, tree: ast.Module) -> None:
        """What must be known before the first statement is read, in one walk: the names
        assigned anywhere (to tell "used too early" from free) and those used as labels."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                self.every_assigned.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "cross_entropy"
                and len(node.args) == 2
                and isinstance(node.args[1], ast.Name)
            ):
                self.label_names.add(node.args[1].id)

    def block(self, stmts: list[ast.stmt], top: bool = False) -> tuple[ir.Stmt, ...]:
        out = []
        for i, stmt in enumerate(stmts):
            last = top and i == len(stmts) - 1
            out.append(self.statement(stmt, last))
        return tuple(out)

    def statement(self, node: ast.stmt, last: bool) -> ir.Stmt:
        note = self.note(node)  # spelling.py: an import, x.requires_grad_(), np.random.seed(0)
        if note is not None:
            return note
        if isinstance(node, ast.FunctionDef):
            return self.function_def(node)
        if isinstance(node, ast.Return):
            return self.return_statement(node)
        flow = self.flow_statement(node)  # parse_flow.py: if, while, for over lists, +=, …
        if flow is not None:
            return flow
        if isinstance(node, ast.Assign):
            return self.assign_statement(node)
        if isinstance(node, ast.Expr):
            shown = self.shown_statement(node)  # print(…), L.backward(), x.grad
            if shown is not None:
                return shown
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "seed"
            ):
                if len(value.args) != 1 or value.keywords:
                    raise self.error(value, "seed takes one whole number: seed(0)")
                n = self.static_value(value.args[0])
                if n < 0:
                    raise self.error(
                        value.args[0], "seed takes a whole number ≥ 0: seed(0)", "static"
                    )
                return ir.Seed(n, self.span(node))
            if last and isinstance(value, ast.Compare):  # `x.grad == u`: shown, not traced
                return fx.ShownLine(self.shown_comparison(value), self.span(node))
            if isinstance(value, ast.Yield | ast.YieldFrom | ast.Await):
                raise self.refuse(value)  # `yield x` in a def: named, not "a bare expression"
            if not last:
                raise self.error(
                    node,
                    "only the last statement can be a bare expression; "
                    "give this one a name: name = …",
                    "bare_expression",
                )
            return ir.Output(self.expr(value), self.span(node))
        if isinstance(node, ast.For):
            return self.loop(node)
        raise self.refuse(node)

    def assign_statement(self, node: ast.Assign) -> ir.Assign:
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            raise self.error(node, "assign to one name at a time: name = expression")
        target = node.targets[0].id
        self.check_name(node.targets[0], target)
        if target in FUNCTIONS:
            raise self.error(node.targets[0], f"'{target}' is a function name; choose another name")
        if target in self.loop_vars:
            raise self.error(
                node.targets[0],
                f"'{target}' is the loop variable; it cannot be assigned inside its loop",
            )
        value = node.value
        expr: ir.Expr | ir.StaticArg
        if target in self.functions:
            if isinstance(value, ast.Lambda):
                expr = self.lambda_expr(value)
            elif is_grad_transform(value):
                expr = self.grad_of(value)  # type: ignore[arg-type]
            else:
                raise self.error(
                    node.targets[0],
                    f"'{target}' names a function in this program; choose another name "
                    "for this value",
                )
        elif target in self.label_names and not self.in_function():
            expr = self.labels(value)
        else:
            expr = self.assign_value(target, value)
        if isinstance(value, ast.ListComp) or isinstance(expr, ListExpr):
            self.list_names.add(target)
        else:
            self.list_names.discard(target)
        self.bind(target)
        return ir.Assign(target, expr, self.span(node))

    # expressions
    def expr(self, node: ast.AST) -> ir.Expr:
        handler = self.expr_handlers.get(type(node))
        if handler is None:
            if isinstance(node, ast.Compare | ast.BoolOp) or (
                isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
            ):
                raise self.not_a_value(node)
            raise self.refuse(node)
        if isinstance(node, ast.Attribute):
            self.grad_read_error(node)  # x.grad outside a print
        return handler(node)

    def constant(self, node: ast.Constant) -> ir.Expr:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, int | float):
            if isinstance(v, complex):
                raise self.error(
                    node, "complex numbers are not part of the language", "unsupported"
                )
            raise self.refuse(node)
        value = float(v) if isinstance(v, float) or abs(v) < 2**1023 else float("inf")
        if not np.isfinite(value):
            raise self.error(node, "this number is too large for a float64", "non_finite")
        return ir.Num(value, self.span(node))

    def name(self, node: ast.Name) -> ir.Expr:
        name = node.id
        self.check_name(node, name)
        if name in self.loop_vars or self.local_scope(name) is not None:
            return ir.Name(name, self.span(node))  # a loop's counter, a function's own name
        if name in self.functions:
            raise self.error(
                node, f"'{name}' is a function: call it, as in {name}(…), or pass it to grad"
            )
        if name in FUNCTIONS:
            raise self.error(node, f"'{name}' is a function: call it, as in {name}(…)")
        if name in self.label_names and name not in self.assigned and name not in self.free:
            self.free.append(name)
        elif name not in self.assigned and name not in self.free:
            if self.in_function() and name in self.every_assigned:
                return ir.Name(name, self.span(node))  # read when the function runs
            if name in self.local_only:
                raise self.error(
                    node,
                    f"'{name}' is a name inside a function; it does not exist outside it",
                    "unbound",
                )
            if name in self.generators:
                raise self.error(
                    node,
                    f"'{name}' is NumPy's random generator, not a value: draw from it, as in "
                    f"{name}.standard_normal(3)",
                    "unsupported",
                )
            if self.assigned_later(name):
                raise self.error(node, f"'{name}' is used before it is assigned", "unbound")
            self.free.append(name)
        return ir.Name(name, self.span(node))

    def assigned_later(self, name: str) -> bool:
        """Is `name` assigned anywhere in the program (so using it now is too early)?"""
        return name in self.every_assigned

    def binop(self, node: ast.BinOp) -> ir.Expr:
        op = BIN_OPS.get(type(node.op))
        if op is None:
            symbol = SYMBOLS.get(type(node.op), "?")
            raise self.error(
                node,
                f"the operator {symbol} is not part of the language (use + - * / ** @)",
                "unsupported",
            )
        # `a + b + c + …` is a left-leaning chain: walk its spine with a loop, not recursion,
        # so a long flat sum is not mistaken for deep nesting.
        spine = [node]
        while isinstance(spine[-1].left, ast.BinOp) and type(spine[-1].left.op) in BIN_OPS:
            spine.append(spine[-1].left)
        result = self.expr(spine[-1].left)
        for link in reversed(spine):
            result = ir.BinOp(
                BIN_OPS[type(link.op)], result, self.expr(link.right), self.span(link)
            )
        return result

    def unary(self, node: ast.UnaryOp) -> ir.Expr:
        if isinstance(node.op, ast.UAdd):
            return self.expr(node.operand)
        if not isinstance(node.op, ast.USub):
            raise self.error(node, "only - and + can stand before a value", "unsupported")
        operand = self.expr(node.operand)
        if isinstance(operand, ir.Num):  # -2 is a number, not an op
            return ir.Num(-operand.value, self.span(node))
        return ir.Neg(operand, self.span(node))

    def list_literal(self, node: ast.List | ast.Tuple) -> ir.Expr:
        def numbers(n: ast.AST, rank: int = 1) -> Any:
            if isinstance(n, ast.List | ast.Tuple):
                if rank > MAX_RANK:  # else NumPy's own ValueError past 64 reads as ragged rows
                    raise self.error(
                        node,
                        f"a value can have at most {MAX_RANK} dimensions "
                        "(NumPy broadcasts no more); this list nests deeper",
                        "shape",
                    )
                return [numbers(e, rank + 1) for e in n.elts]
            if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub | ast.UAdd):
                inner = numbers(n.operand)
                if isinstance(inner, list):
                    raise self.error(n, "a minus sign can stand only before a number here")
                return -inner if isinstance(n.op, ast.USub) else inner
            if isinstance(n, ast.Constant) and isinstance(n.value, bool):
                return float(n.value)  # a mask or targets: True is 1.0 once it is computed with
            if isinstance(n, ast.Constant) and isinstance(n.value, int | float):
                return self.constant(n).value  # type: ignore[union-attr]
            if self.is_constant_number(n):  # spelling_more.py: `math.pi / 2`
                return self.fold(n)
            raise self.error(n, "a list can hold only numbers (or lists of numbers)", "bad_list")

        data = numbers(node)
        try:
            array = np.array(data, dtype=np.float64)
        except ValueError:
            raise self.error(
                node, "the rows of this list have different lengths", "bad_list"
            ) from None
        if array.size > self.limits.max_tensor_elements:
            raise self.error(
                node,
                f"this list has {array.size:,} numbers; the limit is "
                f"{self.limits.max_tensor_elements:,} (max_tensor_elements)",
                "too_large",
                limit="max_tensor_elements",
            )
        if array.size == 0:
            raise self.error(node, "an empty list has no values", "bad_list")
        return ir.Array(array, self.span(node))
