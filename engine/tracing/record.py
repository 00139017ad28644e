"""The recorder: backward runs with it and it keeps what each step did; `Trace` is the result.

`trace(output)` runs backward with a recorder and returns the Trace: the graph, its forward
values and final grads, and the records (steps.py) of every step; `Trace.to_dict()` is its
JSON (trace_json.py, docs/trace-format.md).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.autograd.backward import backward
from engine.autograd.graph import reachable
from engine.autograd.value import Value
from engine.tracing import trace_json
from engine.tracing.display import NotebookDisplay
from engine.tracing.labels import assign_labels
from engine.tracing.steps import Edge, Record, Step, local_derivatives, make_step, record_of


class TraceRecorder:
    """Collects the steps while backward runs (engine.autograd.backward.Recorder). Recording is one
    tuple per step: the step's node, its upstream grad and the edges backward already built
    (grads are never changed in place, so the arrays they hold stay as they were)."""

    def __init__(self, accumulate: str = "add") -> None:
        self.records: list[Record] = []
        self.topo: list[Value] = []
        self.assign = accumulate == "assign"

    def begin(self, topo: list[Value]) -> None:
        self.topo = topo

    def seed(self, root: Value) -> None:
        assert root.grad is not None
        self.records.append((root, root.grad, None))

    def step(self, node: Value, edges: list[Edge]) -> None:
        self.records.append((node, node.grad, edges))

    @property
    def steps(self) -> list[Step]:
        return [make_step(r) for r in self.records]

    @staticmethod
    def local_derivatives(node: Value) -> list[float | None] | None:
        return local_derivatives(node)


@dataclass(repr=False)  # NotebookDisplay gives a one-line repr and the Jupyter display
class Trace(NotebookDisplay):
    """A program's graph with its forward values, final grads and the recorded steps."""

    nodes: list[Value]
    output: Value
    topo: list[Value]
    records: list[Record]  # as TraceRecorder kept them; `steps` is their Step form
    accumulate: str = "add"
    order: str = "dfs"
    free: list[dict[str, Any]] = field(default_factory=list)
    # The numbers its JSON carries at most, as engine.tracing.cost counted them before backward ran
    # (0 for a trace made through the Python API, which counts nothing).
    numbers: int = 0
    seed: Any = None  # the output's first grad when the program gave one (backward(gradient=v))
    # The passes of a run (engine/tracing/passes.py), in program order; empty for a trace made
    # by `trace()`, which is one pass. `pass_of`: each op node's pass, by seq.
    passes: list[Any] = field(default_factory=list)
    pass_of: dict[int, int] = field(default_factory=dict)
    # Forward-mode transforms' passes (jvp, jacfwd, linearize): functional.record_tangents.
    tangent_passes: list[dict[str, Any]] = field(default_factory=list)
    # The ids of a trace of one pass cut from a run of several (engine/lessons/on_pass.py): the
    # whole run's, so that a node keeps its id; None: its own nodes' n0, n1, ….
    id_of: dict[int, str] | None = None

    @functools.cached_property
    def steps(self) -> list[Step]:
        """Step 0 seeds the output's grad; every later step is one op node's local backward."""
        return [make_step(r) for r in self.records]

    def ids(self) -> dict[int, str]:
        """Each node's id in the JSON (n0, n1, … in creation order), by its seq."""
        if self.id_of is not None:
            return dict(self.id_of)
        return {node.seq: f"n{i}" for i, node in enumerate(self.nodes)}

    def grad_of(self, node: Value) -> np.ndarray | None:
        """A node's final grad, as the JSON gives it: after the last pass that reached it
        (accumulated, for a leaf), 0 before any did; None for a constant."""
        if self.passes:
            return trace_json.final_grad(self, node)
        if node.grad is not None:
            return node.grad
        if node.kind == "leaf":
            return np.zeros(node.data.shape)  # a leaf the output does not use
        return None

    def to_dict(self) -> dict[str, Any]:
        """The trace's JSON (docs/trace-format.md)."""
        return trace_json.trace_dict(self)

    def step_dict(self, step: Step, ids: dict[int, str]) -> dict[str, Any]:
        """One step's JSON, from its Step."""
        return trace_json.record_dict(record_of(step), ids)

    def record_dict(self, record: Record, ids: dict[int, str]) -> dict[str, Any]:
        """One step's JSON, from its record."""
        return trace_json.record_dict(record, ids)


def trace(
    output: Value,
    nodes: list[Value] | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    seed: Any = None,
) -> Trace:
    """Run backward from `output` with a recorder. `nodes` is every node of the program in
    creation order (the language front end knows them); by default, those `output` reaches."""
    if nodes is None:
        nodes = sorted(reachable(output), key=lambda v: v.seq)
    for node in nodes:
        node.grad = None
    assign_labels(nodes)
    recorder = TraceRecorder(accumulate)
    topo = backward(output, recorder=recorder, accumulate=accumulate, order=order, seed=seed)
    return Trace(nodes, output, topo, recorder.records, accumulate, order, seed=seed)
