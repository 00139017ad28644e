"""The library's functions: the ops of the registry as the language calls them (`exp(x)`,
`sum(x, axis=1)`, `cat([a, b])`), the tensors it makes (`tensor`, `zeros`, `randn`, `arange`…),
and `const`/`detach`. Each is a `Function` in LIBRARY under the language's own name; names.py
gives the spellings of each module (`torch.exp`, `np.sum`, `F.relu`) and of the methods.

Every elementwise function of one value comes from the op registry (UNARY_FUNCTIONS), so a new
one is an op class and nothing here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.autograd import grids, ops
from engine.autograd.ops import UNARY_FUNCTIONS, shape_text
from engine.autograd.value import Value
from engine.language.calls import Signature, argument_node, keyword_node
from engine.language.interpreter import Interpreter
from engine.language.values import Function, Grad, Ints, Pending, describe, is_number

LIBRARY: dict[str, Function] = {}


def function(
    name: str, *positional: str, usage: str = "", shown: str = "", **defaults: Any
) -> Callable:
    """Register `impl(it, node, **arguments)` as the library function `name` (`shown`: the
    name its messages give it, when not `name`)."""
    words = ", ".join(p.strip("*?") for p in positional)
    sig = Signature(shown or name, positional, tuple(defaults.items()), usage or words)

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
            return impl(it, node, **sig.bind(it, args, kwargs, node))

        LIBRARY[name] = Function(name, run)
        return impl

    return register


def _unary(cls: type[ops.Op]) -> None:
    name = str(cls.function)

    @function(name, "x", usage=f"one value: {name}(x)")
    def run(it: Interpreter, node: Any, x: Any) -> Any:
        return it.op(cls(), (x,), node)


for _cls in UNARY_FUNCTIONS.values():
    _unary(_cls)


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
    return it.op(ops.Transpose(tuple(order)), (t,), node)


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


# --- constant tensors and leaves ------------------------------------------------------------
def made(it: Interpreter, data: np.ndarray, node: Any, requires_grad: Any) -> Value:
    """A tensor the program made: a leaf when it asks for a gradient, else a constant."""
    if not isinstance(requires_grad, bool):
        where = getattr(keyword_node(node, "requires_grad"), "value", node)
        raise it.error("requires_grad_bool", where, "keyword")
    if requires_grad is True:
        return it.leaf(data, node)
    return it.constant(data, node)


@function("tensor", "data", requires_grad=False, usage="tensor(numbers)")
def tensor(it: Interpreter, node: Any, data: Any, requires_grad: Any) -> Any:
    """A tensor of numbers: whole numbers written alone make a tensor of ints (labels and
    indices), as PyTorch's and NumPy's do, unless a gradient is asked for."""
    if isinstance(data, Pending):
        data = data.raw if data.raw is not None else data.node
    if isinstance(data, Value | Grad):
        array = np.array(it.tensor(data, node).data, dtype=np.float64)
        return made(it, array, node, requires_grad)
    if isinstance(data, Ints):
        return (
            Ints(data.data.copy())
            if requires_grad is not True
            else made(it, data.data.astype(np.float64), node, True)
        )
    if _whole_numbers(data) and requires_grad is not True:
        array = np.array(data)
        it.check_shape(array.shape, node)
        return Ints(array.astype(np.int64))
    if not (is_number(data) or isinstance(data, list | tuple | bool)):
        raise it.error("tensor_of", node, "arguments", v=describe(data))
    return made(it, it.array_of(data, node), node, requires_grad)


@function("Tensor", "data", requires_grad=False, usage="torch.Tensor([numbers])")
def float_tensor(it: Interpreter, node: Any, data: Any, requires_grad: Any) -> Any:
    """torch.Tensor(numbers): float numbers, whole or not (torch.Tensor(3) would be 3
    uninitialised numbers: refused)."""
    if isinstance(data, int) and not isinstance(data, bool):
        raise it.error("uninitialised", node, "arguments")
    if isinstance(data, Ints):
        data = data.data.tolist()
    array = data.data.copy() if isinstance(data, Value) else it.array_of(data, node)
    return made(it, array, node, requires_grad)


def _whole_numbers(data: Any) -> bool:
    if isinstance(data, bool):
        return False
    if isinstance(data, int):
        return True
    if isinstance(data, list | tuple) and data:
        return all(_whole_numbers(v) for v in data)
    return False


def _constructor(name: str, fill: Callable[[Interpreter, tuple[int, ...]], np.ndarray]) -> None:
    @function(name, "*dims", requires_grad=False, size=None, shape=None, usage=f"{name}(2, 3)")
    def run(
        it: Interpreter, node: Any, dims: Any, requires_grad: Any, size: Any, shape: Any
    ) -> Any:
        for key, v in (("size", size), ("shape", shape)):
            if v is not None and dims:
                raise it.error("given_twice", keyword_node(node, key), "arguments", name=key)
        given = dims or next(((v,) for v in (size, shape) if v is not None), ())
        dims = sizes(it, given, node)
        it.check_shape(dims, node)
        return made(it, np.asarray(fill(it, dims), dtype=np.float64), node, requires_grad)


_constructor("zeros", lambda it, s: np.zeros(s))
_constructor("ones", lambda it, s: np.ones(s))
_constructor("randn", lambda it, s: it.rng.standard_normal(s))
_constructor("rand", lambda it, s: it.rng.random(s))


@function("full", "size", "fill_value", requires_grad=False, usage="full((2, 3), 0.5)")
def full(it: Interpreter, node: Any, size: Any, fill_value: Any, requires_grad: Any) -> Any:
    dims = sizes(it, (size,), node)
    it.check_shape(dims, node)
    if not is_number(fill_value):
        raise it.error("full_value", node, "arguments")
    return made(it, np.full(dims, float(fill_value)), node, requires_grad)


def _like(name: str, fill: str) -> None:
    @function(name, "x", requires_grad=False, usage=f"{name}(x)")
    def run(it: Interpreter, node: Any, x: Any, requires_grad: Any) -> Any:
        shape = it.tensor(x, node).data.shape if not isinstance(x, Ints) else x.data.shape
        return LIBRARY[fill].run(it, [shape], {"requires_grad": requires_grad}, node)


for _name, _fill in (("zeros_like", "zeros"), ("ones_like", "ones"), ("randn_like", "randn"),
                     ("rand_like", "rand")):  # fmt: skip
    _like(_name, _fill)


def number(it: Interpreter, v: Any, node: Any) -> float:
    if isinstance(v, Pending) and is_number(v.raw):
        v.read_as_number = True
        v = v.raw
    if not is_number(v):
        raise it.error("needs_number", node, "arguments", v=describe(v))
    return float(v)


def spaced(name: str, torch_grid: bool) -> None:
    """arange(stop), arange(start, stop[, step]) and linspace(start, stop, n): NumPy's grid, or
    under torch's names torch's own (engine/autograd/grids.py)."""

    shown = name.removeprefix("torch_")

    @function(name, "start", "end?", "step?", requires_grad=False, shown=shown)
    def run(it: Interpreter, node: Any, start: Any, end: Any = None, step: Any = None,
            requires_grad: Any = False) -> Any:  # fmt: skip
        given = [v for v in (start, end, step) if v is not None]
        bounds = [number(it, v, node) for v in given]
        lo, hi, by = (
            (0.0, bounds[0], 1.0) if len(bounds) == 1 else (*bounds[:2], (bounds + [1.0])[2])
        )
        if by == 0:
            raise it.error("arange_step", node, "arguments")
        count = (hi - lo) / by
        if not math.isfinite(count):
            raise it.error("arange_too_many", node, "too_large")
        n = max(0, math.ceil(count))
        it.check_shape((n,), node)
        it.count("work", node, n * (32 if torch_grid else 1))
        if all(isinstance(v, int) for v in given) and requires_grad is not True:
            return Ints(np.arange(int(lo), int(hi), int(by)))
        data = grids.arange(lo, by, n) if torch_grid else np.arange(lo, hi, by, dtype=np.float64)
        return made(it, data[:n], node, requires_grad)

    @function(name.replace("arange", "linspace"), "start", "end", "steps", requires_grad=False,
              usage="start, end, steps, in order or by name",
              shown=shown.replace("arange", "linspace"))  # fmt: skip
    def line(
        it: Interpreter, node: Any, start: Any, end: Any, steps: Any, requires_grad: Any
    ) -> Any:
        count = it.whole(steps, argument_node(node, 2))
        if count < 0:
            raise it.error("linspace_count", node, "shape", n=count)
        it.check_shape((count,), node)
        it.count("work", node, count * (32 if torch_grid else 1))
        a, b = number(it, start, node), number(it, end, node)
        data = grids.linspace(a, b, count) if torch_grid else np.linspace(a, b, count)
        return made(it, data, node, requires_grad)


spaced("arange", torch_grid=False)
spaced("torch_arange", torch_grid=True)


@function("eye", "n", "m?", requires_grad=False, usage="eye(3)")
def eye(it: Interpreter, node: Any, n: Any, m: Any = None, requires_grad: Any = False) -> Any:
    rows = it.whole(n, node)
    cols = rows if m is None else it.whole(m, node)
    it.check_shape((rows, cols), node)
    return made(it, np.eye(rows, cols), node, requires_grad)


@function("const", "x", usage="one value: const(x)")
def const(it: Interpreter, node: Any, x: Any) -> Any:
    """The graph cut: a constant with x's value (detach, stop_gradient)."""
    if isinstance(x, Ints):
        return x
    source = it.tensor(x, node)
    if source.kind == "const" and source.op is None:
        return source
    return it.constant(source.data.copy(), node)


LIBRARY["detach"] = LIBRARY["const"]
LIBRARY["max"] = LIBRARY["maximum"]
LIBRARY["min"] = LIBRARY["minimum"]

__all__ = ["LIBRARY", "function", "shape_text"]
