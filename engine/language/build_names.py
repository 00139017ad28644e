"""The build's part for code as students already write it: the numbers a value's shape gives
(`x.shape[0]`, `*x.shape`), index lists (`p[range(N), y]`, a gather), joins (cat, stack),
clamp, ranges of fractions (`arange(0, 1, 0.25)`, `linspace`) and PyTorch's constant tensors
(`const(…)` of a literal: one node). build.Builder is the whole; each limit is checked before
the work it guards, as there.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.autograd import ops
from engine.autograd.value import Span, Value
from engine.language import ir
from engine.language.nodes import NodeMaker

CONSTRUCTED = ("randn", "rand", "zeros", "ones", "full", "arange", "linspace")


class NamesBuilder(NodeMaker):
    """What build.Builder adds for shapes, index lists and the newer names."""

    # build.Builder's, used here.
    def expr(self, e: ir.Expr, leaf_name: str | None = None) -> Any:
        raise NotImplementedError

    def value(self, e: ir.Expr) -> Value:
        raise NotImplementedError

    def name(self, e: ir.Name) -> Any:
        raise NotImplementedError

    def static(self, s: ir.Static) -> int:
        raise NotImplementedError

    def key_part(self, k: ir.Static | ir.SSlice, span: Span) -> int | slice:
        raise NotImplementedError

    # --- calls -------------------------------------------------------------------------------
    def more_call(self, e: ir.Call, leaf_name: str | None) -> Value | None:
        """The value of a call this part builds, or None for build.Builder's own."""
        f = e.func
        kwargs = dict(e.kwargs)
        if f in ("const", "detach"):
            arg = e.args[0]
            literal = isinstance(arg, ir.Num | ir.Array) or (
                isinstance(arg, ir.Call) and arg.func in CONSTRUCTED
            )
            # torch.tensor([1.0, 2.0]): one constant node, not a leaf and a copy of it
            return self.expr(arg) if literal else None  # type: ignore[arg-type]
        if f in ("cat", "stack"):
            items = e.args[0]
            assert isinstance(items, ir.Items)
            values = tuple(self.value(x) for x in items.items)
            axis = self.static(kwargs["axis"]) if "axis" in kwargs else 0  # type: ignore[arg-type]
            cls = ops.Cat if f == "cat" else ops.Stack
            return self.apply(cls(axis, len(values)), values, e.span)
        if f == "clamp":
            x = self.value(e.args[0])  # type: ignore[arg-type]
            return self.apply(ops.Clamp(kwargs["min"], kwargs["max"]), (x,), e.span)  # type: ignore[arg-type]
        if f in ("arange", "linspace"):
            return self.spaced(e, leaf_name)
        return None

    def range_number(self, arg: Any) -> float:
        return arg.value if isinstance(arg, ir.Num) else float(self.static(arg.value))

    def spaced(self, e: ir.Call, leaf_name: str | None) -> Value:
        """arange(stop), arange(start, stop[, step]) and linspace(start, stop, n), as NumPy."""
        if e.func == "linspace":
            start, stop = (self.range_number(a) for a in e.args[:2])
            count = self.static(e.args[2].value)  # type: ignore[union-attr,arg-type]
            if count < 0:
                raise self.error(e.span, f"linspace needs a count ≥ 0, not {count}", "shape")
            self.check_shape((count,), e.span)
            data = np.linspace(start, stop, count)
        else:
            bounds = [self.range_number(a) for a in e.args]
            start, stop, step = (
                (0.0, bounds[0], 1.0)
                if len(bounds) == 1
                else (bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else 1.0)
            )
            if step == 0:
                raise self.error(e.span, "arange's step cannot be 0", "arguments")
            span = (stop - start) / step
            if not math.isfinite(span):
                raise self.error(e.span, "arange would make too many numbers", "too_large")
            self.check_shape((max(0, math.ceil(span)),), e.span)
            data = np.arange(start, stop, step, dtype=np.float64)
        kind = "leaf" if leaf_name else "const"
        return self.new_node(data, e.span, kind=kind, name=leaf_name)

    # --- shapes as numbers -----------------------------------------------------------------
    def shape_of(self, name: str, span: Span) -> tuple[int, ...]:
        found = self.name(ir.Name(name, span))
        if isinstance(found, Value):
            return tuple(found.data.shape)
        labels = found.labels  # class labels: an int, or a list of them
        return (len(labels),) if isinstance(labels, tuple) else ()

    def shape_static(self, s: ir.SShape) -> int:
        shape = self.shape_of(s.name, s.span)
        if s.axis is None:
            raise self.error(
                s.span, f"{s.name}.shape is several numbers; one is needed here", "static"
            )
        axis = self.static(s.axis)
        if not -len(shape) <= axis < len(shape):
            what = "a scalar, which has no length" if not shape else f"of shape {shape}"
            raise self.error(s.span, f"{s.name} is {what}: it has no axis {axis}", "index")
        return shape[axis]

    def sizes(self, parts: tuple[ir.Static, ...]) -> tuple[int, ...]:
        """Whole numbers of a shape, `*x.shape` among them standing for all of x's sizes."""
        out: list[int] = []
        for p in parts:
            if isinstance(p, ir.SShape) and p.axis is None:
                out.extend(self.shape_of(p.name, p.span))
            else:
                out.append(self.static(p))
        return tuple(out)

    def int_of(self, e: ir.IntOf) -> Value:
        return self.new_node(np.float64(self.static(e.value)), e.span, kind="const")

    # --- indexes -----------------------------------------------------------------------------
    def index(self, e: ir.Index) -> Value:
        """x[key]: with only ints and slices a view (Index), with index lists a gather."""
        key = tuple(self.index_part(k, e.span) for k in e.key)
        x = self.value(e.value)
        if any(isinstance(k, tuple) for k in key):
            return self.apply(ops.Gather(key), (x,), e.span)
        return self.apply(ops.Index(key), (x,), e.span)  # type: ignore[arg-type]

    def index_part(self, k: ir.IndexPart, span: Span) -> int | slice | tuple[int, ...]:
        if isinstance(k, ir.SList):
            return tuple(self.static(i) for i in k.items)
        if isinstance(k, ir.SRange):
            start, stop, step = (self.static(p) for p in (k.start, k.stop, k.step))
            if step == 0:
                raise self.error(k.span, "range() step cannot be 0", "index")
            count = max(0, (stop - start + step - (1 if step > 0 else -1)) // step)
            if count > self.limits.max_tensor_elements:
                raise self.error(
                    k.span,
                    f"this range has {count:,} indices; the limit is "
                    f"{self.limits.max_tensor_elements:,} (max_tensor_elements)",
                    "too_large",
                    limit="max_tensor_elements",
                )
            return tuple(range(start, stop, step))
        if isinstance(k, ir.Name):
            return self.named_index(k)
        return self.key_part(k, span)

    def named_index(self, k: ir.Name) -> int | tuple[int, ...]:
        """A name bound to labels (or to whole numbers) as an index."""
        found = self.name(k)
        if not isinstance(found, Value):
            return found.labels  # type: ignore[no-any-return]
        data = np.asarray(found.data)
        if found.requires_grad or data.ndim > 1 or not np.all(np.mod(data, 1) == 0):
            raise self.error(
                k.span,
                f"'{k.id}' is not whole numbers, so it cannot index: an index is an int "
                "or a list of ints",
                "index",
            )
        return int(data) if data.ndim == 0 else tuple(int(v) for v in data)
