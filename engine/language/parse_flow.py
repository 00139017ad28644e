"""Control flow as IR: `if`/`elif`/`else`, `while`, `for` over lists, zip and enumerate,
comprehensions, conditions, `x += e`, `a, b = …`, lists of values, and names read as whole
numbers (`range(n)`). What each decides is left to the run (run_flow.py): the parser only
checks the shape of the code and where names come from.

The scopes a name can live in are kept here too: a function's own names (parse_functions.py
pushes them), a comprehension's variables, then the program's.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from engine.errors import ProgramError
from engine.language import flow_ir as fx
from engine.language import ir
from engine.language.calls import CallParser
from engine.language.vocabulary import FUNCTIONS

COMPARISONS = {
    ast.Lt: "<",
    ast.Gt: ">",
    ast.LtE: "<=",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}
AUGMENTED = {ast.Add: ast.Add, ast.Sub: ast.Sub, ast.Mult: ast.Mult, ast.Div: ast.Div}


@dataclass
class NameScope:
    """The names of one function (kind "def" or "lambda") or comprehension ("comp")."""

    kind: str
    name: str
    locals: set[str]
    assigned: set[str] = field(default_factory=set)


def assigned_in(body: list[ast.stmt]) -> set[str]:
    """The names a block binds (assignments, loop targets, nested defs), not looking inside
    nested functions: a function's own names, as Python decides them."""
    found: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef):
            found.add(node.name)
            continue
        if isinstance(node, ast.Lambda | ast.ListComp | ast.GeneratorExp):
            continue
        if isinstance(node, ast.Assign | ast.AugAssign | ast.For):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                found.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        stack.extend(ast.iter_child_nodes(node))
    return found


