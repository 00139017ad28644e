"""The optimizers a training loop steps with, computed as PyTorch 2.13's `torch.optim` computes
them (its single-tensor formulas, float64), each parameter by its index in the list given:

- SGD:  d = ±g (+ wd·p);  with momentum, b = d the first time, then b = μ·b + (1 − τ)·d, and
  d = b (or d + μ·b, Nesterov);  p = p − lr·d.
- Adam: m = lerp(m, g, 1 − β₁);  v = β₂·v + (1 − β₂)·g²;  p = p − (lr / (1 − β₁ᵗ)) · m /
  (√v / √(1 − β₂ᵗ) + ε)  (AMSGrad: v replaced by its running maximum in the denominator).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

Array = np.ndarray


def lerp(start: Array, end: Array, weight: float) -> Array:
    """PyTorch's lerp: the formula it uses for each half of the weight's range."""
    if weight < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


@dataclass
class SGD:
    lr: float
    momentum: float = 0.0
    dampening: float = 0.0
    weight_decay: float = 0.0
    nesterov: bool = False
    maximize: bool = False
    buffers: dict[int, Array] = field(default_factory=dict)

    def update(self, i: int, p: Array, g: Array) -> Array:
        d = -g if self.maximize else g
        if self.weight_decay:
            d = d + self.weight_decay * p
        if self.momentum:
            b = self.buffers.get(i)
            b = (
                np.array(d, dtype=np.float64)
                if b is None
                else self.momentum * b + (1 - self.dampening) * d
            )
            self.buffers[i] = b
            d = d + self.momentum * b if self.nesterov else b
        return p + (-self.lr) * d


@dataclass
class Adam:
    lr: float = 0.001
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    amsgrad: bool = False
    maximize: bool = False
    state: dict[int, dict[str, Array | int]] = field(default_factory=dict)

    def update(self, i: int, p: Array, g: Array) -> Array:
        g = -g if self.maximize else g
        s = self.state.setdefault(i, {"step": 0, "m": np.zeros_like(p), "v": np.zeros_like(p)})
        s["step"] = step = int(s["step"]) + 1
        if self.weight_decay:
            g = g + self.weight_decay * p
        m = s["m"] = lerp(s["m"], g, 1 - self.beta1)  # type: ignore[arg-type]
        v = s["v"] = self.beta2 * s["v"] + (1 - self.beta2) * (g * g)
        correction1 = 1 - self.beta1**step
        correction2_sqrt = math.sqrt(1 - self.beta2**step)
        if self.amsgrad:
            v = s["vmax"] = np.maximum(s.get("vmax", v), v)  # type: ignore[call-overload]
        denom = np.sqrt(v) / correction2_sqrt + self.eps
        return p + (-(self.lr / correction1)) * (m / denom)
