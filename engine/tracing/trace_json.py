"""A trace as JSON (docs/trace-format.md): its nodes, its steps with their terms, the grads.

Made from the recorder's records directly (no Step objects): the JSON is what every answer,
drawing and export reads, so it is made once per trace, in one pass over the records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.ops import quiet
from engine.tracing.labels import jvp_text, rule, rule_names, tangent_name
from engine.tracing.steps import Record, local_derivatives

if TYPE_CHECKING:
    from engine.tracing.record import Trace

TRACE_VERSION = 1


def to_json(a: np.ndarray | None) -> Any:
    """A scalar as a number, a tensor as nested lists."""
    if a is None:
        return None
    return float(a) if a.ndim == 0 else a.tolist()


def trace_dict(trace: Trace) -> dict[str, Any]:
    """The whole trace's JSON."""
    ids = trace.ids()
    nodes = []
    for node in trace.nodes:
        entry: dict[str, Any] = {
            "id": ids[node.seq],
            "name": node.name,
            "label": node.label,
            "kind": node.kind,
            "op": node.op.name if node.op else None,
            "inputs": [ids[x.seq] for x in node.inputs],
            "shape": list(node.data.shape),
            "value": to_json(node.data),
            "grad": to_json(trace.grad_of(node)),
            "span": node.span.to_dict() if node.span else None,
            "text": node.text,
        }
        if node.op is not None:
            entry["symbol"] = node.op.symbol
            entry["params"] = jsonable(node.op.params())
        if len(trace.passes) > 1:
            entry["pass"] = None if node.kind == "leaf" else pass_index(trace, node)
        nodes.append(entry)
    if len(trace.passes) > 1:
        steps, passes = passes_json(trace, ids)
    else:
        steps, passes = steps_json(trace.records, ids), None
    out = {
        "version": TRACE_VERSION,
        "output": ids[trace.output.seq],
        "value": to_json(trace.output.data),
        "shape": list(trace.output.data.shape),
        "seeded_with_ones": trace.output.data.ndim > 0,
        "options": {"accumulate": trace.accumulate, "order": trace.order},
        "free": trace.free,
        "nodes": nodes,
        "topo": [ids[n.seq] for n in trace.topo if n.seq in ids],
        "steps": steps,
        "grads": {
            node.label: to_json(trace.grad_of(node)) for node in trace.nodes if node.kind == "leaf"
        },
    }
    if passes is not None:
        out["passes"] = passes
    if trace.tangent_passes:
        out["tangent_passes"] = tangent_passes_json(trace.tangent_passes, ids)
    return out


SHOWN_TANGENT = 64  # a tangent larger than this is sent as null (its shape is the node's)


def shown_tangent(t: np.ndarray) -> Any:
    return None if t.size > SHOWN_TANGENT else to_json(t)


def tangent_passes_json(kept: list[dict[str, Any]], ids: dict[int, str]) -> list[dict[str, Any]]:
    """Forward-mode transforms' passes, as the forward-mode lesson sends its own: the nodes in
    topological order, each op's JVP rule, each tangent's name and value (nodes in the trace)."""
    out = []
    for p in kept:
        order = [n for n in p["order"] if n.seq in ids]
        out.append(
            {
                "line": p["line"],
                "topo": [ids[n.seq] for n in order],
                "seed": [ids[s] for s in p["seed"] if s in ids],
                "rules": {ids[n.seq]: jvp_text(n) for n in order if n.op is not None},
                "names": {ids[n.seq]: tangent_name(n.label or "?") for n in order},
                "tangents": {ids[n.seq]: shown_tangent(p["tangents"][n.seq]) for n in order},
            }
        )
    return out


def pass_index(trace: Trace, node: Any) -> int:
    """The pass whose graph made an op or constant node (the last, for a node made after the
    last backward call)."""
    k = trace.pass_of.get(node.seq, len(trace.passes) - 1)
    return min(k, len(trace.passes) - 1)


