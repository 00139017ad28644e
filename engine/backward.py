"""The reverse walk: seed the output's grad, then run each op's local backward in reverse
topological order, adding (`+=`) each contribution into its input's grad."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from engine.graph import topological_order
from engine.ops import ARRAY_MATH, OpError, is_finite
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
        contributions: list[tuple[int, np.ndarray, np.ndarray]],
    ) -> None:
        """One local backward: (argument index, contribution, grad before) per input edge."""


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
        node.grad = np.zeros(node.data.shape) if node.requires_grad else None
    root.grad = np.ones(root.data.shape)
    if recorder is not None:
        recorder.begin(topo)
        recorder.seed(root)
    for node in reversed(topo):
        op = node.op
        if op is None or not node.requires_grad:
            continue  # leaves and constants: nothing to pass on
        inputs = node.inputs
        needs = [x.requires_grad for x in inputs]
        with np.errstate(all="ignore"):  # a non-finite grad is reported below, by name
            grads = op.gradient(node.grad, [x.data for x in inputs], node.data, needs, ARRAY_MATH)
        edges: list[tuple[int, np.ndarray, np.ndarray]] = []
        for i, x in enumerate(inputs):
            if not needs[i]:
                continue
            contribution = np.asarray(grads[i], dtype=np.float64)
            assert contribution.shape == x.data.shape, (
                f"{op.name} gave a grad of shape {contribution.shape} "
                f"for input {i} of shape {x.data.shape}"
            )
            if not is_finite(contribution):
                bad = "NaN (not a number)" if np.isnan(contribution).any() else "infinite"
                hint = f" — {op.domain_hint}" if op.domain_hint else ""
                raise BackwardError(f"has a gradient that is {bad}{hint}", node)
            before = x.grad
            assert before is not None
            x.grad = contribution.copy() if assign else before + contribution
            if recorder is not None:
                edges.append((i, contribution, before))
        if recorder is not None:
            recorder.step(node, edges)
    return topo
