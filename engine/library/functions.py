"""The library's functions: the ops of the registry as the language calls them (`exp(x)`,
`sum(x, axis=1)`, `cat([a, b])`) and `const`/`detach` (the tensors a program makes are
constructors.py's). Each is a `Function` in FUNCTIONS under the language's own name; names.py
gives the spellings of each module (`torch.exp`, `np.sum`, `F.relu`) and of the methods.

Every elementwise function of one value comes from the op registry (UNARY_FUNCTIONS), so a new
one is an op class and nothing here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import UNARY_FUNCTIONS, shape_text
from engine.autograd.value import Value
from engine.language.calls import Signature, argument_node, keyword_node
from engine.language.values import Function, Ints, Pending, describe, is_number

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

FUNCTIONS: dict[str, Function] = {}


def function(
    name: str,
    *positional: str,
    usage: str = "",
    shown: str = "",
    keyword_only: tuple[str, ...] = (),
    **defaults: Any,
) -> Callable:
    """Register `impl(it, node, **arguments)` as the library function `name` (`shown`: the
    name its messages give it, when not `name`; `keyword_only`: defaults no argument fills by
    position)."""
    words = ", ".join(p.strip("*?") for p in positional)
    sig = Signature(shown or name, positional, tuple(defaults.items()), usage or words,
                    keyword_only)  # fmt: skip

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
            return impl(it, node, **sig.bind(it, args, kwargs, node))

        FUNCTIONS[name] = Function(name, run)
        return impl

    return register


def _unary(cls: type[ops.Op]) -> None:
    name = str(cls.function)

    @function(name, "x", usage=f"one value: {name}(x)")
    def run(it: Interpreter, node: Any, x: Any) -> Any:
        return it.op(cls(), (x,), node)


for _cls in UNARY_FUNCTIONS.values():
    _unary(_cls)


def _operator(cls: type[ops.Op]) -> None:
    """`torch.add(a, b)`, `np.multiply(a, b)`: an operator's op as a function."""
    name = str(cls.name)

    @function(name, "a", "b", usage=f"two values: {name}(a, b)")
    def run(it: Interpreter, node: Any, a: Any, b: Any) -> Any:
        return it.op(cls(), (a, b), node)


for _cls in ops.BINARY_OPERATORS.values():
    if _cls.name not in ("pow", "matmul"):
        _operator(_cls)


# --- two values -------------------------------------------------------------------------
@function("maximum", "a", "b", usage="two values: maximum(a, b)")
def maximum(it: Interpreter, node: Any, a: Any, b: Any) -> Any:
    return it.op(ops.Maximum(), (a, b), node)


@function("minimum", "a", "b", usage="two values: minimum(a, b)")
def minimum(it: Interpreter, node: Any, a: Any, b: Any) -> Any:
    return it.op(ops.Minimum(), (a, b), node)


@function("matmul", "a", "b", usage="two values: matmul(a, b)")
def matmul(it: Interpreter, node: Any, a: Any, b: Any) -> Any:
    return it.op(ops.MatMul(), (a, b), node)


@function("pow", "x", "exponent", usage="a value and an exponent: pow(x, 2)")
def power(it: Interpreter, node: Any, x: Any, exponent: Any) -> Any:
    from engine.language.expressions import check_exponent

    check_exponent(it, exponent, node)
    return it.op(ops.Pow(), (x, exponent), node)


@function("square", "x", usage="one value: square(x)")
def square(it: Interpreter, node: Any, x: Any) -> Any:
    return it.op(ops.Pow(), (x, 2.0), node)


@function("mse", "p", "y", reduction="mean", usage="two values: mse(p, y)")
def mse(it: Interpreter, node: Any, p: Any, y: Any, reduction: Any) -> Any:
    if reduction != "mean":
        raise it.error("mse_reduction", node, "arguments")
    return it.op(ops.Mse(), (p, y), node)


# --- reductions -------------------------------------------------------------------------
def axes(it: Interpreter, axis: Any, node: Any) -> Any:
    if axis is None:
        return None
    if isinstance(axis, list | tuple):
        return tuple(it.whole(a, node) for a in axis)
    return it.whole(axis, node)


def flag(it: Interpreter, value: Any, node: Any, name: str = "keepdims") -> bool:
    if not isinstance(value, bool):
        raise it.error("keepdims_bool", getattr(keyword_node(node, name), "value", node), "keyword")
    return value


