"""The library's objects with state of their own: the optimizers (`torch.optim.SGD`, `Adam`,
their `step()` and `zero_grad()`, as PyTorch computes them: engine/autograd/optim.py) and
NumPy's generator (`np.random.default_rng(0)` and its draws, NumPy's own numbers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import optim
from engine.autograd.value import Value
from engine.language.calls import Signature
from engine.language.sequences import items_of
from engine.language.values import Function, Opaque
from engine.library.functions import number, sizes
from engine.library.transforms import special

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


# --- optimizers ---------------------------------------------------------------------------
def parameters(it: Interpreter, params: Any, node: Any) -> list[Value]:
    items = items_of(it, params, node)
    out = []
    for p in items:
        v = it.tensor(p, node)
        if v.kind != "leaf":
            raise it.error("optimizer_leaf", node, "arguments")
        out.append(v)
    return out


@special("SGD", "params", lr=0.001, momentum=0.0, dampening=0.0, weight_decay=0.0,
         nesterov=False, maximize=False, usage="torch.optim.SGD(params, lr=0.1)")  # fmt: skip
def sgd(it: Interpreter, node: Any, params: Any, lr: Any, momentum: Any, dampening: Any,
        weight_decay: Any, nesterov: Any, maximize: Any) -> Opaque:  # fmt: skip
    rule = optim.SGD(number(it, lr, node), number(it, momentum, node),
                     number(it, dampening, node), number(it, weight_decay, node),
                     bool(nesterov), bool(maximize))  # fmt: skip
    return Opaque("optimizer", {"params": parameters(it, params, node), "rule": rule})


@special("Adam", "params", lr=0.001, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
         amsgrad=False, maximize=False, usage="torch.optim.Adam(params, lr=0.01)")  # fmt: skip
def adam(it: Interpreter, node: Any, params: Any, lr: Any, betas: Any, eps: Any,
         weight_decay: Any, amsgrad: Any, maximize: Any) -> Opaque:  # fmt: skip
    b1, b2 = (number(it, b, node) for b in items_of(it, betas, node))
    rule = optim.Adam(number(it, lr, node), b1, b2, number(it, eps, node),
                      number(it, weight_decay, node), bool(amsgrad), bool(maximize))  # fmt: skip
    return Opaque("optimizer", {"params": parameters(it, params, node), "rule": rule})


def step(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> None:
    """opt.step(): every parameter with a grad updated by the rule, in place, as PyTorch."""
    opt: Opaque = args[0]
    rule = opt.state["rule"]
    it.count("ops", node, len(opt.state["params"]))
    for i, p in enumerate(opt.state["params"]):
        if p.grad is None:
            continue
        it.count("work", node, p.data.size)
        it.passes.updated(p, rule.update(i, np.asarray(p.data), np.asarray(p.grad)))


def zero_grad(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> None:
    """opt.zero_grad(): grads back to None (PyTorch's set_to_none=True, the default)."""
    none = kwargs.get("set_to_none", True)
    for p in args[0].state["params"]:
        if p.grad is not None:
            it.passes.set_grad(p, None if none else np.zeros(p.data.shape))


# --- NumPy's generator ----------------------------------------------------------------------
@special("default_rng", "seed?", usage="np.random.default_rng(0)")
def default_rng(it: Interpreter, node: Any, seed: Any) -> Opaque:
    if seed is None:
        it.warn("unseeded_generator", node)
    n = 0 if seed is None else it.whole(seed, node)
    if n < 0:
        raise it.error("seed_negative", node, "static")
    return Opaque("generator", {"rng": np.random.default_rng(n)})


def draw(kind: str) -> Function:
    """rng.standard_normal(size), rng.random(size), rng.normal(loc, scale, size),
    rng.uniform(low, high, size): NumPy's own numbers, from that generator."""
    names = {"normal": ("loc", "scale"), "uniform": ("low", "high")}.get(kind, ())
    sig = Signature(kind, ("self", *(f"{n}?" for n in names), "size?"), (), f"rng.{kind}(…)")

    def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
        a = sig.bind(it, args, kwargs, node)
        rng = a["self"].state["rng"]
        size = a["size"]
        shape = () if size is None else sizes(it, (size,), node)
        it.check_shape(shape, node)
        params = [number(it, a[n], node) for n in names if a[n] is not None]
        data = getattr(rng, kind)(*params, size=shape) if params else getattr(rng, kind)(shape)
        return it.constant(np.asarray(data, dtype=np.float64), node)

    return Function(kind, run)


OBJECT_METHODS: dict[str, dict[str, Function]] = {
    "optimizer": {"step": Function("step", step), "zero_grad": Function("zero_grad", zero_grad)},
    "generator": {k: draw(k) for k in ("standard_normal", "random", "normal", "uniform")},
}
