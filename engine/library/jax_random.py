"""jax.random with JAX's own numbers: `PRNGKey`/`key`, `split`, `normal`, `uniform`.

A key is two uint32 words; every draw hashes a counter with it by Threefry-2x32 (20 rounds,
as jax/_src/random/threefry2x32.py computes it), counters laid out as JAX's default
("partitionable") layout lays them: element i of a shape gets the 64-bit counter i, split in
two words, and its bits are the two words of the hash xor-ed. Floats are JAX's default
float32: a uniform is 23 random mantissa bits under the exponent of 1.0, minus 1; a normal is
√2·erfinv(u) of a uniform u in (-1, 1), erfinv by XLA's float32 polynomial (Giles) over XLA's
own float32 log1p and log (Cephes', as XLA's CPU code computes them, each multiply-add fused as
LLVM fuses it). Keys, uniforms and normals are JAX's bit for bit. The numbers are then the
program's float64 values, as every other value is.
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


def fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """a·b + c in float32, rounded once, as the CPU's fused multiply-add (XLA lets LLVM fuse a
    multiply into the add that uses it). a·b is exact in float64; the float64 sum and its error
    (TwoSum) are rounded to odd, whose rounding to float32 is then the single rounding."""
    p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    s = p + c
    z = s - p
    t = (p - (s - z)) + (c - z)  # s + t == p + c exactly
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    toward = np.where(t > 0, np.inf, -np.inf)
    odd = np.where((t != 0) & even & np.isfinite(s), np.nextafter(s, toward), s)
    return odd.astype(_F32)


def horner32(x: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    """XLA's EvaluatePolynomial: p = 0, then p·x + c for each c, each a fused multiply-add."""
    p = np.zeros_like(x)
    for c in coefficients:
        p = fma32(p, x, _F32(c))
    return p


# The natural log of XLA's CPU for float32 (Eigen's plog, after Cephes; LLVM fuses what it
# may): x = 2^e·m with m in [√½, √2), a degree-8 polynomial in m − 1 in three parts.
LOG_P = tuple(_F32(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1,
              -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1,
              -2.4999993993e-1, 3.3333331174e-1))  # fmt: skip


def log32(v: np.ndarray) -> np.ndarray:
    """XLA's float32 log of v > 0 (v ≤ 0 and non-finite v as NumPy gives them)."""
    x = np.maximum(v, _F32(np.finfo(_F32).tiny)).astype(_F32)
    bits = x.view(_U32)
    e = ((bits >> _U32(23)).astype(np.int32) - 126).astype(_F32)
    m = ((bits & _U32(0x807FFFFF)) | _U32(0x3F000000)).view(_F32)
    low = m < _F32(0.707106781186547524)
    m = (m - _F32(1.0) + np.where(low, m, _F32(0.0))).astype(_F32)
    e = (e - np.where(low, _F32(1.0), _F32(0.0))).astype(_F32)
    x2 = (m * m).astype(_F32)
    x3 = (x2 * m).astype(_F32)
    y = fma32(fma32(LOG_P[0], m, LOG_P[1]), m, LOG_P[2])
    y1 = fma32(fma32(LOG_P[3], m, LOG_P[4]), m, LOG_P[5])
    y2 = fma32(fma32(LOG_P[6], m, LOG_P[7]), m, LOG_P[8])
    y = fma32(fma32(y, x3, y1), x3, y2)
    y = fma32(y, x3, (e * _F32(-2.12194440e-4)).astype(_F32))
    r = (fma32(-x2, _F32(0.5), m) + y).astype(_F32)
    r = fma32(e, _F32(0.693359375), r)
    with np.errstate(all="ignore"):
        return np.where((v > 0) & np.isfinite(v), r, np.log(v)).astype(_F32)


# XLA's float32 log1p (xla/codegen/intrinsic log1p, after Cephes): a rational function for
# |x| < √2 − 1, log(1 + x) beyond.
LOG1P_NUM = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1,
             6.5787325942061044846969e0, 2.9911919328553073277375e1,
             6.0949667980987787057556e1, 5.7112963590585538103336e1,
             2.0039553499201281259648e1)  # fmt: skip
LOG1P_DEN = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1,
             2.2176239823732856465394e2, 3.0909872225312059774938e2,
             2.1642788614495947685003e2, 6.0118660497603843919306e1)  # fmt: skip


def log1p32(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        x2 = (x * x).astype(_F32)
        ratio = (horner32(x, LOG1P_NUM) / horner32(x, LOG1P_DEN)).astype(_F32)
        small = ((x * x2).astype(_F32) * ratio).astype(_F32)
        small = (x + fma32(_F32(-0.5), x2, small)).astype(_F32)
        large = log32((x + _F32(1.0)).astype(_F32))
        return np.where(np.abs(x) < _F32(0.41421356237309504880), small, large).astype(_F32)


# XLA's float32 erfinv (M. Giles, "Approximating the erfinv function"): two polynomials in w.
SMALL_W = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
           -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)  # fmt: skip
LARGE_W = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
           -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)  # fmt: skip


def erfinv_f32(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        w = -log1p32((x * -x).astype(_F32))
        small = w < _F32(5.0)
        w = np.where(small, w - _F32(2.5), np.sqrt(w) - _F32(3.0)).astype(_F32)
        p = np.where(small, _F32(SMALL_W[0]), _F32(LARGE_W[0])).astype(_F32)
        for a, b in zip(SMALL_W[1:], LARGE_W[1:], strict=True):  # each step one multiply-add
            p = fma32(p, w, np.where(small, _F32(a), _F32(b)))
        return np.where(np.abs(x) == _F32(1.0), x * np.inf, p * x).astype(_F32)


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
