"""Views: reshape, transpose and indexing with constant ints and slices (the elements stay,
their arrangement changes).

In PyTorch these make views that share their input's memory, and which node a reshape makes
depends on how that memory is laid out: `torch_strides` follows the layout along a chain of
views (each view op's `view_strides`), as PyTorch's strides are, for Reshape's grad_fn."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.ops.base import Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import apply
from engine.autograd.ops.shapes import OpError, shape_text
from engine.autograd.value import Value

if TYPE_CHECKING:
    Strides = tuple[int, ...]


class Reshape(Op):
    """f(x) = x with a new shape (same elements);  x̄ += ū reshaped back."""

    name, symbol, rules = "reshape", "reshape", ("ū reshaped to {0}'s shape",)
    function, method = "reshape", True
    jvp_rule, saved = "reshape {d0}", ()
    torch_name, jax_name = "torch.reshape", "jnp.reshape"

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
                "reshape_size", "shape", shape=shape_text(shape), n=size, target=str(target)
            )
        return tuple(size // known if n == -1 else n for n in target)

    def compute(self, x: Array) -> Array:
        return np.reshape(x, self.out_shape(x.shape)).copy()

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (m.reshape(g, ins[0].shape),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(t[0])  # linear: the op itself, on the tangent

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        """torch.reshape views a contiguous tensor (ViewBackward0), aliases one whose layout
        still allows it (ReshapeAliasBackward0: x.T.reshape(x.T.shape)), and otherwise copies
        it first (UnsafeViewBackward0: x.T.reshape(-1))."""
        shape, strides = inputs[0].data.shape, torch_strides(inputs[0])
        if is_contiguous(shape, strides):
            return "ViewBackward0"
        if viewed_strides(shape, strides, self.out_shape(shape)) is not None:
            return "ReshapeAliasBackward0"
        return "UnsafeViewBackward0"

    def view_strides(self, shape: tuple[int, ...], strides: Strides) -> Strides:
        """The result's strides: a view where the layout allows one, else a contiguous copy."""
        out = self.out_shape(shape)
        return viewed_strides(shape, strides, out) or contiguous_strides(out)


