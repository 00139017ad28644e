"""The tensors a program makes: `tensor`, `Tensor`, `zeros`, `ones`, `randn`, `rand`, `full`,
the `_like`s, `arange` and `linspace` (NumPy's grid, or under torch's names torch's own:
engine/autograd/grids.py) and `eye`; each a leaf when it asks for a gradient, else a constant,
its shape checked before NumPy makes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import grids, ops
from engine.autograd.value import Value
from engine.language.calls import argument_node, keyword_node
from engine.language.values import Grad, Ints, Pending, describe, is_number
from engine.library import draws
from engine.library.functions import FUNCTIONS, function, number, sizes

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


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
    if not it.torch and isinstance(data, list | tuple) and holds_values(data):
        return stacked(it, data, node)  # jnp.array([f(x) for …]): the values, stacked
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


def holds_values(data: Any) -> bool:
    return any(
        holds_values(d) if isinstance(d, list | tuple) else isinstance(d, Value | Pending | Grad)
        for d in data
    )


def stacked(it: Interpreter, data: Any, node: Any) -> Value:
    """A list of values (and numbers) as one value of the graph, as jnp.array makes it."""
    if not data:
        raise it.error("join_nothing", node, "arguments", name="array")
    parts = tuple(
        stacked(it, d, node) if isinstance(d, list | tuple) else it.tensor(d, node) for d in data
    )
    return it.op(ops.Stack(0, len(parts)), parts, node)


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


def _constructor(name: str, fill: Callable[[Interpreter, tuple[int, ...], Any], np.ndarray],
                 shown: str = "") -> None:  # fmt: skip
    shown = shown or name

    @function(name, "*dims", requires_grad=False, size=None, shape=None, generator=None,
              usage=f"{shown}(2, 3)", shown=shown)  # fmt: skip
    def run(
        it: Interpreter, node: Any, dims: Any, requires_grad: Any, size: Any, shape: Any,
        generator: Any,
    ) -> Any:  # fmt: skip
        for key, v in (("size", size), ("shape", shape)):
            if v is not None and dims:
                raise it.error("given_twice", keyword_node(node, key), "arguments", name=key)
        given = dims or next(((v,) for v in (size, shape) if v is not None), ())
        dims = sizes(it, given, node)
        it.check_shape(dims, node)
        return made(it, np.asarray(fill(it, dims, node), dtype=np.float64), node, requires_grad)


_constructor("zeros", lambda it, s, node: np.zeros(s))
_constructor("ones", lambda it, s, node: np.ones(s))
_constructor("randn", lambda it, s, node: it.rng.standard_normal(s))
_constructor("rand", lambda it, s, node: it.rng.random(s))
# torch's own: its CPU generator's numbers once torch.manual_seed is called (draws.py)
_constructor("torch_randn", draws.torch_normal, "randn")
_constructor("torch_rand", draws.torch_uniform, "rand")


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
        if it.torch and isinstance(x, list | tuple):  # PyTorch's: input must be a Tensor
            raise it.not_a_tensor(x, node)
        shape = it.tensor(x, node).data.shape if not isinstance(x, Ints) else x.data.shape
        return FUNCTIONS[fill].run(it, [shape], {"requires_grad": requires_grad}, node)


for _name, _fill in (("zeros_like", "zeros"), ("ones_like", "ones"), ("randn_like", "randn"),
                     ("rand_like", "rand"), ("torch_randn_like", "torch_randn"),
                     ("torch_rand_like", "torch_rand")):  # fmt: skip
    _like(_name, _fill)


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
