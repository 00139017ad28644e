"""The backward trace: what each step of backward did, and its JSON form (docs/trace-format.md).

A step is one node's local backward; each of its terms is one input edge: the chain-rule term
`x̄ += ū · ∂u/∂x`, with the grad before and after the `+=`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from engine.autograd.backward import backward
from engine.autograd.graph import reachable
from engine.autograd.ops import SCALAR_MATH, quiet
from engine.autograd.value import Value
from engine.exports.notebook import NotebookDisplay

TRACE_VERSION = 1


# Steps and terms are immutable records. NamedTuples rather than frozen dataclasses: a trace
# makes one per step and one per edge, and a frozen dataclass costs five times more to make.


class Term(NamedTuple):
    """One input edge of a step: x̄ (before) + contribution = x̄ (after)."""

    input: Value
    arg: int
    contribution: np.ndarray
    before: np.ndarray
    after: np.ndarray
    node: Value  # the op whose local backward this edge belongs to

    @property
    def local(self) -> float | None:
        """∂u/∂x as a number when the op and its inputs are all scalars, else None. Worked out
        when asked (the JSON asks once per step), so recording does not pay for it."""
        locals_ = local_derivatives(self.node)
        return None if locals_ is None else locals_[self.arg]


class Step(NamedTuple):
    """Step 0 seeds the output's grad; every later step is one op node's local backward."""

    node: Value
    kind: str  # "seed" or "backward"
    upstream: np.ndarray | None
    terms: tuple[Term, ...] = ()
    # The grads this step changed, with their values after it (the per-step delta).
    changed: tuple[tuple[Value, np.ndarray], ...] = ()


# What the recorder keeps per step, as backward hands it over: (node, upstream, edges) with
# edges a list of (argument index, contribution, grad before, grad after), one per input edge
# that carried gradient; for the seed, (root, its grad, None). Steps and Terms are made from
# these only when asked for (`Trace.steps`); the JSON (`Trace.to_dict`) reads them directly.
Edge = tuple[int, Any, Any, Any]
Record = tuple[Value, Any, "list[Edge] | None"]


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


def make_step(record: Record) -> Step:
    """The Step (with its Terms) a record stands for."""
    node, upstream, edges = record
    if edges is None:
        return Step(node, "seed", None, (), ((node, upstream),))
    inputs = node.inputs
    # tuple.__new__ is what Term._make does, without the Python-level __new__ (half the
    # cost); the fields are in Term's order.
    terms = tuple(
        [_new(Term, (inputs[arg], arg, c, before, after, node)) for arg, c, before, after in edges]
    )
    # The last value of each input (x*x changes x twice), in the order first changed.
    changed = tuple({t[0].seq: (t[0], t[4]) for t in terms}.values())
    return _new(Step, (node, "backward", upstream, terms, changed))


def record_of(step: Step) -> Record:
    """The record a Step was made from."""
    if step.kind == "seed":
        return (step.node, step.changed[0][1], None)
    return (
        step.node,
        step.upstream,
        [(t.arg, t.contribution, t.before, t.after) for t in step.terms],
    )


def local_derivatives(node: Value) -> list[float | None] | None:
    """∂u/∂x for each input as a number, when the op and its inputs are all scalars: the op's
    own rule run with ū = 1."""
    data = node.data
    if data.ndim:
        return None
    ins = []
    for x in node.inputs:
        d = x.data
        if d.ndim:
            return None
        ins.append(d[()] if type(d) is np.ndarray else d)
    assert node.op is not None
    needs = [x.requires_grad for x in node.inputs]
    out = data[()] if type(data) is np.ndarray else data
    with quiet():
        grads = node.op.gradient(_ONE, ins, out, needs, SCALAR_MATH)
    return [None if g is None else float(g) for g in grads]


_ONE = np.float64(1.0)
_new = tuple.__new__


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
    return _rule(node, arg, _rule_names(node))


def _rule_names(node: Value) -> dict[str, str]:
    """{"0": label of input 0, ..., "out": the node's label}, bracketed unless a plain name."""

    def label(v: Value) -> str:
        text = v.label or "?"
        return text if IDENTIFIER.match(text) else f"({text})"

    names = {str(i): label(x) for i, x in enumerate(node.inputs)}
    names["out"] = label(node)
    return names


def _rule(node: Value, arg: int, names: dict[str, str]) -> str:
    assert node.op is not None
    rules = node.op.rules
    template = rules[arg] if arg < len(rules) else "ū"
    if "{" not in template:
        return template
    return _FIELD.sub(lambda m: names.get(m.group(1), m.group(0)), template)


_FIELD = re.compile(r"\{(\w+)\}")


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

    @functools.cached_property
    def steps(self) -> list[Step]:
        """Step 0 seeds the output's grad; every later step is one op node's local backward."""
        return [make_step(r) for r in self.records]

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
            "steps": self.steps_json(ids),
            "grads": {
                node.label: to_json(self.grad_of(node))
                for node in self.nodes
                if node.kind == "leaf"
            },
        }

    def steps_json(self, ids: dict[int, str]) -> list[dict[str, Any]]:
        with quiet():  # once for every step's local derivatives, not once per step
            return [self.record_dict(record, ids) for record in self.records]

    def step_dict(self, step: Step, ids: dict[int, str]) -> dict[str, Any]:
        return self.record_dict(record_of(step), ids)

    def record_dict(self, record: Record, ids: dict[int, str]) -> dict[str, Any]:
        """One step's JSON (docs/trace-format.md), from its record."""
        node, upstream, edges = record
        node_id = ids[node.seq]
        if edges is None:
            return {
                "node": node_id,
                "kind": "seed",
                "grads": {node_id: to_json(upstream)},
                "terms": [],
            }
        inputs = node.inputs
        locals_ = local_derivatives(node) if edges else None
        names = _rule_names(node) if edges else {}
        # The last value of each input (x*x changes x twice), in the order first changed.
        last: dict[str, Any] = {}
        terms = []
        for arg, contribution, before, after in edges:
            input_id = ids[inputs[arg].seq]
            last[input_id] = after
            terms.append(
                {
                    "input": input_id,
                    "arg": arg,
                    "rule": _rule(node, arg, names),
                    "local": None if locals_ is None else locals_[arg],
                    "contribution": to_json(contribution),
                    "before": to_json(before),
                    "after": to_json(after),
                }
            )
        assert node.op is not None
        return {
            "node": node_id,
            "kind": "backward",
            "grads": {k: to_json(v) for k, v in last.items()},
            "terms": terms,
            "op": node.op.name,
            "upstream": to_json(upstream),
        }


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
    return Trace(nodes, output, topo, recorder.records, accumulate, order)
