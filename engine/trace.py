"""The backward trace: what each step of backward did, and its JSON form (docs/trace-format.md).

A step is one node's local backward; each of its terms is one input edge: the chain-rule term
`x̄ += ū · ∂u/∂x`, with the grad before and after the `+=`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.backward import backward
from engine.graph import reachable
from engine.ops import ARRAY_MATH
from engine.value import Value

TRACE_VERSION = 1


@dataclass(frozen=True, slots=True)
class Term:
    """One input edge of a step: x̄ (before) + contribution = x̄ (after)."""

    input: Value
    arg: int
    local: float | None
    contribution: np.ndarray
    before: np.ndarray
    after: np.ndarray


@dataclass(frozen=True, slots=True)
class Step:
    """Step 0 seeds the output's grad; every later step is one op node's local backward."""

    node: Value
    kind: str  # "seed" or "backward"
    upstream: np.ndarray | None
    terms: tuple[Term, ...] = ()
    # The grads this step changed, with their values after it (the per-step delta).
    changed: tuple[tuple[Value, np.ndarray], ...] = ()


class TraceRecorder:
    """Collects the steps while backward runs (engine.backward.Recorder)."""

    def __init__(self, accumulate: str = "add") -> None:
        self.steps: list[Step] = []
        self.topo: list[Value] = []
        self.assign = accumulate == "assign"

    def begin(self, topo: list[Value]) -> None:
        self.topo = topo

    def seed(self, root: Value) -> None:
        assert root.grad is not None
        self.steps.append(Step(root, "seed", None, (), ((root, root.grad),)))

    def step(self, node: Value, edges: list[tuple[int, np.ndarray, np.ndarray]]) -> None:
        locals_ = self.local_derivatives(node) if edges else None
        terms = []
        after: dict[int, tuple[Value, np.ndarray]] = {}
        for arg, contribution, before in edges:
            x = node.inputs[arg]
            new = contribution if self.assign else before + contribution
            local = None if locals_ is None else locals_[arg]
            terms.append(Term(x, arg, local, contribution, before, new))
            after[x.seq] = (x, new)
        assert node.grad is not None
        self.steps.append(
            Step(node, "backward", node.grad, tuple(terms), tuple(after.values()))
        )

    @staticmethod
    def local_derivatives(node: Value) -> list[float | None] | None:
        """∂u/∂x for each input as a number, when the op and its inputs are all scalars."""
        if node.data.ndim or any(x.data.ndim for x in node.inputs):
            return None
        assert node.op is not None
        needs = [x.requires_grad for x in node.inputs]
        ones = np.ones(())
        with np.errstate(all="ignore"):
            grads = node.op.gradient(
                ones, [x.data for x in node.inputs], node.data, needs, ARRAY_MATH
            )
        return [None if g is None else float(g) for g in grads]


def to_json(a: np.ndarray | None) -> Any:
    """A scalar as a number, a tensor as nested lists."""
    if a is None:
        return None
    return float(a) if a.ndim == 0 else a.tolist()


def number_text(a: np.ndarray) -> str:
    if a.ndim:
        return "[" + ", ".join(number_text(x) for x in a[:4]) + (", …]" if len(a) > 4 else "]")
    v = float(a)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.4g}"


IDENTIFIER = re.compile(r"^\w+$")


def is_number_or_name(text: str) -> bool:
    return bool(IDENTIFIER.match(text)) or bool(re.match(r"^-?[\d.eE+-]+$", text))


def assign_labels(nodes: list[Value]) -> None:
    """Give every node a unique, human label: its name (x, x_2 for a rebinding), its source text,
    or for a constant its value."""
    taken: set[str] = set()
    counts: dict[str, int] = {}

    def unique(base: str) -> str:
        n = counts.get(base, 0)
        while True:
            n += 1
            candidate = base if n == 1 else f"{base}_{n}"
            if candidate not in taken:
                counts[base] = n
                taken.add(candidate)
                return candidate

    # Names first, so that `x` keeps its own name even if an anonymous node reads "x".
    for node in nodes:
        if node.name is not None:
            node.label = unique(node.name)
    for node in nodes:
        if node.name is None:
            if node.kind == "const" and (node.text is None or is_number_or_name(node.text)):
                node.label = number_text(node.data)  # 2, or a loop variable's value
            elif node.text is not None:
                node.label = node.text
            else:
                node.label = unique(node.op.name if node.op else node.kind)


def rule_text(node: Value, arg: int) -> str:
    """The chain-rule term for one input, written with the inputs' labels."""
    assert node.op is not None
    rules = node.op.rules
    template = rules[arg] if arg < len(rules) else "ū"

    def label(v: Value) -> str:
        text = v.label or "?"
        return text if IDENTIFIER.match(text) else f"({text})"

    names = {str(i): label(x) for i, x in enumerate(node.inputs)}
    names["out"] = label(node)
    return re.sub(r"\{(\w+)\}", lambda m: names.get(m.group(1), m.group(0)), template)


