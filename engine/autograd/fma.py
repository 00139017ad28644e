"""A fused multiply-add on float64 arrays, rounded once as the hardware's FMA rounds it, for the
kernels of PyTorch's that use one (its optimizers' `add_(…, alpha=)`, `lerp_`, `addcmul_`):
NumPy has none, and `a * b + c` rounds twice, which shows in the last digit a training loop
prints.

Emulated exactly (Boldo and Melquiond, "Emulation of a FMA and correctly rounded sums: proved
algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008, algorithm 5.4):

    uh + ul = a·b          (exact: Dekker's product, Veltkamp's split)
    th + tl = c + uh       (exact: Knuth's TwoSum)
    v = RO(tl + ul)        (rounded to odd: the last bit set when the sum is inexact)
    fma = RN(th + v)

That is exact when nothing overflows or underflows. Where a product's halves would overflow
or a result is not finite, the plain `a * b + c` is used; where a number is so small that the
halves' product could lose bits (below 2⁻⁹⁶⁰, rare), the element is computed in rationals.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's constant for float64
_TINY = 2.0**-960


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: Any) -> tuple[Any, Any]:
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _two_prod(a: Any, b: Any) -> tuple[Any, Any]:
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_to_odd_sum(a: Any, b: Any) -> Any:
    s, err = _two_sum(a, b)
    bits = np.asarray(s, dtype=np.float64).view(np.int64)
    inexact = (err != 0) & ((bits & 1) == 0)
    toward = np.where(err > 0, np.inf, -np.inf)
    return np.where(inexact, np.nextafter(s, toward), s)


def fma(a: Any, b: Any, c: Any) -> np.ndarray:
    """a·b + c rounded once (float64, broadcast)."""
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    with np.errstate(all="ignore"):
        plain = a * b + c
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        out = th + _round_to_odd_sum(tl, ul)
        safe = np.isfinite(out) & np.isfinite(ul) & (np.abs(a) < 1e150) & (np.abs(b) < 1e150)
        out = np.where(safe, out, plain)
        tiny = np.minimum(np.abs(np.where(a * b == 0, np.inf, a * b)),
                                  np.abs(np.where(c == 0, np.inf, c))) < _TINY  # fmt: skip
    if tiny.any():
        out = np.array(out, dtype=np.float64)
        ab = np.broadcast_arrays(a, b, c, out)
        for i in zip(*np.nonzero(tiny), strict=True) if tiny.ndim else [()]:
            x, y, z = (float(v[i]) for v in ab[:3])
            out[i] = float(Fraction(x) * Fraction(y) + Fraction(z))
    return out
