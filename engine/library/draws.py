"""Seeded random numbers as each library draws them.

- `torch.manual_seed(n)`, then `torch.randn`/`rand`/`randint`/`normal`, `x.normal_()`,
  `x.uniform_()`: torch's CPU generator's numbers (random_torch.py), in torch's default
  float32 unless `torch.set_default_dtype(torch.float64)` or `dtype=torch.float64` asks for
  float64's (each kept as the float64 number it is).
- `np.random.seed(n)`, then `np.random.randn`/`rand`/`random`/`normal`/`uniform`/`randint`:
  NumPy's legacy `RandomState(n)`, NumPy's own numbers.
- Before a library's seed, its draws come from the program's generator (`seed(n)`, NumPy's
  `default_rng`, 0 when unseeded), so a permalink shows the same numbers every time.
"""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.language.calls import Signature, argument_node, keyword_node
from engine.language.values import Function, Ints, Opaque
from engine.library.functions import number, sizes
from engine.library.objects import OBJECT_METHODS
from engine.library.random_torch import TorchGenerator
from engine.library.transforms import SPECIAL

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

DOUBLE = ("torch.float64", "torch.double")


def special(
    key: str, /, *positional: str, usage: str = "", shown: str = "", **defaults: Any
) -> Any:
    """Register `impl(it, node, **arguments)` as the library's `key`, called `shown` in its
    messages (`randint`, not `torch_randint`), out of the bare names."""
    shown = shown or (key.split("_", 1)[1] if key.startswith(("torch_", "np_", "tf_")) else key)
    sig = Signature(shown, positional, tuple(defaults.items()), usage or f"{shown}(…)")

    def register(impl: Any) -> Any:
        def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
            return impl(it, node, **sig.bind(it, args, kwargs, node))

        SPECIAL[key] = Function(key, run)
        return impl

    return register


def torch_double(it: Interpreter, node: Any) -> bool:
    """Does this draw make float64 numbers (torch's default dtype is float32)?"""
    kw = keyword_node(node, "dtype")
    if isinstance(kw, ast.keyword):
        v = it.eval(kw.value)
        return isinstance(v, Opaque) and v.state.get("name") in DOUBLE
    return bool(it.library_state.get("torch_double"))


def torch_generator(it: Interpreter, node: Any) -> TorchGenerator | None:
    """The generator a draw uses: its `generator=g` (a torch.Generator), else torch's default
    once torch.manual_seed was called, else None (the program's own generator)."""
    kw = keyword_node(node, "generator")
    if isinstance(kw, ast.keyword):
        g = it.eval(kw.value)
        if not (isinstance(g, Opaque) and g.kind == "torch_generator"):
            raise it.error("generator_value", kw.value, "keyword")
        return g.state["gen"]
    return it.library_state.get("torch")


@special("torch_generator_object", "device?", usage="torch.Generator()")
def generator_object(it: Interpreter, node: Any, device: Any) -> Opaque:
    """torch.Generator(): a CPU generator of its own, seeded with torch's default seed."""
    return Opaque("torch_generator", {"gen": TorchGenerator()})


