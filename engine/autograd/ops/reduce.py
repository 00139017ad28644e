"""Reductions over axes: sum and mean."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.autograd.ops.base import Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import apply
from engine.autograd.ops.shapes import OpError
from engine.autograd.value import Value


def normalise_axes(axis: Any, ndim: int, what: str) -> tuple[int, ...] | None:
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise OpError("axis_out_of_range", "axis", what=what, axis=a, ndim=ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise OpError("axis_repeated", "axis", what=what, axis=str(axis))
    return tuple(sorted(out))


class Sum(Op):
    """f(x) = Σ x over `axis` (all by default);  x̄ += ū broadcast back to x's shape."""

    name, symbol, rules = "sum", "sum", ("ū broadcast to {0}'s shape",)
    function, keywords, method = "sum", ("axis", "keepdims"), True
    jvp_rule, saved = "Σ {d0}", ()
    torch_name, jax_name = "torch.sum", "jnp.sum"

    def __init__(self, axis: Any = None, keepdims: bool = False) -> None:
        self.axis = axis
        self.keepdims = keepdims

    def params(self) -> dict[str, Any]:
        return {"axis": self.axis, "keepdims": self.keepdims}

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(t[0])  # linear: the op itself, on the tangent

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        """SumBackward0 over everything, SumBackward1 over given axes (MeanBackward0, 1)."""
        return f"{type(self).__name__}Backward{0 if self.axis is None else 1}"

    def compute(self, x: Array) -> Array:
        normalise_axes(self.axis, x.ndim, self.name)
        return np.asarray(np.sum(x, axis=self.axis, keepdims=self.keepdims))

    def spread(self, g: Any, x: Any, m: Math) -> Any:
        axes = normalise_axes(self.axis, x.ndim, self.name)
        if axes is not None and not self.keepdims:
            g = m.expand_dims(g, axes)
        elif axes is None and not self.keepdims:
            g = m.reshape(g, (1,) * x.ndim)
        return m.broadcast_to(g, x.shape)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (self.spread(g, ins[0], m),)


class Mean(Sum):
    """f(x) = mean of x over `axis`;  x̄ += ū / n broadcast back (n = elements averaged)."""

    name, symbol, rules = "mean", "mean", ("ū/n broadcast to {0}'s shape",)
    function = "mean"
    jvp_rule = "mean {d0}"
    torch_name, jax_name = "torch.mean", "jnp.mean"

    def compute(self, x: Array) -> Array:
        axes = normalise_axes(self.axis, x.ndim, self.name)
        averaged = math.prod(x.shape if axes is None else [x.shape[a] for a in axes])
        if averaged == 0:
            # A mean of nothing is 0/0 (NumPy warns, then gives NaN): say why instead.
            total = np.sum(x, axis=self.axis, keepdims=self.keepdims)
            if total.size:
                raise OpError("mean_empty", "shape")
            return np.asarray(total)
        return np.asarray(np.mean(x, axis=self.axis, keepdims=self.keepdims))

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        x = ins[0]
        n = x.size // max(out.size, 1) if x.size else 1
        return (self.spread(g, x, m) / float(n),)


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Value:  # noqa: A001
    return apply(Sum(axis, keepdims), x)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Value:
    return apply(Mean(axis, keepdims), x)
