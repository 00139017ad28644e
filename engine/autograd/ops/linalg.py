"""The matrix product `a @ b`, under NumPy's rules (batched over leading dims; a 1-d side is a
vector)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.ops.base import Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import op_function
from engine.autograd.ops.shapes import OpError, broadcast_shape, footprint, shape_text

if TYPE_CHECKING:
    from engine.autograd.value import Value

# PyTorch's node for a product of two sides of at most 2 dims, by their dims.
_SMALL_GRAD_FNS = {
    (1, 1): "DotBackward0",
    (2, 1): "MvBackward0",
    (1, 2): "SqueezeBackward4",  # the vector as one row, mm, then that row squeezed away
    (2, 2): "MmBackward0",
}


class MatMul(Op):
    """C = A @ B (NumPy rules, batched over leading dims; a 1-d side is a vector).

    Ā += ū·Bᵀ,  B̄ += Aᵀ·ū, each summed over the batch dims it was broadcast along.
    """

    name, symbol, rules = "matmul", "@", ("ū·{1}ᵀ", "{0}ᵀ·ū")
    arity, operator, function = 2, "@", "matmul"
    jvp_rule = "{d0}@{1} + {0}@{d1}"
    torch_name, jax_name = "torch.matmul", "jnp.matmul"

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        (a, b), (ta, tb) = x, t
        total = np.zeros(np.shape(out))
        if np.any(ta):
            total = total + np.matmul(ta, b)
        if np.any(tb):
            total = total + np.matmul(a, tb)
        return total

    def saves(self, needs: Needs) -> tuple[str, ...]:
        return (("in1",) if needs[0] else ()) + (("in0",) if needs[1] else ())  # the other one

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        """As torch.matmul dispatches: dot, mv, mm for small sides; with a batch, one mm over
        the batch folded into rows, or bmm, then a view back (UnsafeViewBackward0). A matrix
        times a batch is folded from the other side when the matrix needs a grad, and comes
        back transposed: copied (CloneBackward0) unless the result is one row or one column.
        A 3-d side with a batch of 1 against another batch is squeezed first if it needs a
        grad."""
        a, b = inputs
        sa, sb = a.data.shape, b.data.shape
        if len(sa) <= 2 and len(sb) <= 2:
            return _SMALL_GRAD_FNS[(len(sa), len(sb))]
        if len(sa) == len(sb) == 3 and sa[0] != sb[0]:
            if sa[0] == 1 and a.requires_grad:
                sa = sa[1:]
            elif sb[0] == 1 and b.requires_grad:
                sb = sb[1:]
        if len(sa) == 2 and len(sb) >= 3 and a.requires_grad:
            return "TransposeBackward0" if 1 in (sa[0], sb[-1]) else "CloneBackward0"
        return "UnsafeViewBackward0"

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        a, b = shapes
        if not a or not b:
            raise OpError("matmul_scalar", "shape")
        a2 = (1, *a) if len(a) == 1 else a
        b2 = (*b, 1) if len(b) == 1 else b
        if a2[-1] != b2[-2]:
            raise OpError(
                "matmul_shapes", "shape", a=shape_text(a), b=shape_text(b),
                columns=a2[-1], rows=b2[-2],
            )  # fmt: skip
        batch = broadcast_shape(a2[:-2], b2[:-2])
        core = ((a2[-2],) if len(a) > 1 else ()) + ((b2[-1],) if len(b) > 1 else ())
        return batch + core

    def work_elements(self, *shapes: tuple[int, ...]) -> int:
        """The gradients are made over the whole broadcast batch before `sum_to` folds them
        back: ū·Bᵀ has the batch and A's matrix shape, Aᵀ·ū the batch and B's. With A
        (128, 1, 128) and B (128, 128), each 16,384 elements as is the result, B̄ starts as
        (128, 128, 128): two million."""
        a, b = shapes
        if len(a) <= 2 and len(b) <= 2:  # no batch (the usual case, kept quick): Ā is A's
            rows = a[0] if len(a) == 2 else 1  # shape, B̄ B's, and the result rows × cols
            cols = b[1] if len(b) == 2 else 1
            return max(footprint(a), footprint(b), max(rows, 1) * max(cols, 1))
        out = self.out_shape(*shapes)
        a2 = (1, *a) if len(a) == 1 else a
        b2 = (*b, 1) if len(b) == 1 else b
        batch = footprint(broadcast_shape(a2[:-2], b2[:-2]))
        return max(
            footprint(out),
            footprint(a),
            footprint(b),
            batch * footprint(a2[-2:]),
            batch * footprint(b2[-2:]),
        )

    def compute(self, a: Array, b: Array) -> Array:
        return np.matmul(a, b)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        # Treat a vector as a matrix with one row (a) or one column (b), as NumPy does.
        a2 = m.reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
        b2 = m.reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = m.expand_dims(g2, -2 if b.ndim > 1 else -1)
        if b.ndim == 1:
            g2 = m.expand_dims(g2, -1)
        ga = gb = None
        if needs[0]:
            ga = m.reshape(m.sum_to(m.matmul(g2, m.swap_last(b2)), a2.shape), a.shape)
        if needs[1]:
            gb = m.reshape(m.sum_to(m.matmul(m.swap_last(a2), g2), b2.shape), b.shape)
        return ga, gb


matmul = op_function(MatMul)