class FlowParser(CallParser):
    """Statements that decide, repeat and unpack (parse.Parser is the whole)."""

    def init_flow(self, int_names: frozenset[str]) -> None:
        self.scopes: list[NameScope] = []
        self.int_names = int_names  # known from a first reading (parse.parse)
        self.int_reads: set[str] = set()  # names read as whole numbers in this reading
        self.deferred: list[tuple[str, ProgramError]] = []
        self.functions: set[str] = set()  # names bound to functions anywhere
        self.iter_names: set[str] = set()  # names looped over: a list bound to one stays a list
        self.local_only: set[str] = set()  # names bound only inside functions
        self.list_names: set[str] = set()  # names bound to a list of values (not a tensor)
        self.int_sources: dict[str, set[str]] = {}  # name -> names its int value reads
        self.loop_depth = 0

    def block(self, stmts: list[ast.stmt], top: bool = False) -> tuple[ir.Stmt, ...]:
        """A block's statements as IR (parse.Parser)."""
        raise NotImplementedError

    # --- where names live --------------------------------------------------------------------
    def in_function(self) -> bool:
        return any(s.kind != "comp" for s in self.scopes)

    def bind(self, name: str) -> None:
        """`name` is assigned here: in the innermost function, else in the program."""
        for scope in reversed(self.scopes):
            if scope.kind != "comp":
                scope.assigned.add(name)
                return
        self.assigned.add(name)

    def local_scope(self, name: str) -> NameScope | None:
        for scope in reversed(self.scopes):
            if name in scope.locals:
                return scope
        return None

    def known(self, name: str) -> bool:
        """Can `name` be read here (a local, or a name of the program assigned by now)?"""
        if name in self.loop_vars or self.local_scope(name) is not None:
            return True
        if self.in_function():
            return name in self.every_assigned
        return name in self.assigned

    def static(self, node: ast.AST) -> ir.Static:
        """A whole number; a name is read as one when the run binds it to an int (`n = 3`
        with `range(n)`, a loop's or enumerate's counter, a function's argument)."""
        if isinstance(node, ast.Name) and node.id not in self.loop_vars and self.known(node.id):
            self.int_reads.add(node.id)
            return ir.SVar(node.id, self.span(node))
        return super().static(node)

    # --- statements ----------------------------------------------------------------------------
    def flow_statement(self, node: ast.stmt) -> ir.Stmt | None:
        """The statement as IR if it is one of control flow's, else None."""
        if isinstance(node, ast.If):
            return fx.If(
                self.condition(node.test), self.block(node.body), self.orelse(node), self.span(node)
            )
        if isinstance(node, ast.While):
            if node.orelse:
                raise self.error(node, "a while loop cannot have an else block", "unsupported")
            test = self.condition(node.test)
            return fx.While(test, self.loop_body(node.body), self.span(node))
        if isinstance(node, ast.For) and not is_range(node.iter):
            return self.for_each(node)
        if isinstance(node, ast.AugAssign):
            return self.augmented(node)
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple | ast.List):
            return self.unpack(node)
        if isinstance(node, ast.Break | ast.Continue):
            word = "break" if isinstance(node, ast.Break) else "continue"
            if not self.loop_depth:
                raise self.error(node, f"{word} can only stand inside a loop", "unsupported")
            return fx.Jump(word, self.span(node))
        if isinstance(node, ast.Pass):
            return fx.Jump("pass", self.span(node))
        return None

    def orelse(self, node: ast.If) -> tuple[ir.Stmt, ...]:
        return self.block(node.orelse) if node.orelse else ()

    def loop_body(self, body: list[ast.stmt]) -> tuple[ir.Stmt, ...]:
        self.loop_depth += 1
        try:
            return self.block(body)
        finally:
            self.loop_depth -= 1

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
            body = self.loop_body(node.body)  # break and continue may stand here
        finally:
            self.loop_vars.pop()
        return ir.Loop(var, start, stop, step, body, self.span(node))

    def for_each(self, node: ast.For) -> fx.ForEach:
        if node.orelse:
            raise self.error(node, "a for loop cannot have an else block", "unsupported")
        it = self.iterable(node.iter)
        target = self.target(node.target)
        for name in fx.target_names(target):
            self.bind(name)
        return fx.ForEach(target, it, self.loop_body(node.body), self.span(node))

    def target(self, node: ast.AST) -> fx.Target:
        """A loop's or an assignment's names: `x`, `i, v`, `i, (w, x)`."""
        if isinstance(node, ast.Name):
            self.check_name(node, node.id)
            if node.id in FUNCTIONS or node.id in self.functions:
                raise self.error(node, f"'{node.id}' is a function name; choose another name")
            if node.id in self.loop_vars:
                raise self.error(
                    node, f"'{node.id}' is the loop variable; it cannot be assigned inside its loop"
                )
            return node.id
        if isinstance(node, ast.Tuple | ast.List) and node.elts:
            return tuple(self.target(e) for e in node.elts)
        raise self.error(node, "only names can be assigned: name = …, or a, b = …")

    def augmented(self, node: ast.AugAssign) -> ir.Assign:
        """`x += e` is `x = x + e`: a new node, as any assignment makes."""
        op = AUGMENTED.get(type(node.op))
        if op is None or not isinstance(node.target, ast.Name):
            raise self.error(
                node,
                "only x += e, x -= e, x *= e and x /= e, on a name, are part of the language",
                "unsupported",
            )
        read = ast.Name(id=node.target.id, ctx=ast.Load())
        ast.copy_location(read, node.target)
        value = ast.BinOp(left=read, op=op(), right=node.value)
        ast.copy_location(value, node)
        assign = ast.Assign(targets=[node.target], value=value)
        ast.copy_location(assign, node)
        return self.assign_statement(assign)

    def assign_statement(self, node: ast.Assign) -> ir.Assign:
        """`name = e` (parse.Parser)."""
        raise NotImplementedError

    def assign_value(self, target: str, value: ast.expr) -> ir.Expr | ir.StaticArg:
        """What `target = value` binds: an int for a name read as a whole number, a list for
        a list of values (or one looped over), else a value."""
        if target in self.int_names:
            try:
                return ir.StaticArg(self.static(value), self.span(value))
            except ProgramError:
                pass
        if (
            isinstance(value, ast.List | ast.Tuple)
            and value.elts
            and (target in self.iter_names or not self.all_numbers(value))
        ):
            return self.display(value)
        parses = not self.int_names and self.static_parses(target, value)
        try:
            return self.expr(value)
        except ProgramError as err:
            # `n = 10 // 3` is a whole number, not a value: fine if n is read as one (which a
            # first reading learns only later).
            if not parses:
                raise
            self.deferred.append((target, err))
            return ir.Num(0.0, self.span(value))

    def static_parses(self, target: str, value: ast.expr) -> bool:
        """Would `value` read as a whole number? Keeps the names it would read as target's
        sources (int_sources), without counting them as read."""
        before = set(self.int_reads)
        try:
            self.static(value)
        except ProgramError:
            return False
        finally:
            read, self.int_reads = self.int_reads - before, before
        self.int_sources.setdefault(target, set()).update(read)
        return True

    def unpack(self, node: ast.Assign) -> fx.Unpack:
        if len(node.targets) != 1:
            raise self.error(node, "assign to one name at a time: name = expression")
        value = node.value
        if isinstance(value, ast.Tuple | ast.List) and not self.all_numbers(value):
            parsed: ir.Expr = self.display(value)
        elif isinstance(value, ast.Tuple):  # a, b = 1.0, 2.0: one leaf each
            parsed = fx.ListExpr(tuple(self.expr(e) for e in value.elts), self.span(value), True)  # type: ignore[assignment]
        else:
            parsed = self.expr(value)
        target = self.target(node.targets[0])
        for name in fx.target_names(target):
            self.bind(name)
        return fx.Unpack(target, parsed, self.span(node))

    # --- conditions ----------------------------------------------------------------------------
    def condition(self, node: ast.AST) -> fx.Cond:
        """What `if`, `while` and `… if … else …` decide on: comparisons of numbers joined by
        and/or/not, or a value that is one number (true unless 0)."""
        if isinstance(node, ast.Compare):
            ops = []
            for op in node.ops:
                if type(op) not in COMPARISONS:
                    raise self.error(
                        node,
                        "only < > <= >= == != compare values here (not in, is, …)",
                        "unsupported",
                    )
                ops.append(COMPARISONS[type(op)])
            rights = tuple(self.expr(c) for c in node.comparators)
            return fx.Compare(self.expr(node.left), tuple(ops), rights, self.span(node))
        if isinstance(node, ast.BoolOp):
            word = "and" if isinstance(node.op, ast.And) else "or"
            values = tuple(self.condition(v) for v in node.values)
            return fx.BoolOp(word, values, self.span(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return fx.Not(self.condition(node.operand), self.span(node))
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return fx.Bool(node.value, self.span(node))
        return self.expr(node)

    def if_expression(self, node: ast.IfExp) -> ir.Expr:
        test = self.condition(node.test)
        return fx.IfExp(test, self.expr(node.body), self.expr(node.orelse), self.span(node))  # type: ignore[return-value]

    def not_a_value(self, node: ast.AST) -> ProgramError:
        """A comparison or and/or where a value is needed."""
        if isinstance(node, ast.Compare):
            return self.error(
                node,
                "a comparison can only be a condition (if …:, while …:, a if … else b) or "
                "shown (print(a == b), or the program's last line), not a value to compute with",
                "unsupported",
            )
        return self.error(
            node, "and/or and not can only join conditions: if …:, while …:", "unsupported"
        )

    # --- lists, iterables, comprehensions ------------------------------------------------------
    def all_numbers(self, node: ast.AST) -> bool:
        """Is this list display only numbers (a tensor literal)?"""
        if isinstance(node, ast.List | ast.Tuple):
            return bool(node.elts) and all(self.all_numbers(e) for e in node.elts)
        if self.is_constant_number(node):  # spelling_more.py: `-math.pi`, `2 * np.pi`
            return True
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            node = node.operand
        return isinstance(node, ast.Constant) and isinstance(node.value, int | float)  # or bool

    def display(self, node: ast.List | ast.Tuple) -> ir.Expr:
        """A list of values known while the program runs (not a tensor): `[a, b]`."""
        items = tuple(self.expr(e) for e in node.elts)
        return fx.ListExpr(items, self.span(node), isinstance(node, ast.Tuple))  # type: ignore[return-value]

    def iterable(self, node: ast.AST) -> ir.Expr:
        """What a loop or comprehension runs over: a list written out, range(…), zip(…),
        enumerate(…), a comprehension, or a name bound to a list or a tensor (its rows)."""
        if isinstance(node, ast.List | ast.Tuple):
            return self.display(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            f, args = node.func.id, node.args
            if f == "zip" and args:
                return fx.Zip(tuple(self.iterable(a) for a in args), self.span(node))  # type: ignore[return-value]
            if f == "enumerate" and len(args) in (1, 2):
                first = self.static_value(args[1]) if len(args) == 2 else 0
                return fx.Enumerate(self.iterable(args[0]), first, self.span(node))  # type: ignore[return-value]
            if f == "range" and 1 <= len(args) <= 3:
                b = [self.static(a) for a in args]
                start, stop, step = (
                    (ir.SInt(0), b[0], ir.SInt(1))
                    if len(b) == 1
                    else (b[0], b[1], b[2] if len(b) == 3 else ir.SInt(1))
                )
                return fx.Range(start, stop, step, self.span(node))  # type: ignore[return-value]
            if f in ("zip", "enumerate", "range"):
                raise self.error(node, f"{f}(…) takes other arguments here", "arguments")
        return self.expr(node)

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> ir.Expr:
        gens: list[fx.Generator] = []
        scope = NameScope("comp", "comprehension", set())
        pushed = 0
        try:
            for g in node.generators:
                if g.is_async:
                    raise self.error(node, "async for is not part of the language", "unsupported")
                it = self.iterable(g.iter)  # read before its own names exist, as Python does
                target = self.target(g.target)
                scope = NameScope("comp", "comprehension", set(fx.target_names(target)))
                self.scopes.append(scope)
                pushed += 1
                ifs = tuple(self.condition(c) for c in g.ifs)
                gens.append(fx.Generator(target, it, ifs))
            elt = self.expr(node.elt)
        finally:
            del self.scopes[len(self.scopes) - pushed :]
        gen = isinstance(node, ast.GeneratorExp)
        return fx.ListComp(elt, tuple(gens), self.span(node), gen)  # type: ignore[return-value]


def is_range(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
    )