def generator_seed(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    """g.manual_seed(n): the generator, reseeded (torch returns it, so it chains)."""
    if len(args) != 2 or kwargs:
        raise it.error("library_usage", node, "arguments", name="manual_seed",
                       usage="torch.Generator().manual_seed(0)")  # fmt: skip
    args[0].state["gen"] = TorchGenerator(seed_value(it, args[1], node, 2**64 - 1))
    return args[0]


def torch_normal(it: Interpreter, shape: tuple[int, ...], node: Any, mean: float = 0.0,
                 std: float = 1.0) -> np.ndarray:  # fmt: skip
    g = torch_generator(it, node)
    if g is None:
        return it.rng.standard_normal(shape) * std + mean
    n = math.prod(shape)
    return g.normal(n, torch_double(it, node), mean, std).reshape(shape)


def torch_uniform(it: Interpreter, shape: tuple[int, ...], node: Any, low: float = 0.0,
                  high: float = 1.0) -> np.ndarray:  # fmt: skip
    g = torch_generator(it, node)
    if g is None:
        return it.rng.random(shape) * (high - low) + low
    return g.uniform(math.prod(shape), torch_double(it, node), low, high).reshape(shape)


def legacy(it: Interpreter) -> np.random.RandomState | None:
    return it.library_state.get("numpy")


def numpy_draw(it: Interpreter, kind: str, shape: tuple[int, ...], *params: float) -> Any:
    """NumPy's legacy functions after np.random.seed; the program's generator before."""
    rs = legacy(it)
    if rs is not None:
        return getattr(rs, kind)(*params, size=shape)
    own = {"random_sample": "random", "standard_normal": "standard_normal"}.get(kind, kind)
    if not params:
        return getattr(it.rng, own)(shape)
    return getattr(it.rng, own)(*params, size=shape)


def seed_value(it: Interpreter, n: Any, node: Any, most: int) -> int:
    where = argument_node(node, 0)
    value = it.whole(n, where)
    if value < 0 or value > most:
        raise it.error("seed_range", where, "static", most=most)
    return value


@special("manual_seed", "seed", usage="torch.manual_seed(0)")
def manual_seed(it: Interpreter, node: Any, seed: Any) -> None:
    it.library_state["torch"] = TorchGenerator(seed_value(it, seed, node, 2**64 - 1))


@special("np_seed", "seed?", usage="np.random.seed(0)")
def np_seed(it: Interpreter, node: Any, seed: Any) -> None:
    if seed is None:
        raise it.error("seed_range", node, "static", most=2**32 - 1)
    it.library_state["numpy"] = np.random.RandomState(seed_value(it, seed, node, 2**32 - 1))


def shaped(it: Interpreter, size: Any, node: Any) -> tuple[int, ...]:
    shape = () if size is None else sizes(it, (size,), node)
    it.check_shape(shape, node)
    return shape


def made(it: Interpreter, data: Any, node: Any, requires_grad: Any = False) -> Any:
    """A drawn tensor: a leaf when it asks for a gradient, else a constant."""
    if not isinstance(requires_grad, bool):
        raise it.error("requires_grad_bool", keyword_node(node, "requires_grad"), "keyword")
    data = np.asarray(data, dtype=np.float64)
    return it.leaf(data, node) if requires_grad else it.constant(data, node)


@special("torch_randint", "low", "high?", "size?", requires_grad=False, generator=None,
         usage="torch.randint(low, high, size)")  # fmt: skip
def torch_randint(it: Interpreter, node: Any, low: Any, high: Any, size: Any,
                  requires_grad: Any, generator: Any) -> Ints:  # fmt: skip
    if size is None:  # torch.randint(high, size)
        low, high, size = 0, low, high
    if size is None:
        raise it.error("library_usage", node, "arguments", name="randint",
                       usage="torch.randint(low, high, size)")  # fmt: skip
    lo, hi = it.whole(low, node), it.whole(high, node)
    if hi <= lo:
        raise it.error("randint_range", node, "arguments", low=lo, high=hi)
    shape = shaped(it, size, node)
    g = torch_generator(it, node)
    n = math.prod(shape)
    data = g.randint(n, lo, hi) if g is not None else it.rng.integers(lo, hi, n)
    return Ints(np.asarray(data, dtype=np.int64).reshape(shape))


@special("torch_normal", "mean", "std", "size?", requires_grad=False, generator=None,
         usage="torch.normal(mean, std, size)")  # fmt: skip
def normal(it: Interpreter, node: Any, mean: Any, std: Any, size: Any, requires_grad: Any,
           generator: Any) -> Any:  # fmt: skip
    m, s = number(it, mean, node), number(it, std, node)
    if size is None:
        raise it.error("library_usage", node, "arguments", name="normal",
                       usage="torch.normal(mean, std, size)")  # fmt: skip
    return made(it, torch_normal(it, shaped(it, size, node), node, m, s), node, requires_grad)


def fill(it: Interpreter, name: str, shape: tuple[int, ...], rest: list[Any],
         kwargs: dict[str, Any], node: Any) -> np.ndarray:  # fmt: skip
    """x.normal_(mean=0, std=1), x.uniform_(a=0, b=1): x's numbers redrawn in place."""
    keys = ("mean", "std") if name == "normal_" else ("a", "b")
    given = dict(zip(keys, rest, strict=False)) | {k: v for k, v in kwargs.items() if k in keys}
    a = number(it, given.get(keys[0], 0.0), node)
    b = number(it, given.get(keys[1], 1.0), node)
    if name == "normal_":
        return torch_normal(it, shape, node, a, b)
    return torch_uniform(it, shape, node, a, b)


def numpy_function(name: str, kind: str, params: tuple[str, ...], defaults: tuple[float, ...],
                   dims: bool = False) -> None:  # fmt: skip
    """np.random.<name>: NumPy's legacy function `kind` (`randn(*dims)`, `normal(loc, scale,
    size)`)."""
    if dims:

        @special(f"np_{name}", "*dims", usage=f"np.random.{name}(2, 3)")
        def by_dims(it: Interpreter, node: Any, dims: Any) -> Any:
            shape = sizes(it, dims, node)
            it.check_shape(shape, node)
            return made(it, numpy_draw(it, kind, shape), node)

        return

    spelled = {p: d for p, d in zip(params, defaults, strict=True)}

    @special(f"np_{name}", *(f"{p}?" for p in params), "size?",
             usage=f"np.random.{name}({', '.join(params)}, size)")  # fmt: skip
    def by_size(it: Interpreter, node: Any, size: Any, **given: Any) -> Any:
        values = [number(it, spelled[p] if given[p] is None else given[p], node) for p in params]
        return made(it, numpy_draw(it, kind, shaped(it, size, node), *values), node)


numpy_function("randn", "standard_normal", (), (), dims=True)
numpy_function("rand", "random_sample", (), (), dims=True)
numpy_function("random", "random_sample", (), ())
numpy_function("random_sample", "random_sample", (), ())
numpy_function("standard_normal", "standard_normal", (), ())
numpy_function("normal", "normal", ("loc", "scale"), (0.0, 1.0))
numpy_function("uniform", "uniform", ("low", "high"), (0.0, 1.0))


@special("np_randint", "low", "high?", "size?", usage="np.random.randint(low, high, size)")
def np_randint(it: Interpreter, node: Any, low: Any, high: Any, size: Any) -> Ints:
    lo, hi = (0, it.whole(low, node)) if high is None else (it.whole(low, node),
                                                            it.whole(high, node))  # fmt: skip
    if hi <= lo:
        raise it.error("randint_range", node, "arguments", low=lo, high=hi)
    shape = shaped(it, size, node)
    rs = legacy(it)
    data = rs.randint(lo, hi, size=shape) if rs is not None else it.rng.integers(lo, hi, shape)
    return Ints(np.asarray(data, dtype=np.int64))


OBJECT_METHODS["torch_generator"] = {"manual_seed": Function("manual_seed", generator_seed)}
