"""The neural-network ops: softmax and log_softmax along an axis, and the fused losses
cross_entropy (softmax + negative log-likelihood) and mse."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.autograd.ops.base import ARRAY_MATH, Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import apply, op_function
from engine.autograd.ops.reduce import normalise_axes
from engine.autograd.ops.shapes import OpError, broadcast_shape, footprint, shape_text
from engine.autograd.value import Value


class Softmax(Op):
    """s = e^z / Σ e^z along `axis` (shifted by the max, so it never overflows);
    z̄ += s·(ū − Σ ū·s)."""

    name, symbol, rules = "softmax", "softmax", ("{out}·(ū − Σ ū·{out})",)
    function, keywords, method = "softmax", ("axis",), True
    jvp_rule, saved, grad_fn_name = "{out}·({d0} − Σ {out}·{d0})", ("out",), "SoftmaxBackward0"
    torch_name, jax_name = "torch.softmax", "jax.nn.softmax"

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def params(self) -> dict[str, Any]:
        return {"axis": self.axis}

    def compute(self, z: Array) -> Array:
        if z.ndim == 0:
            raise OpError("softmax_scalar", "shape", name=self.name)
        normalise_axes(self.axis, z.ndim, self.name)
        if z.size == 0:  # an empty result (np.max has no identity to start an empty axis)
            return np.zeros(z.shape)
        return ARRAY_MATH.softmax(z, self.axis)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (out * (g - m.sum(g * out, axis=self.axis, keepdims=True)),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return out * (t[0] - np.sum(out * t[0], axis=self.axis, keepdims=True))


class LogSoftmax(Softmax):
    """l = z − log Σ e^z along `axis`;  z̄ += ū − softmax(z)·Σ ū."""

    name, symbol, rules = "log_softmax", "log_softmax", ("ū − softmax({0})·Σ ū",)
    function = "log_softmax"
    jvp_rule, grad_fn_name = "{d0} − Σ softmax({0})·{d0}", "LogSoftmaxBackward0"
    torch_name, jax_name = "torch.log_softmax", "jax.nn.log_softmax"

    def compute(self, z: Array) -> Array:
        if z.ndim == 0:
            raise OpError("softmax_scalar", "shape", name=self.name)
        normalise_axes(self.axis, z.ndim, self.name)
        if z.size == 0:  # as softmax: an empty result
            return np.zeros(z.shape)
        shifted = z - np.max(z, axis=self.axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=self.axis, keepdims=True))

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (g - m.exp(out) * m.sum(g, axis=self.axis, keepdims=True),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        return t[0] - np.sum(np.exp(out) * t[0], axis=self.axis, keepdims=True)


class CrossEntropy(Op):
    """Softmax + negative log-likelihood, fused: L = mean over rows of (log Σ e^z − z[t]);
    z̄ += ū·(softmax(z) − onehot(t)) / N."""

    name, symbol, rules = "cross_entropy", "cross_entropy", ("ū·(softmax({0}) − onehot(t))/N",)
    function = "cross_entropy"
    jvp_rule = "Σ (softmax({0}) − onehot(t))·{d0} / N"
    saved, grad_fn_name = ("in0",), "NllLossBackward0"
    # JAX has no cross-entropy of its own: the lesson writes it with jax.nn.log_softmax
    torch_name, jax_name = "F.cross_entropy", None

    def __init__(self, labels: int | Sequence[int]) -> None:
        try:
            if isinstance(labels, int | np.integer):
                self.labels: int | list[int] = operator.index(labels)
            else:
                self.labels = [operator.index(t) for t in labels]
        except TypeError:
            raise OpError("labels_whole", "labels") from None

    def params(self) -> dict[str, Any]:
        return {"labels": self.labels}

    def onehot(self, z: Array) -> Array:
        if z.ndim not in (1, 2):
            raise OpError("logits_shape", "shape", shape=shape_text(z.shape))
        labels = self.labels
        if z.ndim == 1:
            if not isinstance(labels, int):
                raise OpError("labels_one", "labels")
            rows = [labels]
        elif isinstance(labels, int) or len(labels) != z.shape[0]:
            raise OpError("labels_per_row", "labels", shape=shape_text(z.shape), n=z.shape[0])
        else:
            rows = labels
        classes = z.shape[-1]
        if classes == 0:
            raise OpError("logits_no_class", "shape", shape=shape_text(z.shape))
        for t in rows:
            if not 0 <= t < classes:
                raise OpError("label_not_class", "labels", t=t, n=classes, last=classes - 1)
        onehot = np.zeros((len(rows), classes))
        onehot[np.arange(len(rows)), list(rows)] = 1.0
        return onehot.reshape(z.shape)

    def compute(self, z: Array) -> Array:
        onehot = self.onehot(z)
        shifted = z - np.max(z, axis=-1, keepdims=True)
        log_p = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
        rows = 1 if z.ndim == 1 else z.shape[0]
        return np.asarray(-np.sum(onehot * log_p) / rows)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        z = ins[0]
        rows = 1 if z.ndim == 1 else z.shape[0]
        return (g * (m.softmax(z, -1) - self.onehot(z)) / float(rows),)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        z = x[0]
        rows = 1 if z.ndim == 1 else z.shape[0]
        return np.asarray(np.sum((ARRAY_MATH.softmax(z, -1) - self.onehot(z)) * t[0]) / rows)


class Mse(Op):
    """L = mean((p − y)²);  p̄ += ū·2(p − y)/n,  ȳ += −ū·2(p − y)/n (n = elements)."""

    name, symbol, rules = "mse", "mse", ("ū·2({0}−{1})/n", "−ū·2({0}−{1})/n")
    arity, function = 2, "mse"
    jvp_rule, saved, grad_fn_name = "Σ 2({0}−{1})({d0}−{d1})/n", ("in0", "in1"), "MseLossBackward0"
    # JAX has no mse of its own: the lesson writes ((p - y)**2).mean()
    torch_name, jax_name = "F.mse_loss", None

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        broadcast_shape(*shapes)
        return ()

    def work_elements(self, *shapes: tuple[int, ...]) -> int:
        """p − y is made at the broadcast shape, forward and backward: `mse` of (16384, 1)
        and (1, 16384) returns one number but computes 268 million."""
        return max(footprint(s) for s in (*shapes, broadcast_shape(*shapes)))

    def compute(self, p: Array, y: Array) -> Array:
        if p.size == 0 or y.size == 0:
            raise OpError("mse_empty", "shape")
        return np.asarray(np.mean((p - y) ** 2))

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        p, y = ins
        d = p - y
        scaled = g * 2.0 * d / float(max(d.size, 1))
        return (
            m.sum_to(scaled, p.shape) if needs[0] else None,
            m.sum_to(-scaled, y.shape) if needs[1] else None,
        )

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        p, y = x
        n = max(np.broadcast(p, y).size, 1)
        return np.asarray(np.sum(2 * (p - y) * (t[0] - t[1])) / n)


def softmax(z: Any, axis: int = -1) -> Value:
    return apply(Softmax(axis), z)


def log_softmax(z: Any, axis: int = -1) -> Value:
    return apply(LogSoftmax(axis), z)


def cross_entropy(z: Any, labels: int | Sequence[int]) -> Value:
    return apply(CrossEntropy(labels), z)


mse = op_function(Mse)
