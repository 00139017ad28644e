"""Lesson 1, "= instead of +=": the same program backpropagated with `+=` and with `=`, step by
step side by side, the cells where the two tables part company, and the wrong final grads.

With `=`, a node used twice keeps only the contribution that arrived last: in `x*y + x` at
x=2, y=3, x.grad should be 1 + 3 = 4, but `=` leaves 3 (the 1 from the `+ x` edge is lost).

Bounded: the work is linear in the steps (a step re-compares only the cells it wrote), the rows
sent stop at MAX_TABLE_CELLS cells per table (`truncated`, `row_limit`; the divergence, the
overwrites and the final grads still cover every step), and the request's deadline
(max_request_seconds) is checked as the steps go.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.lessons.common import close
from engine.limits import check_deadline
from engine.program import Run

# Cells (rows × columns) of each of the two grad tables sent: a long program sends its first
# steps only ("truncated"), so a 2,000-node chain does not send 4 million cells.
MAX_TABLE_CELLS = 50_000


def compare_assign(run: Run) -> dict[str, Any]:
    """Both backward passes over the run's graph, aligned step by step (the run's order)."""
    with run.trace_with("add", run.order) as good_trace:
        good = good_trace.to_dict()
    with run.trace_with("assign", run.order) as bad_trace:
        bad = bad_trace.to_dict()
    columns = grad_columns(good)
    # Rows are sent while the two tables they draw stay within MAX_TABLE_CELLS.
    row_limit = max(1, MAX_TABLE_CELLS // max(1, len(columns)))
    rows, first = side_by_side(good, bad, columns, row_limit)
    final = final_grads(good, bad)
    return {
        "columns": columns,
        "rows": rows,
        "final": final,
        "first_divergence": first,
        "wrong": [f["label"] for f in final if f["wrong"]],
        "order": run.order,
        "steps": len(good["steps"]),
        "row_limit": row_limit,
        "truncated": len(rows) < len(good["steps"]),
        "limits": {"max_table_cells": MAX_TABLE_CELLS},
    }


def grad_columns(good: dict[str, Any]) -> list[str]:
    """The tables' columns: the nodes with a grad, in the order backward reaches them."""
    nodes = {n["id"]: n for n in good["nodes"]}
    has_grad = [n["id"] for n in good["nodes"] if n["grad"] is not None]
    on_path = [i for i in reversed(good["topo"]) if nodes[i]["grad"] is not None]
    seen = set(on_path)
    return on_path + [i for i in has_grad if i not in seen]


def side_by_side(
    good: dict[str, Any], bad: dict[str, Any], columns: list[str], row_limit: int
) -> tuple[list[dict[str, Any]], int | None]:
    """The first `row_limit` steps of both passes as rows, and the first step where the two
    tables differ (from every step)."""
    nodes = {n["id"]: n for n in good["nodes"]}
    place = {i: k for k, i in enumerate(columns)}
    zero = {i: np.zeros(nodes[i]["shape"]).tolist() if nodes[i]["shape"] else 0.0 for i in columns}
    table_add, table_assign = dict(zero), dict(zero)
    rows: list[dict[str, Any]] = []
    first: int | None = None
    diverged: set[str] = set()  # the columns where the two tables differ so far
    for k, (sa, sb) in enumerate(zip(good["steps"], bad["steps"], strict=True)):
        if k % 64 == 0:
            check_deadline()  # max_request_seconds, as the build checks it
        table_add.update(sa["grads"])
        table_assign.update(sb["grads"])
        # Only the cells this step wrote can change whether the two tables agree.
        for i in set(sa["grads"]) | set(sb["grads"]):
            if i not in place:
                continue
            if close(table_add[i], table_assign[i]):
                diverged.discard(i)
            else:
                diverged.add(i)
        if diverged and first is None:
            first = k
        if k >= row_limit:
            continue
        rows.append(
            {
                "step": k,
                "node": sa["node"],
                "add": sa["grads"],
                "assign": sb["grads"],
                "diverged": sorted(diverged, key=place.__getitem__),
                "overwritten": overwritten(sa, sb),
            }
        )
    return rows, first


def overwritten(sa: dict[str, Any], sb: dict[str, Any]) -> list[dict[str, Any]]:
    """The terms of one step that `=` wrote over a grad that already held something."""
    return [
        {
            "input": t["input"],
            "before": t["before"],
            "contribution": t["contribution"],
            "should_be": ta["after"],
        }
        for t, ta in zip(sb.get("terms", []), sa.get("terms", []), strict=True)
        if not close(t["before"], np.zeros_like(np.asarray(t["before"], float)))
    ]


def final_grads(good: dict[str, Any], bad: dict[str, Any]) -> list[dict[str, Any]]:
    """Each leaf's final grad under `+=` and under `=`, and whether `=` got it wrong."""
    final = []
    for n in good["nodes"]:
        if n["kind"] != "leaf":
            continue
        wrong_grad = bad["grads"][n["label"]]
        final.append(
            {
                "id": n["id"],
                "label": n["label"],
                "add": n["grad"],
                "assign": wrong_grad,
                "wrong": not close(n["grad"], wrong_grad),
            }
        )
    return final
