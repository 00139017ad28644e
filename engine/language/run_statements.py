"""The statements of a program run in order: assignments (with the leaf rule), range loops,
the output, `L.backward()`, `print(…)`, and the dispatch to control flow (run_flow.py) and
functions (run_functions.py). Names are looked up through the scopes of the calls running,
then the loop counters and names of the program. Every statement counts against
max_statements before it runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.value import Span, Value
from engine.language import flow_ir as fx
from engine.language import ir
from engine.language.run_flow import FlowRunner
from engine.language.run_functions import FunctionRunner
from engine.language.run_shown import ShownRunner
from engine.language.runtime import (
    FUNCTION_VALUES,
    Break,
    Closure,
    Continue,
    ListValue,
    Return,
    Scope,
    describe,
    function_name,
    is_number,
)
from engine.language.vocabulary import CONSTRUCTORS

MISSING = object()
# IR kinds that make something other than one node, run here and in the two runners
RUNTIME_KINDS = (
    fx.IfExp, fx.ListExpr, fx.ListComp, fx.ListSum, fx.Lambda, fx.GradOf, fx.FuncRef,
    fx.CallFn, fx.Zip, fx.Enumerate, fx.Range, fx.Shown,
)  # fmt: skip


def constant_only(e: Any) -> bool:
    """Is e made of numbers, lists of numbers and constructors only (`0.01 * randn(2, 3)`)?
    Without torch, a name bound to such an expression is a parameter, as if written out."""
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Num | ir.Array | ir.StaticArg):
            continue
        if isinstance(n, ir.BinOp):
            stack += [n.left, n.right]
        elif isinstance(n, ir.Neg):
            stack.append(n.operand)
        elif isinstance(n, ir.Call) and n.func not in ("grad", "const", "detach"):
            stack += list(n.args)
        else:
            return False
    return True


class StatementRunner(FlowRunner, FunctionRunner, ShownRunner):
    """The statements, the scopes and what a program shows (build.Builder is the whole)."""

    program: ir.Program
    loop_env: dict[str, int]
    statements: int
    output: Value | None
    output_alias: str | None

    def init_statements(self) -> None:
        self.scope = None
        self.calls = []
        self.multiplier = 1
        self.init_shown()  # run_shown.py: backward(), prints, the output they decide

    def expr(self, e: Any, leaf_name: str | None = None) -> Any:
        raise NotImplementedError

    def differentiate(self, output: Value, wrt: Value, span: Span) -> Value:
        raise NotImplementedError

    # --- statements ----------------------------------------------------------------------------
    def count_statement(self, span: Span | None) -> None:
        self.statements += 1
        if self.statements > self.limits.max_statements:
            raise self.error(
                span,
                f"the program runs more than {self.limits.max_statements:,} statements once "
                "its loops are unrolled and its calls inlined (max_statements)",
                "too_large",
                limit="max_statements",
            )

    def block(self, body: tuple[ir.Stmt, ...], multiplier: int) -> None:
        outer = self.multiplier
        self.multiplier = multiplier
        try:
            for stmt in body:
                self.count_statement(stmt.span)
                self.statement(stmt)
        finally:
            self.multiplier = outer

    def statement(self, stmt: Any) -> None:
        if isinstance(stmt, ir.Assign):
            self.assign(stmt)
        elif isinstance(stmt, ir.Output):
            self.output_statement(stmt)
        elif isinstance(stmt, ir.Seed):
            self.rng = np.random.default_rng(stmt.value)
        elif isinstance(stmt, ir.Loop):
            self.loop(stmt, self.multiplier)
        elif isinstance(stmt, fx.If):
            self.block(stmt.body if self.truth(stmt.test) else stmt.orelse, self.multiplier)
        elif isinstance(stmt, fx.While):
            self.while_loop(stmt)
        elif isinstance(stmt, fx.ForEach):
            self.for_each(stmt)
        elif isinstance(stmt, fx.Unpack):
            self.unpack(stmt)
        elif isinstance(stmt, fx.FuncDef):
            self.define(stmt)
        elif isinstance(stmt, fx.Return):
            raise Return(None if stmt.value is None else self.any(stmt.value))
        elif isinstance(stmt, fx.Jump):
            if stmt.word == "break":
                raise Break
            if stmt.word == "continue":
                raise Continue
        elif isinstance(stmt, fx.Backward):
            self.backward(stmt)
        elif isinstance(stmt, fx.Print):
            self.print_statement(stmt)
        elif isinstance(stmt, fx.ShownLine):
            self.shown_line(stmt)

    def assign(self, stmt: ir.Assign) -> None:
        value = self.assigned_value(stmt.name, stmt.expr)
        if isinstance(value, Closure) and value.name == "lambda":
            value.name = stmt.name  # `f = lambda …` is f in messages
        if isinstance(value, Value):
            if value.name is None and not isinstance(stmt.expr, ir.Name):
                value.name = stmt.name  # `u = x` only gives x a second name: no new node
            if self.scope is None:
                self.output = value
                alias = isinstance(stmt.expr, ir.Name) or value.name != stmt.name
                self.output_alias = stmt.name if alias else None
        self.set_var(stmt.name, value)

    def assigned_value(self, target: fx.Target, e: Any) -> Any:
        """What `target = e` binds: an int for a name read as one, a leaf for a literal, a
        constructor or (without torch) an expression of them, at the program's level."""
        if isinstance(e, ir.StaticArg):
            assert not isinstance(e.value, tuple)
            return self.static(e.value)
        if isinstance(e, ir.Labels):
            return self.expr(e)
        leaf = target if self.scope is None and isinstance(target, str) else None
        plain = isinstance(e, ir.Num | ir.Array) or (
            isinstance(e, ir.Call) and e.func in CONSTRUCTORS
        )
        # Without torch, constants only; with torch, where requires_grad_() asks (PyTorch's
        # leaf: the value computed, its own grad, nothing before it kept).
        made_leaf = not self.program.torch_mode or leaf in self.program.leaf_names
        if leaf and not plain and made_leaf and constant_only(e):
            return self.constant_leaf(e, leaf)
        if isinstance(e, (ir.Name, *RUNTIME_KINDS)):
            found = self.any(e)  # a number (a loop's counter) bound to a name: a constant
            return self.as_value(found, e.span) if is_number(found) else found
        return self.expr(e, leaf_name=leaf)

    def constant_leaf(self, e: Any, name: str) -> Value:
        """`W = 0.01 * randn(2, 3)`: computed, then one leaf holding the result (the
        constants it was made from are not kept: nothing else can read them)."""
        mark, total = len(self.nodes), self.total_elements
        data = self.value(e).data.copy()
        del self.nodes[mark:]
        self.total_elements = total
        span = getattr(e, "span", None)
        return self.new_node(data, span, kind="leaf", name=name)

    def output_statement(self, stmt: ir.Output) -> None:
        node = self.as_value(self.any(stmt.expr), stmt.span, "the output")
        if node.name is None and node.kind != "leaf":
            node.name = "out"
        self.output, self.output_alias = node, None

    def loop(self, stmt: ir.Loop, multiplier: int) -> None:
        start, stop, step = (self.static(s) for s in (stmt.start, stmt.stop, stmt.step))
        if step == 0:
            raise self.error(stmt.span, "range() step cannot be 0")
        # len(range(...)) raises OverflowError past 2**63 - 1 (range(-2**62, 2**62)): count
        # it in Python's unbounded ints instead.
        count = max(0, (stop - start + step - (1 if step > 0 else -1)) // step)
        self.multiplier = multiplier
        self.check_turns(count, stmt.span)
        where = self.loop_env if self.scope is None else self.scope.vars
        for i in range(start, stop, step):
            where[stmt.var] = i
            if not self.turn(stmt.body, multiplier * max(count, 1)):
                break
        if self.scope is None:
            self.loop_env.pop(stmt.var, None)

    # --- names ---------------------------------------------------------------------------------
    def set_var(self, name: str, value: Any) -> None:
        if self.scope is not None:
            self.scope.vars[name] = value
        else:
            self.env[name] = value

    def lookup(self, name: str, span: Span) -> Any:
        """What `name` holds here, or MISSING: the calls' scopes, then the program's."""
        scope = self.scope
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            if name in scope.own:
                raise self.error(
                    span,
                    f"'{name}' is used before it is assigned in {scope.name} (a name a "
                    "function assigns is its own; the program's names are read-only inside)",
                    "unbound",
                )
            scope = scope.parent
        if name in self.loop_env:
            return self.loop_env[name]
        return self.env.get(name, MISSING)

    def int_named(self, s: ir.SVar) -> int:
        """A name read where a whole number is needed: a loop's counter, `n = 3`, a number
        argument."""
        found = self.lookup(s.name, s.span)
        if found is MISSING:
            raise self.error(s.span, f"'{s.name}' only exists inside its loop")
        if isinstance(found, int) and not isinstance(found, bool):
            return found
        if isinstance(found, float) and found.is_integer() and abs(found) <= 2**62:
            return int(found)
        what = "a tensor" if isinstance(found, Value) else describe(found)
        raise self.error(
            s.span,
            f"'{s.name}' holds {what}, but a whole number is needed here (n = 3, or a loop's "
            "counter)",
            "static",
        )

    def any(self, e: Any) -> Any:
        """e's value as the program holds it: a node, a number, a list or a function."""
        if isinstance(e, ir.Name):
            found = self.lookup(e.id, e.span)
            return self.expr(e) if found is MISSING else found
        if isinstance(e, fx.IfExp):
            return self.if_exp(e)
        if isinstance(e, fx.ListExpr):
            return self.list_expr(e)
        if isinstance(e, fx.ListComp):
            return self.comprehension(e)
        if isinstance(e, fx.ListSum):
            items = self.items(e.items, e.span)
            start = None if e.start is None else self.any(e.start)
            return self.list_sum(tuple(items), start, e.span)
        if isinstance(e, fx.Lambda):
            return self.make_lambda(e)
        if isinstance(e, fx.GradOf | fx.FuncRef):
            return self.function_value(e)
        if isinstance(e, fx.CallFn):
            return self.call_function(e)
        if isinstance(e, fx.Zip | fx.Enumerate | fx.Range):
            return ListValue(tuple(self.items(e, e.span)))
        if isinstance(e, fx.Shown):
            return self.item_number(e)  # run_shown.py: x.item(), a number
        return self.expr(e)

    def argument(self, e: Any) -> Any:
        """A call's argument: a number written there stays a number (no node for it)."""
        if isinstance(e, ir.Num):
            return e.value
        return self.any(e)

    def as_value(self, v: Any, span: Span | None, what: str = "") -> Value:
        """v as one node: a number becomes a constant; a list or a function is refused."""
        if isinstance(v, Value):
            return v
        if is_number(v):
            return self.new_node(np.float64(v), span, kind="const")
        what = what or "this"
        if isinstance(v, ListValue):
            raise self.error(
                span,
                f"{what} is {describe(v)}, not one value (a tensor): use stack(…) to make "
                "a tensor of them, or sum(…) to add them",
                "list",
            )
        if isinstance(v, FUNCTION_VALUES):
            name = function_name(v)
            raise self.error(span, f"{what} is the function {name}: call it, as in {name}(…)")
        if v is None:
            raise self.error(span, f"{what} is None: the function returns nothing", "invalid")
        raise self.error(span, f"{what} is {describe(v)}, not a value", "invalid")


__all__ = ["MISSING", "Closure", "Scope", "StatementRunner", "constant_only"]
