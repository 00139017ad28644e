"""The optimizers a training loop steps with, computed as PyTorch 2.13's `torch.optim` computes
them (its single-tensor formulas, float64), each parameter by its index in the list given:

- SGD:  d = ±g (+ wd·p);  with momentum, b = d the first time, then b = μ·b + (1 − τ)·d, and
  d = b (or d + μ·b, Nesterov);  p = p − lr·d.
- Adam: m = lerp(m, g, 1 − β₁);  v = β₂·v + (1 − β₂)·g²;  p = p − (lr / (1 − β₁ᵗ)) · m /
  (√v / √(1 − β₂ᵗ) + ε)  (AMSGrad: v replaced by its running maximum in the denominator).

Rounded as torch's CPU kernels round them, to the last bit: `x.add_(y, alpha=a)` is
fma(y, a, x), `lerp_` an fma, `addcmul_(t1, t2, value=c)` fma(c·t1, t2, x), and
`addcdiv_(t1, t2, value=c)` x + (c·t1)/t2, each checked against torch 2.13 in
tests/test_optim_rounding.py. SGD is torch's to the last bit. Adam is to within an ulp or two:
torch's CPU `sqrt` of a float64 tensor is not correctly rounded (one ulp low for about 0.8% of
elements, measured on this machine's build), and NumPy's is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.autograd.fma import fma

Array = np.ndarray


def lerp(start: Array, end: Array, weight: float) -> Array:
    """PyTorch's lerp: the formula it uses for each half of the weight's range."""
    if weight < 0.5:
        return fma(weight, end - start, start)
    return fma(weight - 1, end - start, end)


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
            d = fma(p, self.weight_decay, d)  # grad.add(param, alpha=weight_decay)
        if self.momentum:
            b = self.buffers.get(i)
            b = (
                np.array(d, dtype=np.float64)
                if b is None
                else fma(d, 1 - self.dampening, b * self.momentum)  # mul_, then add_(alpha=)
            )
            self.buffers[i] = b
            d = fma(b, self.momentum, d) if self.nesterov else b
        return fma(d, -self.lr, p)  # param.add_(d, alpha=-lr)


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
            g = fma(p, self.weight_decay, g)
        m = s["m"] = lerp(s["m"], g, 1 - self.beta1)  # type: ignore[arg-type]
        c = 1 - self.beta2  # v.mul_(β₂).addcmul_(g, g, value=1 − β₂)
        v = s["v"] = fma(c * g, g, s["v"] * self.beta2)  # type: ignore[operator]
        correction1 = 1 - self.beta1**step
        correction2_sqrt = (1 - self.beta2**step) ** 0.5  # torch's own spelling: pow, not sqrt
        if self.amsgrad:
            v = s["vmax"] = np.maximum(s.get("vmax", v), v)  # type: ignore[call-overload]
        denom = np.sqrt(v) / correction2_sqrt + self.eps
        return p + ((-(self.lr / correction1)) * m) / denom  # addcdiv_(m, denom, value=…)
