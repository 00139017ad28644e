"""jax.random with JAX's own numbers: `PRNGKey`/`key`, `split`, `normal`, `uniform`.

A key is two uint32 words; every draw hashes a counter with it by Threefry-2x32 (20 rounds,
as jax/_src/random/threefry2x32.py computes it), counters laid out as JAX's default
("partitionable") layout lays them: element i of a shape gets the 64-bit counter i, split in
two words, and its bits are the two words of the hash xor-ed. Floats are JAX's default
float32: a uniform is 23 random mantissa bits under the exponent of 1.0, minus 1; a normal is
√2·erfinv(u) of a uniform u in (-1, 1), erfinv by XLA's float32 polynomial (Giles). Keys and
uniforms are JAX's bit for bit; a normal is within a few float32 ulps of JAX's (XLA's own
log1p differs from NumPy's in the last bits). The numbers are then the program's float64
values, as every other value is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.language.calls import argument_node
from engine.language.values import Opaque, describe
from engine.library.constructors import made
from engine.library.functions import number, sizes
from engine.library.transforms import special

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

_U32 = np.uint32
_F32 = np.float32
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def rotate_left(v: np.ndarray, r: int) -> np.ndarray:
    return (v << _U32(r)) | (v >> _U32(32 - r))


def threefry2x32(key: np.ndarray, x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, ...]:
    """Threefry-2x32 of the counter words (x0, x1) under the key: 5 groups of 4 rounds, the
    key schedule injected after each group."""
    k0, k1 = _U32(key[0]), _U32(key[1])
    ks = (k0, k1, k0 ^ k1 ^ _U32(0x1BD11BDA))
    x = [x0.astype(_U32) + ks[0], x1.astype(_U32) + ks[1]]
    with np.errstate(over="ignore"):
        for group in range(5):
            for r in ROTATIONS[group % 2]:
                x[0] = x[0] + x[1]
                x[1] = rotate_left(x[1], r) ^ x[0]
            x[0] = x[0] + ks[(group + 1) % 3]
            x[1] = x[1] + ks[(group + 2) % 3] + _U32(group + 1)
    return x[0], x[1]


def counters(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The 64-bit counters 0, 1, … over `shape`, as their high and low words."""
    i = np.arange(int(np.prod(shape)), dtype=np.uint64).reshape(shape)
    return (i >> np.uint64(32)).astype(_U32), (i & np.uint64(0xFFFFFFFF)).astype(_U32)


def seed_key(seed: int) -> np.ndarray:
    """PRNGKey(seed) of a 32-bit seed (JAX's default): the words (0, seed mod 2³²)."""
    return np.array([0, seed & 0xFFFFFFFF], dtype=_U32)


def split_keys(key: np.ndarray, n: int) -> list[np.ndarray]:
    hi, lo = counters((n,))
    b0, b1 = threefry2x32(key, hi, lo)
    return [np.array([b0[i], b1[i]], dtype=_U32) for i in range(n)]


def random_bits(key: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    hi, lo = counters(shape)
    b0, b1 = threefry2x32(key, hi, lo)
    return b0 ^ b1


def uniform_f32(key: np.ndarray, shape: tuple[int, ...], lo: float, hi: float) -> np.ndarray:
    bits = (random_bits(key, shape) >> _U32(9)) | _U32(0x3F800000)
    floats = bits.view(_F32) - _F32(1.0)
    low, high = _F32(lo), _F32(hi)
    # XLA fuses floats·(high − low) + low into one multiply-add, rounded once: the product is
    # exact in float64 (24 × 24 bits), so the float64 sum rounded to float32 is that rounding.
    scaled = (floats.astype(np.float64) * np.float64(high - low) + np.float64(low)).astype(_F32)
    return np.maximum(low, scaled)


# XLA's float32 erfinv (M. Giles, "Approximating the erfinv function"): two polynomials in w.
SMALL_W = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
           -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)  # fmt: skip
LARGE_W = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
           -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)  # fmt: skip


