"""`gradtrace trace "x*y + x" --values x=2,y=3`: the per-step grad table in a terminal."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from engine.errors import ProgramError
from engine.program import run
from engine.table import format_number, grad_table
from engine.valuespec import parse_values

CHANGED = "*"


def render_table(trace: dict[str, Any]) -> str:
    """Rows = steps, columns = nodes; a `*` marks the cells that step changed."""
    columns, rows = grad_table(trace)
    labels = {n["id"]: n["label"] for n in trace["nodes"]}
    ops = {n["id"]: n["op"] for n in trace["nodes"]}
    header = ["step", "ran"] + [f"{labels[c['id']]}.grad" for c in columns]
    body = []
    for row in rows:
        what = "seed" if row.step == 0 else ops[row.node]
        cells = [str(row.step), f"{labels[row.node]} ({what})"]
        for c in columns:
            mark = CHANGED if c["id"] in row.changed else ""
            cells.append(format_number(row.grads[c["id"]]) + mark)
        body.append(cells)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in body]
    return "\n".join(out)


def summary(trace: dict[str, Any]) -> str:
    grads = ", ".join(f"{k}.grad = {format_number(v)}" for k, v in trace["grads"].items())
    return f"output = {format_number(trace['value'])}; {grads}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gradtrace",
        description="Run a program and show every step of its backward pass.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace", help="print the per-step grad table of a program")
    t.add_argument("program", help="program text, or @FILE to read it from a file")
    t.add_argument("--values", default="", help="free names' values: x=2,y=3 or a JSON object")
    t.add_argument("--accumulate", choices=["add", "assign"], default="add",
                   help="'assign' shows the = instead of += bug")
    t.add_argument("--order", choices=["dfs", "kahn"], default="dfs")
    t.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    args = parser.parse_args(argv)

    source = args.program
    if source.startswith("@"):
        with open(source[1:], encoding="utf-8") as f:
            source = f.read()
    try:
        trace = run(source, parse_values(args.values), args.accumulate, args.order).to_dict()
    except ProgramError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(trace, ensure_ascii=False))
    else:
        print(render_table(trace))
        print()
        print(summary(trace))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
