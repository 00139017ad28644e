"""Joining values: cat (NumPy's concatenate) along an axis that exists, and stack along a new
one. Each takes any number of inputs, given in the program as one list: `cat([a, b], dim=0)`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.autograd.ops.base import Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import apply
from engine.autograd.ops.shapes import OpError, shape_text
from engine.autograd.value import Value


def _axis(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise OpError("axis_out_of_range", "axis", what=what, axis=axis, ndim=ndim)
    return axis % ndim


class Cat(Op):
    """f(x₀, …, xₙ₋₁) = the xᵢ joined end to end along `axis` (their other axes equal);
    x̄ᵢ += ū's slice where xᵢ sits along that axis."""

    name, symbol = "cat", "cat"
    rules = ("ū's slice where {0} sits",)
    arity, function, keywords = 0, "cat", ("axis",)  # arity 0: any number, written as a list
    jvp_rule, saved, grad_fn_name = "cat({all})", (), "CatBackward0"
    torch_name, jax_name = "torch.cat", "jnp.concatenate"

    def __init__(self, axis: int = 0, count: int = 1) -> None:
        self.axis = axis
        # One rule per input, each naming its own input (the trace writes one per edge).
        self.rules = tuple(f"ū's slice where {{{i}}} sits" for i in range(count))  # type: ignore[misc,assignment]

    def params(self) -> dict[str, Any]:
        return {"axis": self.axis}

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        if not shapes:
            raise OpError("join_nothing", "arguments", name=self.name)
        first = shapes[0]
        if not first:
            raise OpError("join_scalars", "shape", name=self.name)
        axis = _axis(self.axis, len(first), self.name)
        for s in shapes[1:]:
            if len(s) != len(first) or any(
                a != b for i, (a, b) in enumerate(zip(s, first, strict=True)) if i != axis
            ):
                raise OpError(
                    "cat_shapes", "shape", name=self.name, axis=self.axis,
                    a=shape_text(first), b=shape_text(s),
                )  # fmt: skip
        total = sum(s[axis] for s in shapes)
        return (*first[:axis], total, *first[axis + 1 :])

    def compute(self, *arrays: Array) -> Array:
        self.out_shape(*(a.shape for a in arrays))
        return np.concatenate(arrays, axis=self.axis)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(*t)  # linear: the op itself, on the tangents

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        axis = self.axis % len(out.shape)
        grads: list[Any] = []
        start = 0
        for x, need in zip(ins, needs, strict=True):
            stop = start + x.shape[axis]
            key = (slice(None),) * axis + (slice(start, stop),)
            grads.append(g[key] if need else None)
            start = stop
        return tuple(grads)


class Stack(Op):
    """f(x₀, …, xₙ₋₁) = the xᵢ (all of one shape) side by side along a new axis `axis`;
    x̄ᵢ += ū[…, i, …], its i-th entry along that axis."""

    name, symbol = "stack", "stack"
    rules = ("ū's entry where {0} sits",)
    arity, function, keywords = 0, "stack", ("axis",)  # arity 0: any number, written as a list
    jvp_rule, saved, grad_fn_name = "stack({all})", (), "StackBackward0"
    torch_name, jax_name = "torch.stack", "jnp.stack"

    def __init__(self, axis: int = 0, count: int = 1) -> None:
        self.axis = axis
        self.rules = tuple(f"ū's entry where {{{i}}} sits" for i in range(count))  # type: ignore[misc,assignment]

    def params(self) -> dict[str, Any]:
        return {"axis": self.axis}

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        if not shapes:
            raise OpError("join_nothing", "arguments", name="stack")
        first = shapes[0]
        for s in shapes[1:]:
            if s != first:
                raise OpError("stack_shapes", "shape", a=shape_text(first), b=shape_text(s))
        axis = _axis(self.axis, len(first) + 1, "stack")
        return (*first[:axis], len(shapes), *first[axis:])

    def compute(self, *arrays: Array) -> Array:
        self.out_shape(*(a.shape for a in arrays))
        return np.stack(arrays, axis=self.axis)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(*t)  # linear: the op itself, on the tangents

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        axis = self.axis % len(out.shape)
        return tuple(
            g[(slice(None),) * axis + (i,)] if need else None for i, need in enumerate(needs)
        )


def cat(xs: Sequence[Any], axis: int = 0) -> Value:
    return apply(Cat(axis, len(xs)), *xs)


def stack(xs: Sequence[Any], axis: int = 0) -> Value:
    return apply(Stack(axis, len(xs)), *xs)
