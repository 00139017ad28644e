"""Integer-array indexing (NumPy's "advanced" indexing): `probs[range(N), y]`, `x[[0, 2]]`
read chosen elements, and the gradient adds back at each index, so an index that repeats
gets the sum of its gradients (np.add.at, not assignment: the classic bug of `out[key] = g`).

Gather and its gradient, ScatterAdd, are each other's derivative. A rule here runs on arrays
(backward) and on graph nodes (grad(), whose Math makes nodes with `apply`): `_run` picks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.autograd.ops.base import Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import apply
from engine.autograd.ops.shapes import OpError, shape_text
from engine.autograd.value import Value

# One part of a key: an int, a slice, or a tuple of ints (an index array, kept hashable).
KeyPart = int | slice | tuple[int, ...]


def key_text(key: tuple[KeyPart, ...]) -> str:
    def one(k: KeyPart) -> str:
        if isinstance(k, tuple):
            return "[" + ", ".join(map(str, k)) + "]"
        if isinstance(k, int):
            return str(k)
        text = ("" if k.start is None else str(k.start)) + ":"
        text += "" if k.stop is None else str(k.stop)
        return text + ("" if k.step is None else f":{k.step}")

    return ", ".join(one(k) for k in key)


def numpy_key(key: tuple[KeyPart, ...]) -> tuple[Any, ...]:
    return tuple(np.asarray(k, dtype=np.intp) if isinstance(k, tuple) else k for k in key)


def check_key(key: tuple[KeyPart, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape x[key] has, or an OpError that says which index does not fit."""
    if len(key) > len(shape):
        raise OpError("too_many_indices", "index", n=len(key), shape=shape_text(shape))
    lengths = {len(k) for k in key if isinstance(k, tuple)}
    if len(lengths - {1}) > 1:
        raise OpError("index_lists", "index", lengths=", ".join(map(str, sorted(lengths))))
    for k, n in zip(key, shape, strict=False):
        for i in k if isinstance(k, tuple) else (k,) if isinstance(k, int) else ():
            if not -n <= i < n:
                raise OpError("index_past_axis", "index", i=i, n=n)
    return np.zeros(shape, dtype=np.bool_)[numpy_key(key)].shape  # type: ignore[no-any-return]


def _run(op: Op, x: Any, m: Math) -> Any:
    """`op` on x as the rule's Math computes: a graph node under grad() (its Math has
    `apply`), else an array."""
    make = getattr(m, "apply", None)
    return make(op, x) if make is not None else op.compute(np.asarray(x))


class Gather(Op):
    """f(x) = x[key], the key holding index lists (`x[[0, 2, 0]]`, `p[range(3), y]`);
    x̄ += ū added into zeros of x's shape at each index (a repeated index adds up)."""

    name, symbol, rules = "gather", "[…]", ("ū added at each index of {0}",)
    jvp_rule, saved, grad_fn_name = "{d0}[key]", (), "IndexBackward0"
    torch_name = jax_name = None  # written x[[0, 2]]

    def __init__(self, key: tuple[KeyPart, ...]) -> None:
        self.key = tuple(
            tuple(int(i) for i in k) if isinstance(k, tuple | list) else k for k in key
        )

    def params(self) -> dict[str, Any]:
        return {"key": key_text(self.key)}

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        return check_key(self.key, shapes[0])

    def compute(self, x: Array) -> Array:
        check_key(self.key, x.shape)
        return np.array(x[numpy_key(self.key)])

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (_run(ScatterAdd(tuple(ins[0].shape), self.key), g, m),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(t[0])  # linear: the op itself, on the tangent


class ScatterAdd(Op):
    """f(u) = zeros(shape) with u added at `key`'s indices (np.add.at; the gradient of
    gather);  ū_in += ū[key]."""

    name, symbol, rules = "scatter_add", "scatter+", ("ū[key]",)
    # PyTorch's gradient of x[[…]] under create_graph is an _index_put_impl_ that adds
    jvp_rule, saved, grad_fn_name = "scatter_add {d0}", (), "IndexPutImplBackward0"
    torch_name = jax_name = None  # made inside grad(), never written

    def __init__(self, shape: tuple[int, ...], key: tuple[KeyPart, ...]) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.key = key

    def params(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "key": key_text(self.key)}

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        return self.shape

    def compute(self, u: Array) -> Array:
        out = np.zeros(self.shape)
        np.add.at(out, numpy_key(self.key), u)
        return out

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (_run(Gather(self.key), g, m),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(t[0])  # linear: the op itself, on the tangent


def gather(x: Any, key: tuple[KeyPart, ...]) -> Value:
    return apply(Gather(key), x)
