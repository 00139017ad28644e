"""The ops only gradients make: broadcast_to (the gradient of sum), scatter (of indexing) and
where (of a choice by a constant mask). engine.autograd.higher's grad() builds them on graph
nodes; the language has no spelling for them, so they are not in OPS (registry.GRADIENT_OPS
lists them). Their grad_fn is the node PyTorch makes for the same gradient under
create_graph=True."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.ops.base import Array, Grads, Math, Needs, Op
from engine.autograd.ops.shape import index_text, torch_views
from engine.autograd.ops.shapes import broadcast_shape

if TYPE_CHECKING:
    from engine.autograd.value import Value


class BroadcastTo(Op):
    """f(x) = x broadcast to `shape`;  x̄ += ū summed back to x's shape."""

    name, symbol, rules = "broadcast_to", "broadcast", ("ū summed back to {0}'s shape",)
    jvp_rule, saved, grad_fn_name = "broadcast {d0}", (), "ExpandBackward0"
    torch_name, jax_name = "torch.broadcast_to", "jnp.broadcast_to"

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = tuple(int(d) for d in shape)

    def params(self) -> dict[str, Any]:
        return {"shape": list(self.shape)}

    def compute(self, x: np.ndarray) -> np.ndarray:
        return np.broadcast_to(x, self.shape).copy()

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (m.sum_to(g, ins[0].shape),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(t[0])  # linear: the op itself, on the tangent


class Scatter(Op):
    """f(x) = zeros(shape) with x written at `key` (the gradient of indexing);  x̄ += ū[key]."""

    name, symbol, rules = "scatter", "scatter", ("ū[key]",)
    jvp_rule, saved = "scatter {d0}", ()
    torch_name = jax_name = None  # made inside grad(), never written

    def __init__(self, shape: tuple[int, ...], key: tuple[Any, ...]) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.key = key

    def params(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "key": index_text(self.key)}

    def compute(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(self.shape)
        out[self.key] = x
        return out

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (g[self.key],)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(t[0])  # linear: the op itself, on the tangent

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        """The backward of the first view x[key] applied (the last one undone):
        SelectBackwardBackward0, SliceBackwardBackward0; None where x[key] applied none (its
        gradient passes through as it is)."""
        views = torch_views(self.key, self.shape)
        return f"{views[0]}BackwardBackward0" if views else None


class Where(Op):
    """f(a, b) = a where `cond` else b (cond a constant mask);  ā += ū·[cond],  b̄ += ū·[¬cond]."""

    name, symbol, rules = "where", "where", ("ū where cond", "ū where not cond")
    jvp_rule, saved, grad_fn_name = "where(cond, {d0}, {d1})", (), "WhereBackward0"
    torch_name, jax_name = "torch.where", "jnp.where"

    def __init__(self, cond: np.ndarray) -> None:
        self.cond = np.asarray(cond, dtype=bool)

    def params(self) -> dict[str, Any]:
        return {"true": int(self.cond.sum()), "of": int(self.cond.size)}

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        return broadcast_shape(self.cond.shape, *shapes)

    def compute(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where(self.cond, a, b)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        return (
            m.sum_to(m.where(self.cond, g, 0.0), a.shape) if needs[0] else None,
            m.sum_to(m.where(self.cond, 0.0, g), b.shape) if needs[1] else None,
        )

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return self.compute(t[0], t[1])  # linear: the op itself, on the tangents
