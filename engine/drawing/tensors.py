"""How a tensor is shown: few enough numbers to print, else a heat map of block means."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from engine.drawing.style import HEAT_COLS, HEAT_ROWS, SMALL_COLS, SMALL_TENSOR, SMALL_VECTOR


def as_array(v: Any) -> np.ndarray:
    """A JSON value (None: 0) as a float array."""
    return np.asarray(v if v is not None else 0.0, dtype=float)


def heat_grid(v: Any) -> np.ndarray:
    """A tensor as at most HEAT_ROWS × HEAT_COLS block means (rows = leading dims); an empty
    tensor has no blocks (0 × 0)."""
    a = as_array(v)
    if a.size == 0:
        return np.zeros((0, 0))
    a = a.reshape(1, -1) if a.ndim <= 1 else a.reshape(-1, a.shape[-1])
    rows, cols = a.shape
    r = min(rows, HEAT_ROWS)
    c = min(cols, HEAT_COLS)
    out = np.zeros((r, c))
    rb = np.linspace(0, rows, r + 1).astype(int)
    cb = np.linspace(0, cols, c + 1).astype(int)
    for i in range(r):
        for j in range(c):
            out[i, j] = a[rb[i] : rb[i + 1], cb[j] : cb[j + 1]].mean()
    return out


def heat_colour(x: float, scale: float) -> str:
    """Diverging white-centred colour: blue for negative, red for positive."""
    t = 0.0 if scale <= 0 else max(-1.0, min(1.0, x / scale))
    target = (214, 96, 77) if t > 0 else (67, 147, 195)
    t = abs(t)
    rgb = [int(255 + (c - 255) * t + 0.5) for c in target]
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def max_abs(values: Iterable[Any]) -> float:
    """The largest magnitude in any of `values` (a heat map's scale); 0 for none."""
    m = 0.0
    for v in values:
        a = as_array(v)
        if a.size:
            m = max(m, float(np.max(np.abs(a))))
    return m


def is_empty(shape: Sequence[int], value: Any) -> bool:
    """A tensor without numbers. Its shape says so; its value may not tell (JSON writes
    zeros(2, 0, 3) as [[], []], a 2×0 matrix), so both are asked."""
    return math.prod(int(s) for s in shape) == 0 or as_array(value).size == 0


def is_small(shape: Sequence[int]) -> bool:
    """Few enough numbers to print: a vector of up to 6, a matrix of up to 4 columns."""
    if len(shape) == 1:
        return shape[0] <= SMALL_VECTOR
    return len(shape) == 2 and shape[1] <= SMALL_COLS and int(np.prod(shape)) <= SMALL_TENSOR


def matrix(v: Any) -> list[list[float]]:
    """A vector or matrix as rows of numbers (a vector is one row)."""
    a = as_array(v)
    return a.reshape(1, -1).tolist() if a.ndim <= 1 else a.tolist()