@dataclass
class Trace:
    """A program's graph with its forward values, final grads and the recorded steps."""

    nodes: list[Value]
    output: Value
    topo: list[Value]
    steps: list[Step]
    accumulate: str = "add"
    order: str = "dfs"
    free: list[dict[str, Any]] = field(default_factory=list)

    def ids(self) -> dict[int, str]:
        return {node.seq: f"n{i}" for i, node in enumerate(self.nodes)}

    def grad_of(self, node: Value) -> np.ndarray | None:
        if node.grad is not None:
            return node.grad
        if node.kind == "leaf":
            return np.zeros(node.data.shape)  # a leaf the output does not use
        return None

    def to_dict(self) -> dict[str, Any]:
        ids = self.ids()
        nodes = []
        for node in self.nodes:
            entry: dict[str, Any] = {
                "id": ids[node.seq],
                "name": node.name,
                "label": node.label,
                "kind": node.kind,
                "op": node.op.name if node.op else None,
                "inputs": [ids[x.seq] for x in node.inputs],
                "shape": list(node.data.shape),
                "value": to_json(node.data),
                "grad": to_json(self.grad_of(node)),
                "span": node.span.to_dict() if node.span else None,
                "text": node.text,
            }
            if node.op is not None:
                entry["symbol"] = node.op.symbol
                entry["params"] = jsonable(node.op.params())
            nodes.append(entry)
        return {
            "version": TRACE_VERSION,
            "output": ids[self.output.seq],
            "value": to_json(self.output.data),
            "shape": list(self.output.data.shape),
            "seeded_with_ones": self.output.data.ndim > 0,
            "options": {"accumulate": self.accumulate, "order": self.order},
            "free": self.free,
            "nodes": nodes,
            "topo": [ids[n.seq] for n in self.topo],
            "steps": [self.step_dict(step, ids) for step in self.steps],
            "grads": {
                node.label: to_json(self.grad_of(node)) for node in self.nodes if node.kind == "leaf"
            },
        }

    def step_dict(self, step: Step, ids: dict[int, str]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "node": ids[step.node.seq],
            "kind": step.kind,
            "grads": {ids[v.seq]: to_json(g) for v, g in step.changed},
            "terms": [
                {
                    "input": ids[t.input.seq],
                    "arg": t.arg,
                    "rule": rule_text(step.node, t.arg),
                    "local": t.local,
                    "contribution": to_json(t.contribution),
                    "before": to_json(t.before),
                    "after": to_json(t.after),
                }
                for t in step.terms
            ],
        }
        if step.kind == "backward":
            assert step.node.op is not None
            out["op"] = step.node.op.name
            out["upstream"] = to_json(step.upstream)
        return out


def jsonable(x: Any) -> Any:
    if isinstance(x, tuple | list):
        return [jsonable(v) for v in x]
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, np.integer):
        return int(x)
    return x


def trace(
    output: Value,
    nodes: list[Value] | None = None,
    accumulate: str = "add",
    order: str = "dfs",
) -> Trace:
    """Run backward from `output` with a recorder. `nodes` is every node of the program in
    creation order (the language front end knows them); by default, those `output` reaches."""
    if nodes is None:
        nodes = sorted(reachable(output), key=lambda v: v.seq)
    for node in nodes:
        node.grad = None
    assign_labels(nodes)
    recorder = TraceRecorder(accumulate)
    topo = backward(output, recorder=recorder, accumulate=accumulate, order=order)
    return Trace(nodes, output, topo, recorder.steps, accumulate, order)
