"""The one number format of the drawing, the exports and the page (tests/cases/number_format.json
holds the cases every implementation passes), and the shape badge."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal


@functools.lru_cache(maxsize=8192)
def fmt(x: float | int | None) -> str:
    """The one display precision: 4 significant digits, trailing zeros dropped, an exponent
    outside 1e-4 ≤ |x| < 1e4 (as printf's %.4g). Rounds ties away from zero on the exact
    binary value, as JavaScript's toExponential does, so static/js/format.js prints the same
    digits."""
    if x is None:
        return "—"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    ax = abs(x)
    near = f"{ax:.6e}"
    if near[5:8] != "500":
        # Not a tie, so printf's rounding (half to even) is the same as ours: C speed.
        sci = f"{ax:.3e}"
        digits, e = sci[0] + sci[2:5], int(sci[6:])
    else:  # maybe exactly halfway: round the exact binary value half away from zero
        d = Decimal(ax)
        e = d.adjusted()
        mant = d.scaleb(-e).quantize(Decimal("1.000"), rounding=ROUND_HALF_UP)
        if mant >= 10:
            mant, e = Decimal("1.000"), e + 1
        digits = str(mant).replace(".", "")  # four digits
    if -4 <= e < 4:
        if e >= 0:
            whole, frac = digits[: e + 1], digits[e + 1 :]
        else:
            whole, frac = "0", "0" * (-e - 1) + digits
        frac = frac.rstrip("0")
        return sign + whole + ("." + frac if frac else "")
    frac = digits[1:].rstrip("0")
    return f"{sign}{digits[0]}{'.' + frac if frac else ''}e{e}"


def shape_text(shape: Sequence[int]) -> str:
    """A shape badge: ``[3]``, ``[2×3]``; a scalar has none."""
    return "[" + "×".join(str(int(s)) for s in shape) + "]" if shape else ""