@function("sum", "x", axis=None, keepdims=False, usage="a value and an optional axis")
def total(it: Interpreter, node: Any, x: Any, axis: Any, keepdims: Any) -> Any:
    return it.op(ops.Sum(axes(it, axis, node), flag(it, keepdims, node)), (x,), node)


@function("mean", "x", axis=None, keepdims=False, usage="a value and an optional axis")
def mean(it: Interpreter, node: Any, x: Any, axis: Any, keepdims: Any) -> Any:
    return it.op(ops.Mean(axes(it, axis, node), flag(it, keepdims, node)), (x,), node)


@function("norm", "x", ord=None, axis=None, keepdims=False, usage="norm(x)")
def norm(it: Interpreter, node: Any, x: Any, ord: Any, axis: Any, keepdims: Any) -> Any:  # noqa: A002
    """The 2-norm, as the ops it is made of: sqrt(sum(x ** 2))."""
    if ord not in (None, 2):
        raise it.error("norm_ord", node, "arguments")
    squares = it.op(ops.Pow(), (x, 2.0), node)
    return it.op(ops.Sqrt(), (total(it, node, squares, axis, keepdims),), node)


# --- softmax, losses --------------------------------------------------------------------
@function("softmax", "z", axis=-1, usage="softmax(z, axis=-1)")
def softmax(it: Interpreter, node: Any, z: Any, axis: Any) -> Any:
    return it.op(ops.Softmax(it.whole(axis, node)), (z,), node)


@function("log_softmax", "z", axis=-1, usage="log_softmax(z, axis=-1)")
def log_softmax(it: Interpreter, node: Any, z: Any, axis: Any) -> Any:
    return it.op(ops.LogSoftmax(it.whole(axis, node)), (z,), node)


@function("cross_entropy", "z", "t", usage="logits and labels: cross_entropy(z, t)")
def cross_entropy(it: Interpreter, node: Any, z: Any, t: Any) -> Any:
    return it.op(ops.CrossEntropy(labels(it, t, argument_node(node, 1))), (z,), node)


def labels(it: Interpreter, t: Any, node: Any) -> int | tuple[int, ...]:
    """Class labels: a whole number or a list of them, bare or as a tensor of ints."""
    if isinstance(t, Pending) and t.raw is not None:
        t.read_as_number = t.labels = True
        t = t.raw
    if isinstance(t, Ints):
        t = t.data.tolist()
    if isinstance(t, Value) and not t.requires_grad and np.all(np.mod(t.data, 1) == 0):
        t = t.data.astype(np.int64).tolist()
    if isinstance(t, list | tuple):
        if not t:
            raise it.error("labels_empty", node, "labels")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in t):
            raise it.error("labels_whole", node, "labels")
        return tuple(t)
    if isinstance(t, int) and not isinstance(t, bool):
        return t
    if isinstance(t, float):
        raise it.error("labels_whole", node, "labels")
    raise it.error("labels_kind", node, "labels")


# --- shapes -----------------------------------------------------------------------------
def sizes(
    it: Interpreter, shape: Any, node: Any, inferred: bool = False, axes: bool = False
) -> tuple[int, ...]:
    """A shape written as sizes (`zeros(2, 3)`), one tuple (`zeros((2, 3))`) or `x.shape`;
    `inferred`: one -1 may stand for the size the others leave (reshape's); `axes`: axes,
    which count from the end when negative."""
    written = len(shape) != 1 or not isinstance(shape[0], list | tuple)
    if not written:
        shape = shape[0]
    out = tuple(
        it.whole(d, argument_node(node, i) if written else node) for i, d in enumerate(shape)
    )
    if not axes and any(d < (-1 if inferred else 0) for d in out):
        raise it.error("negative_size", node, "shape", shape=str(out))
    return out


@function("reshape", "x", "*shape", usage="reshape(x, (2, 3))")
def reshape(it: Interpreter, node: Any, x: Any, shape: Any) -> Any:
    if not shape:
        raise it.error("reshape_needs_shape", node, "arguments")
    return it.op(ops.Reshape(sizes(it, shape, node, inferred=True)), (x,), node)


@function("transpose", "x", "*axes", usage="transpose(x, axes=None)")
def transpose(it: Interpreter, node: Any, x: Any, axes: Any) -> Any:
    order = sizes(it, axes, node, axes=True) if axes and axes != (None,) else None
    return it.op(ops.Transpose(order), (x,), node)


