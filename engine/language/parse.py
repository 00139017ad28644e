"""parse(source) -> Program: the program language (spec/language.md), deny by default.

Python's `ast` reads the text (never `eval`); one table maps each allowed AST class to a
handler, and anything else is refused with a named error at its line and column. Limits on
size and nesting are checked around `ast.parse` (guards.py). The parser is in three parts:
parser_base.py (its state, positions, refusals and whole numbers), calls.py (function and
method calls) and, here, the program, its statements and the other expressions.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.autograd.ops import MAX_RANK
from engine.errors import ProgramError
from engine.language import ir
from engine.language.calls import CallParser
from engine.language.guards import read_tree
from engine.language.vocabulary import ATTRIBUTES, BIN_OPS, FUNCTIONS, METHODS, SYMBOLS
from engine.limits import DEFAULT_LIMITS, Limits


def parse(source: str, limits: Limits = DEFAULT_LIMITS) -> ir.Program:
    """Check and parse a program into the IR; raise ProgramError with a position if it can't."""
    tree = read_tree(source, limits)
    return Parser(source, limits).program(tree)


class Parser(CallParser):
    """Turns an allowed AST into IR. Every handler is in one table; the rest is refused."""

    def __init__(self, source: str, limits: Limits) -> None:
        super().__init__(source, limits)
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
        }

    # program and statements
    def program(self, tree: ast.Module) -> ir.Program:
        self.look_ahead(tree)
        body = self.block(tree.body, top=True)
        if not body:
            raise ProgramError("the program has no statements", 1, 1, code="empty")
        return ir.Program(body, self.source, tuple(self.free), frozenset(self.label_names))

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
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                raise self.error(node, "assign to one name at a time: name = expression")
            target = node.targets[0].id
            self.check_name(node.targets[0], target)
            if target in FUNCTIONS:
                raise self.error(
                    node.targets[0], f"'{target}' is a function name; choose another name"
                )
            if target in self.loop_vars:
                raise self.error(
                    node.targets[0],
                    f"'{target}' is the loop variable; it cannot be assigned inside its loop",
                )
            if target in self.label_names:
                expr: ir.Expr = self.labels(node.value)
            else:
                expr = self.expr(node.value)
            self.assigned.add(target)
            return ir.Assign(target, expr, self.span(node))
        if isinstance(node, ast.Expr):
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
        if isinstance(node, ast.AugAssign):
            raise self.error(
                node,
                "augmented assignment (+=, *=, …) is not part of the language: write x = x + …",
                "unsupported",
            )
        raise self.refuse(node)

    def loop(self, node: ast.For) -> ir.Loop:
        if node.orelse:
            raise self.error(node, "a for loop cannot have an else block", "unsupported")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be one name: for i in range(n)")
        it = node.iter
        if not (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "range"
            and 1 <= len(it.args) <= 3
            and not it.keywords
        ):
            raise self.error(
                it, "a loop must be for name in range(n) with a constant n", "unsupported"
            )
        bounds = [self.static(a) for a in it.args]
        start, stop, step = (
            (ir.SInt(0), bounds[0], ir.SInt(1))
            if len(bounds) == 1
            else (bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else ir.SInt(1))
        )
        var = node.target.id
        self.check_name(node.target, var)
        if var in FUNCTIONS:
            raise self.error(node.target, f"'{var}' is a function name; choose another name")
        self.loop_vars.append(var)
        try:
            body = self.block(node.body)
        finally:
            self.loop_vars.pop()
        return ir.Loop(var, start, stop, step, body, self.span(node))

    # expressions
    def expr(self, node: ast.AST) -> ir.Expr:
        handler = self.expr_handlers.get(type(node))
        if handler is None:
            raise self.refuse(node)
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

    def check_name(self, node: ast.AST, name: str) -> None:
        if name.startswith("__"):
            raise self.error(
                node,
                f"names starting with __ ('{name[:40]}') are not part of the language",
                "unsupported",
            )

    def name(self, node: ast.Name) -> ir.Expr:
        name = node.id
        self.check_name(node, name)
        if name in self.loop_vars:
            return ir.Name(name, self.span(node))  # the build reads it as a constant
        if name in FUNCTIONS:
            raise self.error(node, f"'{name}' is a function: call it, as in {name}(…)")
        if name in self.label_names and name not in self.assigned and name not in self.free:
            self.free.append(name)
        elif name not in self.assigned and name not in self.free:
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
            if (
                isinstance(n, ast.Constant)
                and isinstance(n.value, int | float)
                and not isinstance(n.value, bool)
            ):
                return self.constant(n).value  # type: ignore[union-attr]
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

    def attribute(self, node: ast.Attribute) -> ir.Expr:
        function = ATTRIBUTES.get(node.attr)  # x.T
        if function is not None:
            return ir.Call(function, (self.expr(node.value),), (), self.span(node), self.span(node))
        if node.attr in METHODS:
            raise self.error(
                node, f".{node.attr} is a method: call it, as in x.{node.attr}()", "unsupported"
            )
        raise self.error(
            node,
            f"attribute access (.{node.attr}) is not part of the language; "
            "only methods such as .sum(), .tanh() and .T",
            "attribute",
        )

    def subscript(self, node: ast.Subscript) -> ir.Expr:
        value = self.expr(node.value)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        key: list[ir.Static | ir.SSlice] = []
        for part in parts:
            if isinstance(part, ast.Slice):
                key.append(
                    ir.SSlice(
                        None if part.lower is None else self.static(part.lower),
                        None if part.upper is None else self.static(part.upper),
                        None if part.step is None else self.static(part.step),
                    )
                )
            else:
                key.append(self.static(part))
        return ir.Index(value, tuple(key), self.span(node))
