"""Collapsing a long unrolled loop: its iterations found by source position, and the plan of
the one box that stands for all of them but the first and the last."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LOOP_BOX = "loop-1"  # the id of the box that stands for the collapsed iterations
COLLAPSE_MIN_ITERATIONS = 4  # a loop of fewer iterations is never collapsed


def loop_iterations(trace: Mapping[str, Any]) -> list[list[str]]:
    """The iterations of the longest unrolled loop, found by source position: every node an
    iteration makes repeats the spans of the one before. [] when there is no loop."""
    occurrences: dict[tuple[Any, ...], list[str]] = {}
    for node in trace["nodes"]:
        span = node.get("span")
        if not span:
            continue
        key = (span.get("line"), span.get("column"), span.get("end_line"), span.get("end_column"))
        occurrences.setdefault(key, []).append(node["id"])
    sizes: dict[int, int] = {}
    for ids in occurrences.values():
        if len(ids) >= COLLAPSE_MIN_ITERATIONS:
            sizes[len(ids)] = sizes.get(len(ids), 0) + len(ids)
    if not sizes:
        return []
    count = max(sizes, key=lambda c: (sizes[c], c))
    iterations: list[list[str]] = [[] for _ in range(count)]
    for ids in occurrences.values():
        if len(ids) == count:
            for i, nid in enumerate(ids):
                iterations[i].append(nid)
    return iterations


AUTO_COLLAPSE_NODES = 200  # a loop's graph larger than this is drawn collapsed unless asked


def wants_collapse(
    trace: Mapping[str, Any], plan: Mapping[str, Any] | None, asked: bool | None
) -> bool:
    """Whether to draw the loop of `plan` collapsed: as asked (True or False), or, when not
    asked (None), if the graph has more than AUTO_COLLAPSE_NODES nodes: a long unrolled loop
    reads better as its first and last iterations, and is laid out in a fraction of the time."""
    if plan is None:
        return False
    if asked is None:
        return len(trace["nodes"]) > AUTO_COLLAPSE_NODES
    return asked


def collapse_plan(trace: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the loop's box stands for: every iteration but the first and the last."""
    its = loop_iterations(trace)
    if len(its) < COLLAPSE_MIN_ITERATIONS:
        return None
    return {
        "id": LOOP_BOX,
        "members": [nid for it in its[1:-1] for nid in it],
        "iterations": len(its),
        "collapsed": len(its) - 2,
    }


def full_refusal(
    trace: Mapping[str, Any], plan: Mapping[str, Any] | None, max_nodes: int
) -> dict[str, Any] | None:
    """Why the loop of `plan` cannot be drawn in full: {"code": "too_large", "nodes", "limit"}
    when the whole graph is over the drawing limit (dot.check_size would refuse it), else
    None. The page then offers no way to expand the loop, and says why."""
    nodes = len(trace["nodes"])
    if plan is None or nodes <= max_nodes:
        return None
    return {"code": "too_large", "nodes": nodes, "limit": max_nodes}
