"""torch's CPU generator, as torch 2.13 draws: after `torch.manual_seed(n)`, `torch.rand`,
`torch.randn`, `torch.randint`, `x.normal_()` give the numbers a notebook printed.

The engine is one Mersenne Twister (mt19937, seeded as `std::mt19937(n)`: the same as NumPy's
legacy `RandomState(n)`, whose raw 32-bit words are taken from NumPy's own MT19937) and the
transformations of ATen's DistributionsHelper.h and cpu/DistributionKernels.cpp:
- `random()` is one word, `random64()` two (the first the high half);
- a uniform float32 is the low 24 bits of a word times 2**-24, a float64 the low 53 bits of
  `random64()` times 2**-53;
- a normal tensor of 16 or more numbers is filled with uniforms first, then turned into
  normals 16 at a time by Box-Muller (a float32 one with the AVX2 kernel's `log256_ps` and
  `sincos256_ps`, written out below in float32 steps; a float64 one with libm's), the last
  16 redrawn when the size is not a multiple of 16; fewer than 16 are drawn one by one from
  `normal_distribution<double>`, which keeps the second number of each pair for the next.

A float32 draw is kept as the float64 number it is exactly (every value is float64 here), so
`print` shows what torch printed.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

F = np.float32
WORD = 0xFFFFFFFF


class TorchGenerator:
    """torch's default CPU generator after `torch.manual_seed(seed)`."""

    def __init__(self, seed: int = 67280421310721) -> None:
        state = np.random.RandomState(seed & WORD).get_state(legacy=False)["state"]
        self.words = np.random.MT19937()
        self.words.state = {"bit_generator": "MT19937", "state": state}
        self.next_normal: float | None = None

    def random(self, n: int) -> np.ndarray:
        """n words of 32 bits, as uint64."""
        return np.asarray(self.words.random_raw(n), dtype=np.uint64)

    def random64(self, n: int) -> np.ndarray:
        w = self.random(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def uniform(self, n: int, double: bool, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        if double:
            x = (self.random64(n) & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53
            return _fma64(x, high - low, low)
        x = ((self.random(n) & np.uint64(0xFFFFFF)).astype(F) * F(2.0**-24)).astype(F)
        return _fma(x, F(high) - F(low), F(low)).astype(np.float64)

    def randint(self, n: int, low: int, high: int) -> np.ndarray:
        span = high - low
        draws = self.random64(n) if span >= 2**28 else self.random(n)  # torch's cut
        return (draws % np.uint64(span)).astype(np.int64) + low

    def normal(self, n: int, double: bool, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
        if n >= 16:
            data = self.uniform(n, double)
            fill = _fill_double if double else _fill_float
            whole = n - n % 16
            data[:whole] = fill(data[:whole].reshape(-1, 16), mean, std).ravel()
            if n % 16:
                data[n - 16 :] = fill(self.uniform(16, double).reshape(1, 16), mean, std).ravel()
            return data
        out = np.empty(n)
        for i in range(n):
            z = self.next_normal
            if z is None:
                u1, u2 = self.uniform(2, True)
                r = math.sqrt(-2.0 * math.log1p(-u2))
                theta = 2.0 * math.pi * u1
                self.next_normal = r * math.sin(theta)
                z = r * math.cos(theta)
            else:
                self.next_normal = None
            out[i] = z
        out = _fma64(out, std, mean)
        return out if double else out.astype(F).astype(np.float64)


_LIBM = {f: np.frompyfunc(getattr(math, f), 1, 1) for f in ("log", "cos", "sin")}


def _libm(f: str, x: np.ndarray) -> np.ndarray:
    """libm's own log/cos/sin (Python's math calls it), as ATen's scalar loop does."""
    return np.asarray(_LIBM[f](x), dtype=np.float64)


def _fill_double(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """normal_fill_16 in float64, on rows of 16: pairs (j, j + 8)."""
    radius = np.sqrt(-2 * _libm("log", 1 - u[:, :8]))
    theta = 2.0 * math.pi * u[:, 8:]
    return np.concatenate(
        [_fma64(radius * _libm("cos", theta), std, mean),
         _fma64(radius * _libm("sin", theta), std, mean)], axis=1,
    )  # fmt: skip


def _fma64(x: np.ndarray, std: float, mean: float) -> np.ndarray:
    """x * std + mean rounded once, as the compiled kernel's fused multiply-add does."""
    if std == 1.0 and mean == 0.0:
        return x
    s, m = Fraction(std), Fraction(mean)
    flat = [float(Fraction(float(v)) * s + m) for v in x.ravel()]
    return np.asarray(flat, dtype=np.float64).reshape(x.shape)


def _fill_float(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """normal_fill_16_AVX2 on rows of 16: u1 = 1 - u[:, :8], u2 = u[:, 8:], as its float32
    lanes compute them."""
    u1 = (F(1) - u[:, :8].astype(F)).astype(F)
    u2 = u[:, 8:].astype(F)
    radius = np.sqrt((F(-2) * _log(u1)).astype(F)).astype(F)
    sin, cos = _sincos((F(2.0 * math.pi) * u2).astype(F))
    n1, n2 = (radius * cos).astype(F), (radius * sin).astype(F)
    fma = [_fma(n, F(std), F(mean)) for n in (n1, n2)]
    return np.concatenate(fma, axis=1).astype(np.float64)


def _fma(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """a * b + c rounded once, as the compiler fuses the kernel's multiply and add (the
    float32 product is exact in float64)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + c).astype(F)


_LOG_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
          3.3333331174e-1)  # fmt: skip


def _log(x: np.ndarray) -> np.ndarray:
    """avx_mathfun.h's log256_ps (Cephes' logf), step by step in float32."""
    x = np.maximum(x, F(1.17549435e-38)).astype(F)
    bits = x.view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 0x7F).astype(F) + F(1)
    x = ((bits & np.uint32(~0x7F800000 & WORD)) | np.uint32(0x3F000000)).view(F)
    mask = x < F(0.707106781186547524)
    tmp = np.where(mask, x, F(0))
    x = (x - F(1)).astype(F)
    e = (e - np.where(mask, F(1), F(0))).astype(F)
    x = (x + tmp).astype(F)
    z = (x * x).astype(F)
    y = np.full_like(x, F(_LOG_P[0]))
    for p in _LOG_P[1:]:
        y = _fma(y, x, F(p))
    y = _fma((y * x).astype(F), z, (e * F(-2.12194440e-4)).astype(F))
    y = _fma(z, F(-0.5), y)
    x = (x + y).astype(F)
    return _fma(e, F(0.693359375), x)


def _poly(z: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    y = np.full_like(z, F(coefficients[0]))
    for c in coefficients[1:]:
        y = _fma(y, z, F(c))
    return (y * z).astype(F)


def _sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun.h's sincos256_ps (Cephes' sinf/cosf), step by step in float32."""
    sign_sin = np.signbit(x)
    x = np.abs(x).astype(F)
    j = ((x * F(1.27323954473516)).astype(F).astype(np.int32) + 1) & ~1
    y = j.astype(F)
    swap_sin = (j & 4) != 0
    poly = (j & 2) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fma(y, F(dp), x)
    sign_cos = (~(j - 2) & 4) != 0
    sign_sin = sign_sin ^ swap_sin
    z = (x * x).astype(F)
    c = _poly(z, (2.443315711809948e-005, -1.388731625493765e-003, 4.166664568298827e-002))
    c = (_fma(c, z, -(z * F(0.5)).astype(F)) + F(1)).astype(F)
    s = _fma(_poly(z, (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)), x, x)
    ysin2, ysin1 = np.where(poly, s, F(0)), np.where(poly, F(0), c)
    sin = (ysin1 + ysin2).astype(F)
    cos = ((c - ysin1).astype(F) + (s - ysin2).astype(F)).astype(F)
    return np.where(sign_sin, -sin, sin), np.where(sign_cos, -cos, cos)
