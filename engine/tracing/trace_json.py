"""A trace as JSON (docs/trace-format.md): its nodes, its steps with their terms, the grads.

Made from the recorder's records directly (no Step objects): the JSON is what every answer,
drawing and export reads, so it is made once per trace, in one pass over the records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.ops import quiet
from engine.tracing.labels import rule, rule_names
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
        nodes.append(entry)
    return {
        "version": TRACE_VERSION,
        "output": ids[trace.output.seq],
        "value": to_json(trace.output.data),
        "shape": list(trace.output.data.shape),
        "seeded_with_ones": trace.output.data.ndim > 0,
        "options": {"accumulate": trace.accumulate, "order": trace.order},
        "free": trace.free,
        "nodes": nodes,
        "topo": [ids[n.seq] for n in trace.topo],
        "steps": steps_json(trace.records, ids),
        "grads": {
            node.label: to_json(trace.grad_of(node)) for node in trace.nodes if node.kind == "leaf"
        },
    }


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
