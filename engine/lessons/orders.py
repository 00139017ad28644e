"""Lesson 2, why topological order: the same graph backpropagated three ways.

- DFS post-order (what backward() uses by default): every node after all of its inputs; the
  backward walk runs the reverse, one local backward per op node.
- Kahn's ready queue (how PyTorch's engine schedules): each node counts the consumers that
  have not yet run their backward; it becomes ready when its count reaches 0.
- The naive recursion: call each input's backward as soon as a gradient arrives, before the
  node has heard from all of its consumers. The grads come out right (the chain rule is
  linear), but a node is entered once per path from the output, so a chain of diamonds doubles
  the work at every diamond. It is simulated up to NAIVE_CALL_LIMIT calls; the full count is
  computed exactly by counting paths.
"""

from __future__ import annotations

import itertools
from typing import Any, TypedDict, Unpack

import numpy as np

from engine.autograd.graph import (
    consumer_counts,
    dfs_events,
    dfs_order,
    kahn_order,
    kahn_steps,
    reachable,
)
from engine.autograd.value import Value
from engine.lessons.common import local_backward, number
from engine.limits import check_deadline
from engine.program import Run

NAIVE_CALL_LIMIT = 5_000  # local-backward calls the naive recursion may make before it stops
EVENT_LIMIT = 2_000  # DFS and Kahn events kept for stepping (a graph has at most 2,000 nodes)


def _scalar(a: np.ndarray) -> Any:
    return float(a) if a.ndim == 0 else None


def dfs_steps(root: Value, ids: dict[int, str]) -> list[dict[str, Any]]:
    """The post-order DFS as it runs (graph.dfs_events): enter a node, then emit it once all
    its inputs are out. The first EVENT_LIMIT events."""
    return [
        {"do": do, "node": ids[node.seq], "depth": depth}
        for do, node, depth in itertools.islice(dfs_events(root), EVENT_LIMIT)
    ]


def kahn_events(root: Value, ids: dict[int, str]) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Kahn's algorithm from the output (graph.kahn_steps): the starting dependency counts,
    then one event per node popped from the ready queue with the counts it lowered and the
    queue after it (the first EVENT_LIMIT of them)."""
    nodes = reachable(root)
    waiting = consumer_counts(nodes)
    start = {ids[n.seq]: waiting[n.seq] for n in sorted(nodes, key=lambda v: v.seq)}
    events: list[dict[str, Any]] = []
    for node, lowered, ready in itertools.islice(kahn_steps(root), EVENT_LIMIT):
        events.append(
            {
                "node": ids[node.seq],
                "runs": node.op is not None and node.requires_grad,
                "lowered": {ids[child.seq]: count for child, count in lowered},
                "ready": [ids[v.seq] for _, v in sorted(ready)],
            }
        )
    return start, events


def path_counts(root: Value) -> dict[int, int]:
    """How many times the naive recursion enters each node: its number of paths from the
    output, counting only edges that carry gradient (exact integers, however large)."""
    order = dfs_order(root)
    paths = {n.seq: 0 for n in order}
    paths[root.seq] = 1
    for node in reversed(order):
        if node.op is None or not node.requires_grad:
            continue
        for x in node.inputs:
            if x.requires_grad:
                paths[x.seq] += paths[node.seq]
    return paths


def naive_calls(
    root: Value, ids: dict[int, str], limit: int = NAIVE_CALL_LIMIT
) -> tuple[list[dict[str, Any]], dict[int, np.ndarray], bool]:
    """Run the naive recursion (with an explicit stack, in the order recursion would go) until
    `limit` local-backward calls. Returns the calls, the grads so far, and whether it stopped."""
    grads: dict[int, np.ndarray] = {}
    calls: list[dict[str, Any]] = []
    stack: list[tuple[Value, np.ndarray, Value | None, int]] = [
        (root, np.ones(root.data.shape), None, 0)
    ]
    while stack:
        node, g, parent, depth = stack.pop()
        grads[node.seq] = grads.get(node.seq, np.zeros(node.data.shape)) + g
        if node.op is None or not node.requires_grad:
            continue  # a leaf or a constant: nothing to call
        if len(calls) % 256 == 0:
            check_deadline()
        if len(calls) >= limit:
            return calls, grads, True
        calls.append(
            {
                "node": ids[node.seq],
                "from": ids[parent.seq] if parent else None,
                "depth": depth,
                "grad": _scalar(g),
                "total": _scalar(grads[node.seq]),
            }
        )
        pushes = [
            (x, c, node, depth + 1)
            for x, c in zip(node.inputs, local_backward(node, g), strict=True)
            if c is not None
        ]
        stack.extend(reversed(pushes))  # the first input is called first, as recursion would
    return calls, grads, False


class OrdersOptions(TypedDict, total=False):
    """What the orders lesson takes through the API."""

    call_limit: int  # local-backward calls the naive recursion makes at most (≤ NAIVE_CALL_LIMIT)


def orders(run: Run, **options: Unpack[OrdersOptions]) -> dict[str, Any]:
    """The three schedules over the program's graph, with their local-backward call counts."""
    call_limit = max(1, min(int(options.get("call_limit", NAIVE_CALL_LIMIT)), NAIVE_CALL_LIMIT))
    root, ids = run.output, run.ids
    dfs = dfs_order(root)
    kahn = kahn_order(root)
    runs = [n for n in dfs if n.op is not None and n.requires_grad]
    run_seqs = {n.seq for n in runs}
    paths = path_counts(root)
    calls, grads, stopped = naive_calls(root, ids, call_limit)
    total = sum(paths[n.seq] for n in runs)
    # JSON numbers beyond 2**53 lose digits in JavaScript: those go as text.
    per_node = {
        ids[n.seq]: paths[n.seq] if paths[n.seq] < 2**53 else f"{paths[n.seq]:,}" for n in runs
    }
    start, kahn_steps = kahn_events(root, ids)
    return {
        "dfs": {
            "topo": [ids[n.seq] for n in dfs],
            "events": dfs_steps(root, ids),
            "backward": [ids[n.seq] for n in reversed(dfs) if n.seq in run_seqs],
        },
        "kahn": {
            "topo": [ids[n.seq] for n in kahn],
            "counts": start,
            "events": kahn_steps,
            "backward": [
                ids[n.seq] for n in reversed(kahn) if n.op is not None and n.requires_grad
            ],
        },
        "naive": {
            "calls": calls,
            "stopped": stopped,
            "limit": call_limit,
            "per_node": per_node,  # how often each op node's local backward runs
            "total": total if total < 2**53 else None,
            "total_text": f"{total:,}",
            "grads": {ids[n.seq]: number(grads.get(n.seq)) for n in run.leaves if n.seq in grads}
            if not stopped
            else None,
        },
        "counts": {
            "dfs": len(runs),
            "kahn": len(runs),
            "naive": total if total < 2**53 else f"{total:,}",
        },
        "event_limit": EVENT_LIMIT,
    }
