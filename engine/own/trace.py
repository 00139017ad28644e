"""A validated recording as a gradtrace trace (docs/trace-format.md): the shape the page, its
grad table, strips and drawing already read, so a student's own backward steps like the
engine's. What is the student's own is kept beside it: `order: "own"` in the options, each
step's `pass`, and its terms' `before`/`after` as their engine wrote them."""

from __future__ import annotations

from typing import Any

from engine.own.schema import OwnStep, Recording

SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def distinct_labels(rec: Recording) -> dict[str, str]:
    """Each node's label, numbered with a subscript where the same text stands on more than one
    node (`+₁`, `+₂`), as the engine's labels are: the table and the drawing tell them apart."""
    count: dict[str, int] = {}
    for n in rec.nodes:
        count[n.label] = count.get(n.label, 0) + 1
    seen: dict[str, int] = {}
    taken = {n.label for n in rec.nodes if count[n.label] == 1}
    out = {}
    for n in rec.nodes:
        if count[n.label] == 1:
            out[n.id] = n.label
            continue
        k = seen.get(n.label, 0)
        while True:
            k += 1
            label = n.label + str(k).translate(SUBSCRIPTS)
            if label not in taken:
                break
        seen[n.label] = k
        taken.add(label)
        out[n.id] = label
    return out


def reachable(rec: Recording, output: str) -> set[str]:
    """The nodes `output` depends on, itself included."""
    seen: set[str] = set()
    todo = [output]
    while todo:
        nid = todo.pop()
        if nid in seen:
            continue
        seen.add(nid)
        todo.extend(rec.by_id[nid].inputs)
    return seen


def _terms(rec: Recording, st: OwnStep) -> list[dict[str, Any]]:
    """One term per input of the step's node whose grad the step changed (on its first edge):
    what the student's engine sent it, as the grad moved."""
    node = rec.by_id[st.node]
    terms = []
    for arg, src in enumerate(node.inputs):
        if src not in st.changed or src in node.inputs[:arg]:
            continue
        before, after = st.changed[src]
        terms.append(
            {
                "input": src,
                "arg": arg,
                "rule": "",
                "local": (after - before) / st.upstream if st.upstream else None,
                "contribution": after - before,
                "before": before,
                "after": after,
            }
        )
    return terms


def to_trace(rec: Recording) -> dict[str, Any]:
    """The recording in the trace's JSON shape."""
    labels = distinct_labels(rec)
    out = rec.by_id[rec.output]
    on_path: set[str] = set()
    for p in rec.passes:
        on_path |= reachable(rec, p.output)
    nodes = []
    for n in rec.nodes:
        nodes.append(
            {
                "id": n.id,
                "name": n.name,
                "label": labels[n.id],
                "kind": n.kind,
                "op": n.op,
                "symbol": n.op,
                "inputs": list(n.inputs),
                "shape": [],
                "value": n.value,
                "grad": n.grad,
                "span": None if n.line is None else {"line": n.line, "column": 1,
                                                     "end_line": n.line + 1, "end_column": 1},
                "text": labels[n.id],
            }
        )  # fmt: skip
    steps = []
    for st in rec.steps:
        steps.append(
            {
                "node": st.node,
                "kind": st.kind,
                "pass": st.pass_,
                "op": rec.by_id[st.node].op,
                "upstream": st.upstream,
                "grads": {k: after for k, (_, after) in st.changed.items()},
                "terms": [] if st.kind == "seed" else _terms(rec, st),
            }
        )
    if not steps or steps[0]["kind"] != "seed":  # the page reads steps[0] as the seed
        steps.insert(0, {"node": rec.output, "kind": "seed", "pass": 0, "grads": {}, "terms": []})
    trace: dict[str, Any] = {
        "version": 1,
        "output": rec.output,
        "value": out.value,
        "shape": [],
        "seeded_with_ones": False,
        "options": {"accumulate": "add", "order": "own"},
        "free": [],
        "nodes": nodes,
        "topo": [n.id for n in rec.nodes if n.id in on_path],
        "steps": steps,
        "grads": {labels[n.id]: n.grad for n in rec.nodes if n.kind == "leaf"},
    }
    if len(rec.passes) > 1:
        trace["passes"] = _passes(rec, steps, labels)
    return trace


def _passes(rec: Recording, steps: list[dict[str, Any]], labels: dict[str, str]) -> list:
    out = []
    for k, p in enumerate(rec.passes):
        idx = [i for i, s in enumerate(steps) if s["pass"] == k] or [0]
        leaves = [n for n in rec.nodes if n.kind == "leaf"]
        out.append(
            {
                "output": p.output,
                "first_step": idx[0],
                "last_step": idx[-1],
                "value": rec.by_id[p.output].value,
                "grads_before": {labels[n.id]: p.grads_before.get(n.id, 0.0) for n in leaves},
                "kept": True,
            }
        )
    return out
