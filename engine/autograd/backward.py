"""The reverse walk: seed the output's grad, then run each op's local backward in reverse
topological order, adding (`+=`) each contribution into its input's grad."""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from engine.autograd.graph import topological_order
from engine.autograd.ops import ARRAY_MATH, SCALAR_MATH, Op, OpError, is_finite, quiet
from engine.autograd.value import Value

ACCUMULATE = ("add", "assign")


class BackwardError(OpError):
    """A gradient became inf or NaN; `node` is the op whose local backward produced it."""

    def __init__(self, message: str, node: Value) -> None:
        super().__init__(message, "non_finite_grad")
        self.node = node


class Recorder(Protocol):
    def begin(self, topo: list[Value]) -> None: ...

    def seed(self, root: Value) -> None: ...

    def step(
        self,
        node: Value,
        contributions: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
    ) -> None:
        """One local backward: (argument index, contribution, grad before, grad after) per
        input edge that carried gradient. The list is the recorder's to keep: backward makes a
        new one per step, and never changes a grad in place, so the arrays stay as they were."""


def backward(
    root: Value,
    recorder: Recorder | None = None,
    accumulate: str = "add",
    order: str = "dfs",
) -> list[Value]:
    """Fill `.grad` for every node `root` depends on; returns the topological order used.

    `accumulate="assign"` is the classic bug (`=` where `+=` belongs), kept so the page can show
    what goes wrong: each contribution overwrites, even the second edge of `x*x`. Recording is
    off unless a recorder is passed, and then costs one test per step.
    """
    if accumulate not in ACCUMULATE:
        raise ValueError(f"accumulate must be one of {ACCUMULATE}, not {accumulate!r}")
    assign = accumulate == "assign"
    topo = topological_order(root, order)
    for node in topo:
        if node.requires_grad:
            data = node.data
            # The grads of scalars are float64 scalars (immutable: one zero serves all).
            node.grad = _ZERO if type(data) is _F64 or not data.shape else np.zeros(data.shape)
        else:
            node.grad = None
    data = root.data
    root.grad = _ONE if type(data) is _F64 or not data.shape else np.ones(data.shape)
    record = recorder is not None
    if record:
        recorder.begin(topo)  # type: ignore[union-attr]
        recorder.seed(root)  # type: ignore[union-attr]
    isfinite = math.isfinite
    with quiet():  # a non-finite grad is reported below, by name
        for node in reversed(topo):
            op = node.op
            if op is None or not node.requires_grad:
                continue  # leaves and constants: nothing to pass on
            data = node.data
            inputs = node.inputs
            if type(data) is _F64 and op.elementwise:
                # The forward's fast path made this node: an elementwise op on one or two
                # scalars. The op's scalar kernel, float64 scalars, no lists to build (a scalar
                # leaf or constant holds a 0-d array: `[()]` reads it as a float64 scalar).
                # The accumulation into each input is written out in place, not called: this
                # loop is what the engine's time per node is (a call per edge costs ~10%).
                a = inputs[0]
                x = a.data
                if type(x) is not _F64:
                    x = x[()] if not x.shape else None
                if len(inputs) == 2:
                    b = inputs[1]
                    y = b.data
                    if type(y) is not _F64:
                        y = y[()] if not y.shape else None
                    if x is not None and y is not None:
                        na = a.requires_grad
                        nb = b.requires_grad
                        ga, gb = op.scalar_grad(node.grad, x, y, data, na, nb)
                        if record:
                            edges: list[Any] = []
                        if na:
                            if type(ga) is not _F64:
                                ga = _checked(op, 0, ga, a, node)
                            elif not isfinite(ga):
                                raise _non_finite(node, ga)
                            before = a.grad
                            after = ga if assign else before + ga
                            a.grad = after
                            if record:
                                edges.append((0, ga, before, after))
                        if nb:
                            if type(gb) is not _F64:
                                gb = _checked(op, 1, gb, b, node)
                            elif not isfinite(gb):
                                raise _non_finite(node, gb)
                            before = b.grad  # after a's: `x*x` adds twice into one grad
                            after = gb if assign else before + gb
                            b.grad = after
                            if record:
                                edges.append((1, gb, before, after))
                        if record:
                            recorder.step(node, edges)  # type: ignore[union-attr]
                        continue
                elif x is not None and len(inputs) == 1:
                    ga = op.scalar_grad(node.grad, x, data)
                    if type(ga) is not _F64:
                        ga = _checked(op, 0, ga, a, node)
                    elif not isfinite(ga):
                        raise _non_finite(node, ga)
                    before = a.grad
                    after = ga if assign else before + ga
                    a.grad = after
                    if record:
                        recorder.step(node, [(0, ga, before, after)])  # type: ignore[union-attr]
                    continue
            # The general path: arrays (or scalars an op outside the fast path made).
            needs = []
            ins = []
            scalar = type(data) is _F64
            for x in inputs:
                needs.append(x.requires_grad)
                d = x.data
                if type(d) is _NDARRAY:
                    if d.shape:
                        scalar = False
                    else:
                        d = d[()]  # a 0-d leaf or constant, as a float64 scalar
                ins.append(d)
            grads = op.gradient(node.grad, ins, data, needs, SCALAR_MATH if scalar else ARRAY_MATH)
            edges = []  # (i, contribution, before, after) per edge
            i = -1
            for x, need, contribution in zip(inputs, needs, grads):  # noqa: B905
                i += 1
                if not need:
                    continue
                before = x.grad
                if type(contribution) is not _F64 or type(before) is not _F64:
                    contribution = _checked(op, i, contribution, x, node)
                elif not isfinite(contribution):
                    raise _non_finite(node, contribution)
                if assign:
                    after = contribution if type(contribution) is _F64 else contribution.copy()
                else:
                    after = before + contribution
                x.grad = after
                if record:
                    edges.append((i, contribution, before, after))
            if record:
                recorder.step(node, edges)  # type: ignore[union-attr]
    return topo


_F64 = np.float64
_NDARRAY = np.ndarray
# The grads of scalars are float64 scalars (immutable, so one zero and one seed serve all).
_ZERO: Any = np.float64(0.0)
_ONE: Any = np.float64(1.0)


def _checked(op: Op, i: int, contribution: Any, x: Value, node: Value) -> np.ndarray:
    """A contribution as a float64 array of its input's shape (a float64 scalar for a scalar),
    finite, or the error that says which op made it otherwise."""
    contribution = np.asarray(contribution, dtype=np.float64)
    assert contribution.shape == x.data.shape, (
        f"{op.name} gave a grad of shape {contribution.shape} for input {i} of shape {x.data.shape}"
    )
    if not is_finite(contribution):
        raise _non_finite(node, contribution)
    return contribution if contribution.shape else contribution[()]


def _non_finite(node: Value, contribution: np.ndarray) -> BackwardError:
    assert node.op is not None
    bad = "NaN (not a number)" if np.isnan(contribution).any() else "infinite"
    hint = f" — {node.op.domain_hint}" if node.op.domain_hint else ""
    return BackwardError(f"has a gradient that is {bad}{hint}", node)
