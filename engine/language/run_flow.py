"""Control flow run on the values, as eager PyTorch runs it: each `if` and `while` is decided
on the numbers the program has computed so far, so the graph records only the path taken.
Loops over lists, zip, enumerate and a tensor's rows, comprehensions, unpacking and Python's
sum of a list run here too. Every turn of a loop counts against max_loop_iterations (nested
ones multiplied) and every statement against max_statements, checked before the work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import shape_text
from engine.autograd.value import Span, Value
from engine.language import flow_ir as fx
from engine.language import ir
from engine.language.nodes import NodeMaker
from engine.language.runtime import Break, Continue, ListValue, Scope, describe, is_number

COMPARE = {
    "<": np.less,
    ">": np.greater,
    "<=": np.less_equal,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


class FlowRunner(NodeMaker):
    """Runs if, while, for over lists, comprehensions and unpacking (build.Builder is whole)."""

    scope: Scope | None
    env: dict[str, Any]
    multiplier: int

    # --- what build.Builder provides ----------------------------------------------------------
    def block(self, body: tuple[ir.Stmt, ...], multiplier: int) -> None:
        raise NotImplementedError

    def any(self, e: Any) -> Any:
        raise NotImplementedError

    def value(self, e: Any) -> Value:
        raise NotImplementedError

    def as_value(self, v: Any, span: Span | None, what: str = "") -> Value:
        raise NotImplementedError

    def static(self, s: ir.Static) -> int:
        raise NotImplementedError

    def set_var(self, name: str, value: Any) -> None:
        raise NotImplementedError

    # --- loops ---------------------------------------------------------------------------------
    def check_turns(self, turns: int, span: Span) -> None:
        """Refuse a loop that would run (or has run) more turns than max_loop_iterations."""
        if turns * self.multiplier > self.limits.max_loop_iterations:
            raise self.error(
                span,
                f"this loop would run {turns * self.multiplier:,} times; the limit is "
                f"{self.limits.max_loop_iterations:,} iterations (max_loop_iterations)",
                "too_large",
                limit="max_loop_iterations",
            )

    def turn(self, body: tuple[ir.Stmt, ...], multiplier: int) -> bool:
        """One turn of a loop's body; False when it ended with break."""
        try:
            self.block(body, multiplier)
        except Continue:
            pass
        except Break:
            return False
        return True

    def while_loop(self, stmt: fx.While) -> None:
        turns = 0
        outer = self.multiplier
        while self.truth(stmt.test):
            turns += 1
            self.check_turns(turns, stmt.span)
            if not self.turn(stmt.body, outer):
                break
        self.multiplier = outer

    def for_each(self, stmt: fx.ForEach) -> None:
        items = self.items(stmt.iter, stmt.span)
        outer = self.multiplier
        self.check_turns(len(items), stmt.span)
        for item in items:
            self.bind(stmt.target, item, stmt.span)
            if not self.turn(stmt.body, outer * max(len(items), 1)):
                break
        self.multiplier = outer

    def items(self, e: Any, span: Span) -> list[Any]:
        """What a loop or comprehension runs over, as a list of values."""
        if isinstance(e, fx.Range):
            start, stop, step = (self.static(s) for s in (e.start, e.stop, e.step))
            if step == 0:
                raise self.error(e.span, "range() step cannot be 0")
            count = max(0, (stop - start + step - (1 if step > 0 else -1)) // step)
            self.check_turns(count, e.span)
            return list(range(start, stop, step))
        if isinstance(e, fx.Zip):
            lists = [self.items(a, span) for a in e.args]
            return [ListValue(t, True) for t in zip(*lists, strict=False)]
        if isinstance(e, fx.Enumerate):
            listed = self.items(e.arg, span)
            return [ListValue((e.start + i, v), True) for i, v in enumerate(listed)]
        where = getattr(e, "span", span)
        return self.iterate(self.any(e), where)

    def iterate(self, v: Any, span: Span) -> list[Any]:
        if isinstance(v, ListValue):
            return list(v.items)
        if isinstance(v, Value):
            if v.data.ndim == 0:
                raise self.error(span, "a 0-d tensor (one number) cannot be looped over", "shape")
            self.check_turns(v.data.shape[0], span)
            return [self.apply(ops.Index((i,)), (v,), span) for i in range(v.data.shape[0])]
        raise self.error(span, f"{describe(v)} cannot be looped over", "invalid")

    def bind(self, target: fx.Target, value: Any, span: Span) -> None:
        """Bind a loop's or an assignment's names: one name, or items unpacked in turn."""
        if isinstance(target, str):
            self.set_var(target, value)
            return
        items = self.iterate(value, span) if not isinstance(value, ListValue) else value.items
        if len(items) != len(target):
            raise self.error(
                span,
                f"{len(items)} values cannot be unpacked into {len(target)} names",
                "arguments",
            )
        for t, item in zip(target, items, strict=True):
            self.bind(t, item, span)

    def unpack(self, stmt: fx.Unpack) -> None:
        value = stmt.value
        if isinstance(value, fx.ListExpr) and isinstance(stmt.target, tuple):
            if len(value.items) != len(stmt.target):
                raise self.error(
                    stmt.span,
                    f"{len(value.items)} values cannot be unpacked into {len(stmt.target)} names",
                    "arguments",
                )
            # `a, b = 1.0, 2.0` binds as `a = 1.0; b = 2.0` would (a leaf each), all read first
            made = [
                self.assigned_value(t, e) for t, e in zip(stmt.target, value.items, strict=True)
            ]
            for t, v in zip(stmt.target, made, strict=True):
                self.bind(t, v, stmt.span)
            return
        self.bind(stmt.target, self.any(value), stmt.span)

    def assigned_value(self, target: fx.Target, e: Any) -> Any:
        """What `target = e` makes (build.Builder: the leaf rule)."""
        raise NotImplementedError

    # --- conditions ----------------------------------------------------------------------------
    def truth(self, c: Any) -> bool:
        """A condition decided on the values computed so far."""
        if isinstance(c, fx.Bool):
            return c.value
        if isinstance(c, fx.Not):
            return not self.truth(c.operand)
        if isinstance(c, fx.BoolOp):
            if c.op == "and":
                return all(self.truth(v) for v in c.values)  # stops at the first false one
            return any(self.truth(v) for v in c.values)
        if isinstance(c, fx.Compare):
            raw, raw_e = self.soft(c.left), c.left
            for op, right_e in zip(c.ops, c.rights, strict=True):
                right_raw = self.soft(right_e)
                self.check_comparable(raw, right_raw, c)  # PyTorch compares before bool()
                left = self.condition_number(raw, raw_e)
                right = self.condition_number(right_raw, right_e)
                if not bool(COMPARE[op](left, right)):
                    return False
                raw, raw_e = right_raw, right_e
            return True
        return self.condition_number(self.soft(c), c) != 0

    def check_comparable(self, a: Any, b: Any, c: Any) -> None:
        """Two tensors compared in a condition: shapes that do not broadcast are named as
        such (PyTorch fails there, before it asks for one truth value)."""
        if not (isinstance(a, Value) and isinstance(b, Value)):
            return
        try:
            np.broadcast_shapes(a.data.shape, b.data.shape)
        except ValueError:
            raise self.error(
                getattr(c, "span", None),
                f"cannot compare values of shapes {shape_text(a.data.shape)} and "
                f"{shape_text(b.data.shape)}: they do not broadcast",
                "shape",
            ) from None

    def soft(self, e: Any) -> Any:
        """A condition's operand: a number stays a number (no constant node is made for it)."""
        if isinstance(e, ir.Num):
            return e.value
        return self.any(e)

    def condition_number(self, v: Any, e: Any) -> float:
        """The one number a condition reads, as PyTorch's bool(tensor) does."""
        if is_number(v) or isinstance(v, bool):
            return float(v)
        span = getattr(e, "span", None)
        if isinstance(v, Value):
            if v.data.size == 1:
                return float(v.data.reshape(()))
            raise self.error(
                span,
                f"a condition needs one number, but this is a tensor of shape "
                f"{shape_text(v.data.shape)} (PyTorch: Boolean value of Tensor with more "
                "than one value is ambiguous); compare one element, or use .sum() or .max()",
                "shape",
            )
        if isinstance(v, ListValue):
            return float(bool(v.items))
        raise self.error(span, f"a condition needs a number, not {describe(v)}", "invalid")

    # --- expressions ---------------------------------------------------------------------------
    def if_exp(self, e: fx.IfExp) -> Any:
        return self.any(e.body if self.truth(e.test) else e.orelse)

    def list_expr(self, e: fx.ListExpr) -> ListValue:
        return ListValue(tuple(self.item(i) for i in e.items), e.is_tuple)

    def item(self, e: Any) -> Any:
        """A list's item: a number written in it stays a number until it is used as a value."""
        if isinstance(e, ir.Num):
            return e.value
        return self.any(e)

    def comprehension(self, e: fx.ListComp) -> ListValue:
        out: list[Any] = []
        outer_scope, outer = self.scope, self.multiplier
        scope = Scope({}, outer_scope, frozenset(), "comprehension")
        try:
            self.scope = scope
            self.generate(e, 0, out, 1)
        finally:
            self.scope, self.multiplier = outer_scope, outer
        return ListValue(tuple(out))

    def generate(self, e: fx.ListComp, k: int, out: list[Any], turns: int) -> None:
        """The k-th generator's turns, each running the later ones (a nested loop each)."""
        if k == len(e.generators):
            self.count_statement(e.span)
            out.append(self.any(e.elt))
            return
        g = e.generators[k]
        items = self.items(g.iter, e.span)
        self.check_turns(turns * len(items), e.span)
        for item in items:
            self.bind(g.target, item, e.span)
            if all(self.truth(c) for c in g.ifs):
                self.generate(e, k + 1, out, turns * max(len(items), 1))

    def list_sum(self, items: tuple[Any, ...], start: Any, span: Span) -> Any:
        """Python's sum: `start + a + b + …`, a chain of additions (no leading 0 without a
        start, so the graph holds only what was written)."""
        values = [v for v in items]
        if start is not None:
            values.insert(0, start)
        if not values:
            return 0.0
        total = values[0]
        if len(values) == 1:
            return total
        result = self.as_value(total, span, "sum's item")
        for v in values[1:]:
            result = self.apply(ops.Add(), (result, self.as_value(v, span, "sum's item")), span)
        return result

    def count_statement(self, span: Span | None) -> None:
        raise NotImplementedError