class Transpose(Op):
    """f(x) = x with its axes permuted (reversed by default);
    x̄ += ū with the inverse permutation."""

    name, symbol, rules = "transpose", "ᵀ", ("ū transposed back",)
    operator, function, keywords, method = ".T", "transpose", ("axes",), True
    jvp_rule, saved, grad_fn_name = "{d0} transposed", (), "PermuteBackward0"
    torch_name, jax_name = "torch.permute", "jnp.transpose"

    def __init__(self, axes: tuple[int, ...] | None = None, grad_fn_name: str = "") -> None:
        self.axes = None if axes is None else tuple(axes)
        self.spelled = grad_fn_name  # torch names the node by the spelling: x.t(), x.transpose

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        return self.spelled or self.grad_fn_name

    def params(self) -> dict[str, Any]:
        return {"axes": None if self.axes is None else list(self.axes)}

    def permutation(self, ndim: int) -> tuple[int, ...]:
        if self.axes is None:
            return tuple(reversed(range(ndim)))
        if sorted(a % ndim if ndim else a for a in self.axes) != list(range(ndim)):
            raise OpError("transpose_axes", axes=str(self.axes), ndim=ndim)
        return tuple(a % ndim for a in self.axes)

    def compute(self, x: Array) -> Array:
        return np.transpose(x, self.permutation(x.ndim)).copy()

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        perm = self.permutation(ins[0].ndim)
        return (m.transpose(g, tuple(int(i) for i in np.argsort(perm))),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(t[0])  # linear: the op itself, on the tangent

    def view_strides(self, shape: tuple[int, ...], strides: Strides) -> Strides:
        """The input's strides, permuted: a transpose moves no element."""
        return tuple(strides[p] for p in self.permutation(len(shape)))


class Index(Op):
    """f(x) = x[key] with constant ints and slices;  x̄ += ū scattered into zeros of x's shape."""

    name, symbol, rules = "index", "[]", ("ū scattered into zeros of {0}'s shape",)
    operator = "[]"
    jvp_rule, saved = "{d0}[key]", ()
    torch_name = jax_name = None  # written x[key]

    def __init__(self, key: tuple[int | slice, ...]) -> None:
        self.key = tuple(constant_index(k) for k in key)

    def params(self) -> dict[str, Any]:
        return {"key": index_text(self.key)}

    def compute(self, x: Array) -> Array:
        if len(self.key) > x.ndim:
            raise OpError("too_many_indices", "index", n=len(self.key), shape=shape_text(x.shape))
        for k, n in zip(self.key, x.shape, strict=False):
            if isinstance(k, int) and not -n <= k < n:
                raise OpError("index_past_axis", "index", i=k, n=n)
        return np.array(x[self.key])

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (m.scatter(g, ins[0].shape, self.key),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(t[0])  # linear: the op itself, on the tangent

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        """The last view PyTorch applies: SelectBackward0 (an int), SliceBackward0 (a slice);
        AliasBackward0 if it applies none (x[:, :])."""
        views = torch_views(self.key, inputs[0].data.shape)
        return f"{views[-1]}Backward0" if views else "AliasBackward0"

    def view_strides(self, shape: tuple[int, ...], strides: Strides) -> Strides:
        """An int drops its axis; a slice keeps it, its stride times the slice's step."""
        out = []
        for i, (n, stride) in enumerate(zip(shape, strides, strict=True)):
            k = self.key[i] if i < len(self.key) else slice(None)
            if isinstance(k, slice):
                out.append(stride * k.indices(n)[2])
        return tuple(out)


def torch_views(key: tuple[int | slice, ...], shape: tuple[int, ...]) -> list[str]:
    """The views PyTorch applies for x[key] on a tensor of `shape`, in order: "Select" for an
    int, "Slice" for a slice. In a key of several parts a slice of a whole axis is skipped
    (`x[:, 0]` is one select); a lone slice is always applied (`x[:]` is a slice)."""
    views = []
    for k, n in zip(key, shape, strict=False):
        if isinstance(k, int):
            views.append("Select")
        elif len(key) == 1 or k.indices(n) != (0, n, 1):
            views.append("Slice")
    return views


VIEWS = (Reshape, Transpose, Index)


def torch_strides(v: Value) -> Strides:
    """The strides (in elements) of PyTorch's tensor for `v`: a view shares its input's memory
    (VIEWS: each op's `view_strides`); every other result is taken as a new contiguous tensor.
    PyTorch's elementwise ops keep a permuted input's layout, which this does not follow:
    `exp(x.T).reshape(-1)` is named as if exp's result were contiguous."""
    chain = []
    while isinstance(v.op, VIEWS):
        chain.append(v)
        v = v.inputs[0]
    strides = contiguous_strides(v.data.shape)
    for node in reversed(chain):
        strides = node.op.view_strides(node.inputs[0].data.shape, strides)  # type: ignore[union-attr]
    return strides


def contiguous_strides(shape: Sequence[int]) -> Strides:
    """The strides of a row-major tensor of `shape`, as PyTorch makes a new one."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_contiguous(shape: Sequence[int], strides: Strides) -> bool:
    """PyTorch's is_contiguous: row-major, an axis of length 1 having any stride."""
    if 0 in shape:
        return True
    expected = 1
    for n, stride in zip(reversed(shape), reversed(strides), strict=True):
        if n != 1:
            if stride != expected:
                return False
            expected *= n
    return True


def viewed_strides(shape: Sequence[int], strides: Strides, new: Sequence[int]) -> Strides | None:
    """The strides of `new`, a view of memory laid out as `shape` and `strides`, or None if no
    view can have that shape (PyTorch's rule for reshape and view): the old axes fall into
    runs that are contiguous with each other, and each run must be split into whole new axes,
    none of them taking elements from two runs."""
    if not shape:
        return (1,) * len(new)
    if math.prod(shape) == 0:
        return tuple(strides) if tuple(shape) == tuple(new) else contiguous_strides(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    base = strides[-1]  # the stride of the innermost axis of the current run
    run = view_run = 1  # elements of the current run, and of the new axes that cover it
    for d in range(len(shape) - 1, -1, -1):
        run *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != run * base):  # a run ends here
            while view_d >= 0 and (view_run < run or new[view_d] == 1):
                out[view_d] = view_run * base
                view_run *= new[view_d]
                view_d -= 1
            if view_run != run:
                return None
            if d > 0:
                base, run, view_run = strides[d - 1], 1, 1
    return tuple(out) if view_d == -1 else None


def constant_index(k: Any) -> int | slice:
    """An int or a slice of ints; anything else (lists, arrays, None, ...) is refused."""
    if isinstance(k, slice):
        parts = [None if p is None else constant_index(p) for p in (k.start, k.stop, k.step)]
        return slice(*parts)
    if isinstance(k, int | np.integer) and not isinstance(k, bool):
        return int(k)
    raise OpError("index_constant", "index")


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
