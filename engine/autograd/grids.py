"""Evenly spaced numbers exactly as PyTorch's CPU kernels compute them (float64), so a
program's `arange`/`linspace` grid is torch's to the last bit: a relu′ at a grid point that is
0 in exact arithmetic depends on it (NumPy's `arange(-8, 8, 0.1)[80]` is −2.8e-14, torch's
+4.4e-16).

torch's arange writes four lanes at a time: lane j of the block at index b is
fma(step, j, fma(step, b, start)); its linspace is fma(step, i, start) for the first half and
fma(−step, n−1−i, end) for the rest. A fused multiply-add rounds once, so it is computed here
exactly (rationals) where the numbers are not whole: float64 products of whole numbers below
2⁵³ are exact anyway, and then plain arithmetic gives the same bits.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

LANES = 4  # the vector width of torch's arange kernel on x86 (Vectorized<double>)


def _exact(a: float, b: float) -> bool:
    return float(a).is_integer() and float(b).is_integer() and max(abs(a), abs(b)) < 2**26


def _fma(a: Fraction, b: int, c: Fraction) -> float:
    return float(a * b + c)


def arange(start: float, step: float, n: int) -> np.ndarray:
    """n numbers from `start` by `step`, as torch.arange(start, end, step) makes them."""
    if _exact(start, step):
        return start + step * np.arange(n, dtype=np.float64)
    s, a = Fraction(step), Fraction(start)
    out = np.empty(n, dtype=np.float64)
    for block in range(0, n, LANES):
        base = Fraction(_fma(s, block, a))
        for j in range(min(LANES, n - block)):
            out[block + j] = _fma(s, j, base)
    return out


def linspace(start: float, end: float, n: int) -> np.ndarray:
    """n numbers from `start` to `end`, as torch.linspace makes them."""
    if n == 1:
        return np.array([float(start)])
    step = (end - start) / (n - 1)
    half = n // 2
    if not math.isfinite(step):
        return np.linspace(start, end, n)
    if _exact(start, step) and _exact(end, step):
        i = np.arange(n, dtype=np.float64)
        return np.where(i < half, start + step * i, end - step * (n - 1 - i))
    s, a, b = Fraction(step), Fraction(start), Fraction(end)
    return np.array(
        [_fma(s, i, a) if i < half else _fma(-s, n - 1 - i, b) for i in range(n)], dtype=np.float64
    )
