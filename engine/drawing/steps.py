"""What the drawing reads from a trace (docs/trace-format.md): the steps, and at one step the
running grads and the marks (the node running, the edges carrying gradient, the grads changed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class StepView:
    """What the drawing needs to know about one step: running grads and the marks."""

    index: int
    grads: dict[str, Any]  # node id -> grad after this step (running merge)
    current: str | None
    changed: set[str]
    active: set[str]  # edge ids carrying gradient on this step
    sent: set[str]  # edge ids that carried gradient on an earlier step


def edge_id(consumer: str, arg: int) -> str:
    """The id of the edge that feeds argument `arg` of node `consumer`."""
    return f"e-{consumer}-{arg}"


def step_count(trace: Mapping[str, Any]) -> int:
    """How many backward steps the trace has."""
    return len(trace.get("steps") or [])


def clamp_step(trace: Mapping[str, Any], step: int | None) -> int:
    """`step` absent means the last; out of range clamps."""
    n = step_count(trace)
    if n == 0:
        return 0
    if step is None:
        return n - 1
    return max(0, min(int(step), n - 1))


def step_view(trace: Mapping[str, Any], step: int) -> StepView:
    """The trace as it stands after step `step` (already clamped)."""
    steps = trace.get("steps") or []
    grads: dict[str, Any] = {}
    for node in trace["nodes"]:
        if node.get("grad") is not None:
            grads[node["id"]] = _zeros_like(node.get("shape") or [])
    sent: set[str] = set()
    active: set[str] = set()
    current = None
    changed: set[str] = set()
    for i, st in enumerate(steps[: step + 1]):
        grads.update(st.get("grads") or {})
        ids = {edge_id(st["node"], t["arg"]) for t in st.get("terms") or []}
        if i < step:
            sent |= ids
        else:
            active = ids
            current = st["node"]
            changed = set((st.get("grads") or {}).keys())
    return StepView(step, grads, current, changed, active, sent)


def _zeros_like(shape: Sequence[int]) -> Any:
    """A grad before any step: zeros of `shape`, as JSON."""
    if not shape:
        return 0.0
    return np.zeros(tuple(shape)).tolist()


def edge_terms(trace: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Edge id -> the chain-rule term that edge carried (and the step it carried it on)."""
    out: dict[str, dict[str, Any]] = {}
    for i, st in enumerate(trace.get("steps") or []):
        for t in st.get("terms") or []:
            out[edge_id(st["node"], t["arg"])] = {**t, "step": i}
    return out


def grad_history(trace: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Node id -> every grad it takes over the steps (to size cells and heat-map scales)."""
    hist: dict[str, list[Any]] = {}
    for node in trace["nodes"]:
        if node.get("grad") is not None:
            hist[node["id"]] = [_zeros_like(node.get("shape") or []), node["grad"]]
    for st in trace.get("steps") or []:
        for nid, g in (st.get("grads") or {}).items():
            hist.setdefault(nid, []).append(g)
    return hist
