"""The per-step grad table (the lesson's Figure 2): one row per step, one column per node.

Built from a trace's dict by merging each step's deltas into the running grads; a cell is
"changed" when that step wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Row:
    step: int
    node: str  # the id of the node whose backward ran
    grads: dict[str, Any]  # id -> grad after this step
    changed: frozenset[str]


def grad_table(trace: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Row]]:
    """The table's columns (nodes that get a grad, constants left out) and its rows."""
    columns = [n for n in trace["nodes"] if n["kind"] != "const" and n["grad"] is not None]
    running: dict[str, Any] = {n["id"]: zero_like(n["grad"]) for n in columns}
    rows = []
    for k, step in enumerate(trace["steps"]):
        running.update(step["grads"])
        rows.append(Row(k, step["node"], dict(running), frozenset(step["grads"])))
    return columns, rows


def zero_like(value: Any) -> Any:
    if isinstance(value, list):
        return [zero_like(v) for v in value]
    return 0.0


def format_number(value: Any, digits: int = 4) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(format_number(v, digits) for v in value) + "]"
    v = float(value)
    if v == 0:
        return "0"
    return f"{v:.{digits}g}"