def erfinv_f32(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        w = -np.log1p(-x * x)
        small = w < _F32(5.0)
        w = np.where(small, w - _F32(2.5), np.sqrt(w) - _F32(3.0)).astype(_F32)
        p = np.where(small, _F32(SMALL_W[0]), _F32(LARGE_W[0])).astype(_F32)
        for a, b in zip(SMALL_W[1:], LARGE_W[1:], strict=True):  # each step one multiply-add
            c = np.where(small, a, b).astype(_F32).astype(np.float64)
            p = (c + p.astype(np.float64) * w.astype(np.float64)).astype(_F32)
        return np.where(np.abs(x) == _F32(1.0), x * np.finfo(_F32).max, p * x).astype(_F32)


def normal_f32(key: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    lo = np.nextafter(_F32(-1.0), _F32(0.0))
    u = uniform_f32(key, shape, float(lo), 1.0)
    return (_F32(np.sqrt(2)) * erfinv_f32(u)).astype(_F32)


# --- the program's spellings ---------------------------------------------------------------
def key_value(words: np.ndarray, typed: bool) -> Opaque:
    """A key: its two words, printed as JAX prints it (a typed key of jax.random.key says so)."""
    shown = f"Array((), dtype=key<fry>) overlaying:\n{words}" if typed else str(words)
    return Opaque("prng_key", {"words": words, "shown": shown, "typed": typed})


def key_words(it: Interpreter, key: Any, node: Any) -> np.ndarray:
    if isinstance(key, Opaque) and key.kind == "prng_key":
        return key.state["words"]
    raise it.error("prng_key_needed", node, "arguments", v=describe(key))


@special("jax_prng_key", "seed", impl=None, usage="jax.random.PRNGKey(0)")
def prng_key(it: Interpreter, node: Any, seed: Any, impl: Any) -> Opaque:
    s = it.whole(seed, argument_node(node, 0))
    if not -(2**31) <= s < 2**31:  # JAX without x64: the seed is an int32
        raise it.error("prng_seed_range", argument_node(node, 0), "arguments", seed=s)
    return key_value(seed_key(s), typed=getattr(node.func, "attr", "") == "key")


@special("jax_split", "key", num=2, usage="jax.random.split(key, num=2)")
def split(it: Interpreter, node: Any, key: Any, num: Any) -> tuple[Opaque, ...]:
    words = key_words(it, key, argument_node(node, 0))
    n = it.whole(num, node)
    if n < 0:
        raise it.error("negative_size", node, "shape", shape=str((n,)))
    it.check_items(n, node)
    return tuple(key_value(k, key.state["typed"]) for k in split_keys(words, n))


def shape_of(it: Interpreter, shape: Any, node: Any) -> tuple[int, ...]:
    shape = shape if isinstance(shape, list | tuple) else (shape,)
    out = sizes(it, [tuple(shape)], node)
    it.check_shape(out, node)
    return out


@special("jax_normal", "key", "shape?", dtype=None, usage="jax.random.normal(key, shape)")
def normal(it: Interpreter, node: Any, key: Any, shape: Any, dtype: Any) -> Any:
    words = key_words(it, key, argument_node(node, 0))
    dims = shape_of(it, () if shape is None else shape, node)
    return made(it, normal_f32(words, dims).astype(np.float64), node, False)


@special("jax_uniform", "key", "shape?", dtype=None, minval=0.0, maxval=1.0,
         usage="jax.random.uniform(key, shape, minval=0.0, maxval=1.0)")  # fmt: skip
def uniform(it: Interpreter, node: Any, key: Any, shape: Any, dtype: Any, minval: Any,
            maxval: Any) -> Any:  # fmt: skip
    words = key_words(it, key, argument_node(node, 0))
    dims = shape_of(it, () if shape is None else shape, node)
    lo, hi = (number(it, v, node) for v in (minval, maxval))
    return made(it, uniform_f32(words, dims, lo, hi).astype(np.float64), node, False)


JAX_RANDOM = {
    "PRNGKey": "jax_prng_key", "key": "jax_prng_key", "split": "jax_split",
    "normal": "jax_normal", "uniform": "jax_uniform",
}  # fmt: skip
