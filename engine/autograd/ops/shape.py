"""Views: reshape, transpose and indexing with constant ints and slices (the elements stay,
their arrangement changes)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.autograd.ops.base import Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import apply
from engine.autograd.ops.shapes import OpError, shape_text
from engine.autograd.value import Value


class Reshape(Op):
    """f(x) = x with a new shape (same elements);  x̄ += ū reshaped back."""

    name, symbol, rules = "reshape", "reshape", ("ū reshaped to {0}'s shape",)
    function, method = "reshape", True

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = tuple(shape)

    def params(self) -> dict[str, Any]:
        return {"shape": list(self.shape)}

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        """The target with its -1 worked out, as NumPy would: a reshape of an empty value can
        ask for any shape with a 0 in it, so the target is checked before NumPy makes it."""
        (shape,) = shapes
        size = math.prod(shape)
        target = self.shape
        known = math.prod(n for n in target if n != -1)
        unknown = target.count(-1)
        if (
            unknown > 1
            or any(n < -1 for n in target)
            or (unknown == 1 and (known == 0 or size % known))
            or (unknown == 0 and known != size)
        ):
            raise OpError(
                f"cannot reshape {shape_text(shape)} ({size} elements) into {target}", "shape"
            )
        return tuple(size // known if n == -1 else n for n in target)

    def compute(self, x: Array) -> Array:
        return np.reshape(x, self.out_shape(x.shape)).copy()

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (m.reshape(g, ins[0].shape),)


class Transpose(Op):
    """f(x) = x with its axes permuted (reversed by default);
    x̄ += ū with the inverse permutation."""

    name, symbol, rules = "transpose", "ᵀ", ("ū transposed back",)
    operator, function, keywords, method = ".T", "transpose", ("axes",), True

    def __init__(self, axes: tuple[int, ...] | None = None) -> None:
        self.axes = None if axes is None else tuple(axes)

    def params(self) -> dict[str, Any]:
        return {"axes": None if self.axes is None else list(self.axes)}

    def permutation(self, ndim: int) -> tuple[int, ...]:
        if self.axes is None:
            return tuple(reversed(range(ndim)))
        if sorted(a % ndim if ndim else a for a in self.axes) != list(range(ndim)):
            raise OpError(f"transpose: axes {self.axes} are not a permutation of {ndim} dims")
        return tuple(a % ndim for a in self.axes)

    def compute(self, x: Array) -> Array:
        return np.transpose(x, self.permutation(x.ndim)).copy()

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        perm = self.permutation(ins[0].ndim)
        return (m.transpose(g, tuple(int(i) for i in np.argsort(perm))),)


class Index(Op):
    """f(x) = x[key] with constant ints and slices;  x̄ += ū scattered into zeros of x's shape."""

    name, symbol, rules = "index", "[]", ("ū scattered into zeros of {0}'s shape",)
    operator = "[]"

    def __init__(self, key: tuple[int | slice, ...]) -> None:
        self.key = tuple(constant_index(k) for k in key)

    def params(self) -> dict[str, Any]:
        return {"key": index_text(self.key)}

    def compute(self, x: Array) -> Array:
        if len(self.key) > x.ndim:
            raise OpError(
                f"too many indices: {len(self.key)} for a value of shape {shape_text(x.shape)}",
                "index",
            )
        for k, n in zip(self.key, x.shape, strict=False):
            if isinstance(k, int) and not -n <= k < n:
                raise OpError(f"index {k} is out of range for an axis of length {n}", "index")
        return np.array(x[self.key])

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (m.scatter(g, ins[0].shape, self.key),)


def constant_index(k: Any) -> int | slice:
    """An int or a slice of ints; anything else (lists, arrays, None, ...) is refused."""
    if isinstance(k, slice):
        parts = [None if p is None else constant_index(p) for p in (k.start, k.stop, k.step)]
        return slice(*parts)
    if isinstance(k, int | np.integer) and not isinstance(k, bool):
        return int(k)
    raise OpError("only constant ints and slices can index a value", "index")


def index_text(key: tuple[int | slice, ...]) -> str:
    def one(k: int | slice) -> str:
        if isinstance(k, int):
            return str(k)
        text = ("" if k.start is None else str(k.start)) + ":"
        text += "" if k.stop is None else str(k.stop)
        return text + ("" if k.step is None else f":{k.step}")

    return ", ".join(one(k) for k in key)


def reshape(x: Any, shape: Sequence[int]) -> Value:
    return apply(Reshape(tuple(shape)), x)


def transpose(x: Any, axes: Sequence[int] | None = None) -> Value:
    return apply(Transpose(None if axes is None else tuple(axes)), x)


def index(x: Any, key: Any) -> Value:
    return apply(Index(key if isinstance(key, tuple) else (key,)), x)
