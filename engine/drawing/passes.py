"""The pass on show: a trace of several passes (engine/tracing/passes.py) is drawn one pass at a
time, the graph that pass went through, at a step of its own.

`pass_view(trace, step)` is that pass as a trace of one pass: its nodes (those it made, the
leaves, and what they read), the leaves' values as they were in it, its steps, with its seed
step starting every leaf's column where the pass started it (so a leaf's `+=` across passes
shows), and the step's index inside it. A trace of one pass is its own view.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def pass_at(trace: Mapping[str, Any], step: int | None) -> int | None:
    """The pass a step of the whole trace belongs to (the last pass for None)."""
    passes = trace.get("passes")
    if not passes:
        return None
    steps = trace.get("steps") or []
    if step is None or not steps:
        return len(passes) - 1
    k = max(0, min(int(step), len(steps) - 1))
    return int(steps[k].get("pass", len(passes) - 1))


def pass_step(trace: Mapping[str, Any], which: str | int) -> int | None:
    """`pass=first|last|k` as the step it opens at: that pass's last step (the nearest kept
    pass's when it was summarised); None when the trace has one pass."""
    passes = trace.get("passes")
    if not passes:
        return None
    if which == "first":
        k = 0
    elif which == "last":
        k = len(passes) - 1
    else:
        k = max(0, min(int(which), len(passes) - 1))
    kept = [i for i, p in enumerate(passes) if p.get("kept")]
    nearest = min(kept, key=lambda i: (abs(i - k), -i))
    return int(passes[nearest]["last_step"])


def pass_view(trace: Mapping[str, Any], step: int | None) -> tuple[Mapping[str, Any], int | None]:
    """The pass `step` is in, as a trace of its own, and the step's index inside it."""
    p = pass_at(trace, step)
    if p is None:
        return trace, step
    entry = trace["passes"][p]
    first, last = entry["first_step"], entry["last_step"]
    by_id = {n["id"]: n for n in trace["nodes"]}
    keep = {n["id"] for n in trace["nodes"] if n.get("pass") == p or n["kind"] == "leaf"}
    keep |= set(entry.get("topo") or ())
    todo = list(keep)
    while todo:
        for i in by_id[todo.pop()]["inputs"]:
            if i not in keep:
                keep.add(i)
                todo.append(i)
    before, grads_before = entry.get("leaves_before") or {}, entry.get("grads_before") or {}
    nodes = []
    for n in trace["nodes"]:
        if n["id"] in keep:
            if n["kind"] == "leaf" and n["label"] in before:
                n = {**n, "value": before[n["label"]]}
            nodes.append(n)
    steps = [dict(s) for s in trace["steps"][first : last + 1]]
    if steps:
        starts = {n["id"]: grads_before[n["label"]] for n in nodes
                  if n["kind"] == "leaf" and grads_before.get(n["label"]) is not None}  # fmt: skip
        steps[0]["grads"] = {**starts, **steps[0]["grads"]}
    view = {**trace, "nodes": nodes, "steps": steps, "output": entry["output"],
            "value": entry["value"], "topo": entry.get("topo") or trace.get("topo")}  # fmt: skip
    view.pop("passes", None)
    local = None if step is None else max(0, min(int(step), last) - first)
    return view, local
