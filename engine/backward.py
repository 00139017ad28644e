"""The reverse walk: seed the output's grad, then run each op's local backward in reverse
topological order, adding (`+=`) each contribution into its input's grad."""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from engine.graph import topological_order
from engine.ops import ARRAY_MATH, SCALAR_MATH, Op, OpError, is_finite, quiet
from engine.value import Value

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
        input edge that carried gradient."""


def backward(
    root: Value,
    recorder: Recorder | None = None,
    accumulate: str = "add",
    order: str = "dfs",
) -> list[Value]:
    """Fill `.grad` for every node `root` depends on; returns the topological order used.

    `accumulate="assign"` is the classic bug (`=` where `+=` belongs), kept so the page can show
    what goes wrong: each contribution overwrites, even the second edge of `x*x`. Recording is
    off unless a recorder is passed, and then costs one `is not None` test per step.
    """
    if accumulate not in ACCUMULATE:
        raise ValueError(f"accumulate must be one of {ACCUMULATE}, not {accumulate!r}")
    assign = accumulate == "assign"
    topo = topological_order(root, order)
    for node in topo:
        if not node.requires_grad:
            node.grad = None
        elif type(node.data) is _F64:
            node.grad = _ZERO
        else:
            shape = node.data.shape
            node.grad = np.zeros(shape) if shape else _ZERO
    root.grad = np.ones(root.data.shape) if root.data.shape else _ONE
    if recorder is not None:
        recorder.begin(topo)
        recorder.seed(root)
    record = recorder is not None
    with quiet():  # a non-finite grad is reported below, by name
        for node in reversed(topo):
            op = node.op
            if op is None or not node.requires_grad:
                continue  # leaves and constants: nothing to pass on
            inputs = node.inputs
            data = node.data
            if type(data) is _F64 and len(inputs) <= 2:
                # The forward's fast path made this node: an elementwise op on one or two
                # scalars. The same rule, with ScalarMath, and no lists to build.
                a = inputs[0]
                x = a.data
                if type(x) is _NDARRAY and not x.shape:
                    x = x[()]
                if len(inputs) == 1:
                    if type(x) is _F64:
                        (ga,) = op.gradient(node.grad, (x,), data, (True,), SCALAR_MATH)
                        edge = _add(node, op, 0, a, ga, assign)
                        if recorder is not None:
                            recorder.step(node, [edge])
                        continue
                else:
                    b = inputs[1]
                    y = b.data
                    if type(y) is _NDARRAY and not y.shape:
                        y = y[()]
                    if type(x) is _F64 and type(y) is _F64:
                        na, nb = a.requires_grad, b.requires_grad
                        ga, gb = op.gradient(node.grad, (x, y), data, (na, nb), SCALAR_MATH)
                        if recorder is None:
                            if na:
                                _add(node, op, 0, a, ga, assign)
                            if nb:
                                _add(node, op, 1, b, gb, assign)
                        else:
                            pair = []
                            if na:
                                pair.append(_add(node, op, 0, a, ga, assign))
                            if nb:
                                pair.append(_add(node, op, 1, b, gb, assign))
                            recorder.step(node, pair)
                        continue
            needs = []
            ins = []
            # All scalars (the forward's fast path made this node): ScalarMath, float64s.
            scalar = type(node.data) is _F64
            for x in inputs:
                needs.append(x.requires_grad)
                d = x.data
                if type(d) is _NDARRAY:
                    if d.shape:
                        scalar = False
                    else:
                        d = d[()]  # a 0-d leaf or constant, as a float64 scalar
                ins.append(d)
            grads = op.gradient(
                node.grad, ins, node.data, needs, SCALAR_MATH if scalar else ARRAY_MATH
            )
            edges: list[tuple[int, Any, Any, Any]] = []
            i = -1
            for x, need, contribution in zip(inputs, needs, grads):  # noqa: B905
                i += 1
                if not need:
                    continue
                before = x.grad
                if type(contribution) is not _F64 or type(before) is not _F64:
                    contribution = _checked(op, i, contribution, x, node)
                elif not math.isfinite(contribution):
                    raise _non_finite(node, contribution)
                after = contribution.copy() if assign else before + contribution
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


def _add(
    node: Value, op: Op, i: int, x: Value, contribution: Any, assign: bool
) -> tuple[int, Any, Any, Any]:
    """x.grad += contribution (or = it, the classic bug), checked; the edge for the recorder."""
    before = x.grad
    if type(contribution) is not _F64 or type(before) is not _F64:
        contribution = _checked(op, i, contribution, x, node)
    elif not math.isfinite(contribution):
        raise _non_finite(node, contribution)
    after = contribution.copy() if assign else before + contribution
    x.grad = after
    return (i, contribution, before, after)


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
