"""The names students reach for beside the ops (issue 25, item 5): a max or min over an axis
(PyTorch's `(values, indices)`, NumPy's and JAX's values), argmax/argmin, `where`, and the
binary cross-entropies, each made of the ops already in the registry.

- `torch.max(x, dim)`, `x.max(dim)`: `torch.return_types.max(values=…, indices=…)`, which
  unpacks as `v, i = …`; the values are x gathered at the first maximum of each row, so the
  gradient goes to that element, as PyTorch's MaxBackward0 sends it.
- `torch.max(x)`, `np.max(x)`: one number; a tie splits the gradient evenly, as PyTorch's
  MaxBackward1 and JAX's max do.
- `torch.max(a, b)` of two tensors stays `maximum`.
- `F.binary_cross_entropy(p, y)` = mean(−(y·log p + (1 − y)·log(1 − p)));
  `F.binary_cross_entropy_with_logits(z, y)` = mean(softplus(z) − y·z), whose gradient is
  σ(z) − y, as PyTorch's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops.gradients import Where
from engine.autograd.value import Value
from engine.language.values import Ints, Pending, is_number
from engine.library.draws import special
from engine.library.functions import axes as axis_of
from engine.library.functions import flag

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


class Extremes(tuple):  # noqa: SLOT001 - a tuple with two names, as torch.return_types
    """torch.return_types.max: (values, indices), also read as `.values`, `.indices`."""

    kind = "max"

    def __new__(cls, kind: str, values: Any, indices: Any) -> Extremes:
        made = super().__new__(cls, (values, indices))
        made.kind = kind
        return made


def tensor_of(it: Interpreter, x: Any, node: Any) -> Value:
    if isinstance(x, Ints):
        return it.constant(x.data.astype(np.float64), node)
    return it.tensor(x, node)


def axis_in(it: Interpreter, axis: Any, ndim: int, node: Any, what: str) -> int:
    ax = it.whole(axis, node)
    span = max(ndim, 1)
    if not -span <= ax < span:
        raise it.error("axis_out_of_range", node, "axis", what=what, axis=ax, ndim=ndim)
    return ax % span if ndim else 0


def first(data: np.ndarray, axis: int | None, kind: str) -> np.ndarray:
    pick = np.argmax if kind == "max" else np.argmin
    return np.asarray(pick(data) if axis is None else pick(data, axis=axis))


def along(it: Interpreter, node: Any, x: Any, axis: Any, keepdim: bool, kind: str) -> Any:
    """x's max (or min) along `axis`: the values gathered at each row's first extreme, and
    where they are."""
    t = tensor_of(it, x, node)
    data = t.data
    if data.ndim == 0:
        axis_in(it, axis, 0, node, kind)
        return t, Ints(np.asarray(0))
    ax = axis_in(it, axis, data.ndim, node, kind)
    if data.shape[ax] == 0:
        raise it.error("extreme_empty", node, "arguments", name=kind)
    idx = first(data, ax, kind)
    grid = np.indices(idx.shape)
    others = iter(range(idx.ndim))
    key: tuple[Any, ...] = tuple(
        tuple(int(i) for i in (idx if a == ax else grid[next(others)]).ravel())
        for a in range(data.ndim)
    )
    if idx.ndim == 0:
        key = tuple(int(k[0]) for k in key)
    named = f"{kind.capitalize()}Backward0"  # PyTorch's name for the node, not Index's
    values = it.op(renamed(ops.Gather(key), named), (t,), node)
    shape = idx.shape if not keepdim else tuple(np.expand_dims(idx, ax).shape)
    if values.data.shape != shape:
        values = it.op(renamed(ops.Reshape(shape), named), (values,), node)
    indices = np.expand_dims(idx, ax) if keepdim else idx
    return values, Ints(np.asarray(indices, dtype=np.int64))


def renamed(op: ops.Op, name: str) -> ops.Op:
    """`op` as PyTorch names the node it makes (`x.max(1)`'s values: MaxBackward0)."""
    op.grad_fn = lambda inputs: name  # type: ignore[method-assign]
    return op


def whole(it: Interpreter, node: Any, x: Any, kind: str) -> Value:
    """One number: the max (or min) of every element; a tie splits the gradient evenly."""
    t = tensor_of(it, x, node)
    if t.data.size == 0:
        raise it.error("extreme_empty", node, "arguments", name=kind)
    best = t.data.max() if kind == "max" else t.data.min()
    ties = t.data == best
    if ties.sum() == 1:
        at = tuple(int(i) for i in np.unravel_index(int(np.argmax(ties)), ties.shape))
        return it.op(renamed(ops.Gather(at), f"{kind.capitalize()}Backward1"), (t,), node)
    share = it.constant(ties / ties.sum(), node)
    return it.op(ops.Sum(None, False), (it.op(ops.Mul(), (t, share), node),), node)


def two_values(b: Any) -> bool:
    """torch.max(a, b) of two tensors (maximum), not of a tensor and an axis."""
    return (
        b is not None
        and not (isinstance(b, int) and not isinstance(b, bool))
        and not (isinstance(b, Pending) and isinstance(b.raw, int))
    )


def torch_extreme(kind: str) -> None:
    @special(f"torch_{kind}", "x", "axis?", "other?", keepdims=False,
             usage=f"torch.{kind}(x), torch.{kind}(x, dim) or torch.{kind}(a, b)")  # fmt: skip
    def run(it: Interpreter, node: Any, x: Any, axis: Any, other: Any, keepdims: Any) -> Any:
        dim = axis
        if other is not None or two_values(dim):
            b = other if other is not None else dim
            return it.op(ops.Maximum() if kind == "max" else ops.Minimum(), (x, b), node)
        if dim is None:
            return whole(it, node, x, kind)
        values, indices = along(it, node, x, dim, flag(it, keepdims, node, "keepdim"), kind)
        return Extremes(kind, values, indices)

    @special(f"np_{kind}", "x", axis=None, keepdims=False, usage=f"np.{kind}(x, axis=None)")
    def values(it: Interpreter, node: Any, x: Any, axis: Any, keepdims: Any) -> Any:
        keep = flag(it, keepdims, node)
        if axis is None:
            out = whole(it, node, x, kind)
            return it.op(ops.Reshape((1,) * x_ndim(it, x, node)), (out,), node) if keep else out
        if isinstance(axis, list | tuple):
            raise it.error("extreme_axes", node, "unsupported", name=kind)
        return along(it, node, x, axis_of(it, axis, node), keep, kind)[0]

    @special(f"torch_arg{kind}", "x", "axis?", keepdims=False, usage=f"torch.arg{kind}(x, dim)")
    def index(it: Interpreter, node: Any, x: Any, axis: Any, keepdims: Any) -> Ints:
        dim = axis
        keep = flag(it, keepdims, node, "keepdim")
        if dim is None:
            return Ints(first(tensor_of(it, x, node).data.ravel(), None, kind).astype(np.int64))
        return along(it, node, x, dim, keep, kind)[1]

    @special(f"np_arg{kind}", "x", axis=None, keepdims=False, usage=f"np.arg{kind}(x, axis)")
    def np_index(it: Interpreter, node: Any, x: Any, axis: Any, keepdims: Any) -> Ints:
        return index(it, node, x, axis, keepdims)


def x_ndim(it: Interpreter, x: Any, node: Any) -> int:
    return tensor_of(it, x, node).data.ndim


for _kind in ("max", "min"):
    torch_extreme(_kind)


@special("where", "condition", "x", "y", usage="where(condition, x, y)")
def where(it: Interpreter, node: Any, condition: Any, x: Any, y: Any) -> Any:
    """x where the condition holds, else y; the condition is a constant mask."""
    if isinstance(condition, Ints):
        mask = condition.data != 0
    elif isinstance(condition, bool) or is_number(condition):
        mask = np.asarray(bool(condition))
    else:
        mask = tensor_of(it, condition, node).data != 0
    return it.op(Where(mask), (x, y), node)


def reduced(it: Interpreter, node: Any, terms: Value, reduction: Any, named: str) -> Value:
    """The loss's terms reduced; its last node named as PyTorch names the loss's grad_fn."""
    if reduction not in ("mean", "sum", "none"):
        raise it.error("reduction_value", node, "keyword", v=str(reduction)[:20])
    if reduction != "none":
        op = ops.Mean(None, False) if reduction == "mean" else ops.Sum(None, False)
        terms = it.op(op, (terms,), node)
    if terms.op is not None:
        terms.op.grad_fn = lambda inputs: named  # type: ignore[method-assign]
    return terms


@special("binary_cross_entropy", "input", "target", reduction="mean",
         usage="F.binary_cross_entropy(p, y)")  # fmt: skip
def binary_cross_entropy(it: Interpreter, node: Any, input: Any, target: Any,  # noqa: A002
                         reduction: Any) -> Value:  # fmt: skip
    p, y = tensor_of(it, input, node), tensor_of(it, target, node)
    hit = it.op(ops.Mul(), (y, it.op(ops.Log(), (p,), node)), node)
    miss_p = it.op(ops.Sub(), (1.0, p), node)
    miss = it.op(ops.Mul(), (it.op(ops.Sub(), (1.0, y), node),
                             it.op(ops.Log(), (miss_p,), node)), node)  # fmt: skip
    terms = it.op(ops.Neg(), (it.op(ops.Add(), (hit, miss), node),), node)
    return reduced(it, node, terms, reduction, "BinaryCrossEntropyBackward0")


@special("binary_cross_entropy_with_logits", "input", "target", reduction="mean",
         usage="F.binary_cross_entropy_with_logits(z, y)")  # fmt: skip
def with_logits(it: Interpreter, node: Any, input: Any, target: Any,  # noqa: A002
                reduction: Any) -> Value:  # fmt: skip
    z, y = tensor_of(it, input, node), tensor_of(it, target, node)
    soft = it.op(ops.Softplus(), (z,), node)
    terms = it.op(ops.Sub(), (soft, it.op(ops.Mul(), (y, z), node)), node)
    return reduced(it, node, terms, reduction, "BinaryCrossEntropyWithLogitsBackward0")


def torch_printed(v: Extremes, text: Any) -> str:
    """As PyTorch prints a torch.return_types.max."""
    return f"torch.return_types.{v.kind}(\nvalues={text(v[0])},\nindices={text(v[1])})"
