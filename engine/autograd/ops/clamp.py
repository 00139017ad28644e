"""clamp (NumPy's clip): a value held between two fixed bounds, either of which may be absent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.autograd.ops.base import Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import apply
from engine.autograd.value import Value


class Clamp(Op):
    """f(x) = min(max(x, lo), hi) elementwise (a bound that is None is no bound);
    x̄ += ū where lo ≤ x ≤ hi, else 0. As PyTorch: a value on a bound passes its gradient,
    and with lo > hi every element is hi, with gradient 0."""

    name, symbol, rules = "clamp", "clamp", ("ū·[lo ≤ {0} ≤ hi]",)
    function, keywords = "clamp", ("min", "max")
    jvp_rule, saved, grad_fn_name = "[{lo} ≤ {0} ≤ {hi}]·{d0}", ("in0",), "ClampBackward1"
    torch_name, jax_name = "torch.clamp", "jnp.clip"
    kink = True  # at each bound

    def __init__(self, lo: float | None = None, hi: float | None = None) -> None:
        self.lo = None if lo is None else float(lo)
        self.hi = None if hi is None else float(hi)

    def params(self) -> dict[str, Any]:
        return {"min": self.lo, "max": self.hi}

    def inside(self, x: Any) -> Any:
        """The elements within both bounds (comparisons of a graph node are constants too)."""
        keep = np.ones(x.shape, dtype=bool)
        if self.lo is not None:
            keep &= x >= self.lo
        if self.hi is not None:
            keep &= x <= self.hi
        return keep

    def compute(self, x: Array) -> Array:
        out = x if self.lo is None else np.maximum(x, self.lo)
        return np.asarray(out if self.hi is None else np.minimum(out, self.hi), dtype=np.float64)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (g * m.mask(self.inside(ins[0])),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.inside(x[0]) * t[0]

    def rule_values(self) -> dict[str, str]:
        """Its bounds as numbers; an absent one is no bound."""
        lo, hi = self.lo, self.hi
        return {"lo": "−∞" if lo is None else f"{lo:g}", "hi": "∞" if hi is None else f"{hi:g}"}

    def kink_at(self, *ins: Array) -> tuple[Array, ...]:
        return tuple(np.asarray(ins[0] - b) for b in (self.lo, self.hi) if b is not None)


def clamp(x: Any, lo: float | None = None, hi: float | None = None) -> Value:
    return apply(Clamp(lo, hi), x)