@function("swapaxes", "x", "a", "b", usage="a value and two axes: x.transpose(0, 1)")
def swap(it: Interpreter, node: Any, x: Any, a: Any, b: Any) -> Any:
    """PyTorch's transpose(x, a, b): the two axes swapped."""
    t = it.tensor(x, node)
    n = t.data.ndim
    i, j = (it.whole(v, node) for v in (a, b))
    span = max(n, 1)  # PyTorch's dims of a 0-d tensor are -1 and 0
    for k in (i, j):
        if not -span <= k < span:
            raise it.error("axis_out_of_range", node, "axis", what="transpose", axis=k, ndim=n)
    order = list(range(n))
    if n:
        order[i % n], order[j % n] = order[j % n], order[i % n]
    return it.op(ops.Transpose(tuple(order), "TransposeBackward0"), (t,), node)


@function("t", "x", usage="a matrix (or a vector): M.t()")
def matrix_t(it: Interpreter, node: Any, x: Any) -> Any:
    """PyTorch's t(): a matrix's two axes swapped (a vector as it is)."""
    t = it.tensor(x, node)
    if t.data.ndim > 2:
        raise it.error("t_ndim", node, "shape", ndim=t.data.ndim)
    return it.op(ops.Transpose(None, "TBackward0"), (t,), node)


@function("cat", "xs", axis=0, usage="a list of values and an optional axis: cat([a, b], axis=0)")
def cat(it: Interpreter, node: Any, xs: Any, axis: Any) -> Any:
    return join(it, node, xs, axis, ops.Cat)


@function("stack", "xs", axis=0, usage="a list of values and an optional axis: stack([a, b])")
def stack(it: Interpreter, node: Any, xs: Any, axis: Any) -> Any:
    return join(it, node, xs, axis, ops.Stack)


def join(it: Interpreter, node: Any, xs: Any, axis: Any, cls: Any) -> Any:
    if not isinstance(xs, list | tuple) or not xs:
        name = "cat" if cls is ops.Cat else "stack"
        raise it.error("join_needs_list", argument_node(node, 0), "arguments", name=name)
    values = tuple(it.tensor(x, node) for x in xs)
    return it.op(cls(it.whole(axis, node), len(values)), values, node)


@function("clamp", "x", min=None, max=None, usage="a value and its bounds: clamp(x, 0, 1)")
def clamp(it: Interpreter, node: Any, x: Any, min: Any, max: Any) -> Any:  # noqa: A002
    for i, (name, bound) in enumerate((("min", min), ("max", max))):
        if bound is not None and not is_number(bound):
            where = keyword_node(node, name)
            where = getattr(where, "value", None) or argument_node(node, i + 1)
            raise it.error("clamp_bound", where, "keyword", name=name)
    if min is None and max is None:
        raise it.error("clamp_needs_bound", node, "arguments")
    return it.op(ops.Clamp(min, max), (x,), node)


def number(it: Interpreter, v: Any, node: Any) -> float:
    if isinstance(v, Pending) and is_number(v.raw):
        v.read_as_number = True
        v = v.raw
    if not is_number(v):
        raise it.error("needs_number", node, "arguments", v=describe(v))
    return float(v)


@function("round_to", "x", decimals=0, usage="a value and a number of decimals: np.round(x, 6)")
def round_to(it: Interpreter, node: Any, x: Any, decimals: Any) -> Any:
    """NumPy's round (half to even, at `decimals`): a constant, as its gradient is 0 almost
    everywhere (PyTorch's round has a zero gradient)."""
    source = it.tensor(x, node)
    return it.constant(np.round(source.data, it.whole(decimals, node)), node)


@function("const", "x", usage="one value: const(x)")
def const(it: Interpreter, node: Any, x: Any) -> Any:
    """The graph cut: a constant with x's value (detach, stop_gradient)."""
    if isinstance(x, Ints):
        return x
    source = it.tensor(x, node)
    if source.kind == "const" and source.op is None:
        return source
    return it.constant(source.data.copy(), node)


FUNCTIONS["detach"] = FUNCTIONS["const"]
FUNCTIONS["max"] = FUNCTIONS["maximum"]
FUNCTIONS["min"] = FUNCTIONS["minimum"]

__all__ = ["FUNCTIONS", "function", "shape_text"]