def final_grad(trace: Trace, node: Any) -> Any:
    """A node's grad after the last pass that reached it: a leaf's accumulated .grad after a
    backward pass, or what a torch.autograd.grad pass computed for it; 0 before any did."""
    for p in reversed(trace.passes):
        if p.kind == "grad":
            if node.seq in p.walked:
                return p.walked[node.seq]
            continue
        if node.kind == "leaf" and node.seq in p.grads_after:
            g = p.grads_after[node.seq]
            return np.zeros(node.data.shape) if g is None else g
        if node.seq in p.walked:
            return p.walked[node.seq]
    if node.kind == "leaf":
        return np.zeros(node.data.shape)
    return None  # a constant, or what no pass reached (what const() cut off)


def passes_json(trace: Trace, ids: dict[int, str]) -> tuple[list[dict[str, Any]], list[Any]]:
    """The steps of every kept pass in order, each with its `"pass"`, and one summary per pass.
    A pass's seed step also writes what changed since the last step shown (a leaf's grad
    zeroed, or made by passes summarised), so the running merge of the steps is each pass's
    table, the accumulation visible in a leaf's column."""
    steps: list[dict[str, Any]] = []
    running: dict[str, Any] = {}
    passes = []
    labels = {n.seq: n.label for n in trace.nodes}
    with quiet():
        for p in trace.passes:
            entry: dict[str, Any] = {
                "output": ids.get(p.output.seq) if p.kept else None,
                "kind": p.kind,
                "line": p.span.line if p.span else None,
                "seed": to_json(p.seed),
                "value": to_json(np.asarray(p.value)),
                "first_step": len(steps) if p.kept else None,
                "last_step": None,
                "leaves_before": by_label(p.leaves_before, labels),
                "grads_before": by_label(p.grads_before, labels, none=True),
                "grads_after": by_label(p.grads_after, labels, none=True),
                "kept": p.kept,
                "topo": [ids[n.seq] for n in p.topo if n.seq in ids] if p.kept else None,
            }
            if p.kept:
                for k, record in enumerate(p.records):
                    step = record_dict(record, ids)
                    step["pass"] = p.index
                    if k == 0:
                        step["grads"] = {**resets(p, ids, running), **step["grads"]}
                    running.update(step["grads"])
                    steps.append(step)
                entry["last_step"] = len(steps) - 1
            passes.append(entry)
    return steps, passes


def resets(p: Any, ids: dict[int, str], running: dict[str, Any]) -> dict[str, Any]:
    """The grads a pass starts from that differ from the table's last row: leaves' grads as
    they were before it (0 for None, or for a pass that does not add to them), and 0 for a
    node of an earlier pass walked again."""
    out: dict[str, Any] = {}
    for n in p.topo:
        node_id = ids.get(n.seq)
        if node_id is None or not n.requires_grad:
            continue
        carried = n.kind == "leaf" and p.kind != "grad"
        before = p.grads_before.get(n.seq) if carried else None
        start = to_json(np.zeros(n.data.shape) if before is None else np.asarray(before))
        if (
            node_id in running
            and running[node_id] != start
            or node_id not in running
            and start != to_json(np.zeros(n.data.shape))
        ):
            out[node_id] = start
    return out


def by_label(values: dict[int, Any], labels: dict[int, str | None], none: bool = False) -> dict:
    out: dict[str, Any] = {}
    for seq, v in values.items():
        label = labels.get(seq)
        if label is not None:
            out[label] = None if v is None else to_json(np.asarray(v))
    return out


def steps_json(records: list[Record], ids: dict[int, str]) -> list[dict[str, Any]]:
    """Every step's JSON, in order."""
    with quiet():  # once for every step's local derivatives, not once per step
        return [record_dict(record, ids) for record in records]


def record_dict(record: Record, ids: dict[int, str]) -> dict[str, Any]:
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
    names = rule_names(node) if edges else {}
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
                "rule": rule(node, arg, names),
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
    """An op's parameters as JSON: tuples as lists, NumPy integers as ints."""
    if isinstance(x, tuple | list):
        return [jsonable(v) for v in x]
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, np.integer):
        return int(x)
    return x
