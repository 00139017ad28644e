"""The anchors the targets are set against, measured in the same run.

- micrograd (PyPI, the `bench` extra): its Value and MLP, and the lecture's `draw_dot` written
  out as DOT text (what the `graphviz` package would hand to `dot`), laid out by a `dot`
  subprocess.
- A naive server: every step re-runs the program, draws that step and lays it out again with a
  new `dot` process (no layout reuse, no cache) — what "re-render per step" costs.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from engine import drawing as draw
from engine import run


def micrograd() -> Any:
    try:
        import micrograd.engine as mg
    except ImportError:  # pragma: no cover - the bench extra is missing
        sys.exit("the bench needs micrograd: pip install -e '.[bench]'")
    return mg


def micrograd_nn() -> Any:
    micrograd()
    import micrograd.nn as nn

    return nn


def dot_svg(dot_text: str) -> bytes:
    """One `dot -Tsvg` subprocess, as a naive server (or micrograd's draw_dot) runs it."""
    proc = subprocess.run(
        ["dot", "-Tsvg"], input=dot_text.encode(), capture_output=True, check=True
    )
    return proc.stdout


def draw_dot_text(root: Any, rankdir: str = "LR") -> str:
    """micrograd's `draw_dot` (trace_graph.ipynb) as DOT text: a record per value, a small node
    per op. Walked iteratively, so 2,000 values do not hit the recursion limit."""
    nodes: dict[int, Any] = {}
    edges: set[tuple[int, int]] = set()
    todo = [root]
    while todo:
        v = todo.pop()
        if id(v) in nodes:
            continue
        nodes[id(v)] = v
        for child in v._prev:
            edges.add((id(child), id(v)))
            todo.append(child)
    out = [f"digraph {{\n  graph [rankdir={rankdir}]"]
    for key, n in nodes.items():
        out.append(f'  {key} [label="{{ data {n.data:.4f} | grad {n.grad:.4f} }}" shape=record]')
        if n._op:
            out.append(f'  "{key}{n._op}" [label="{n._op}"]')
            out.append(f'  "{key}{n._op}" -> {key}')
    for a, b in edges:
        out.append(f'  {a} -> "{b}{nodes[b]._op}"')
    out.append("}")
    return "\n".join(out) + "\n"


def micrograd_chain(steps: int) -> Any:
    """v = v*a + b, `steps` times: 2 values per step."""
    mg = micrograd()
    a, b, v = mg.Value(1.0001), mg.Value(0.001), mg.Value(0.5)
    for _ in range(steps):
        v = v * a + b
    return v


def micrograd_graph(values: int) -> Any:
    """About `values` micrograd values: v = v*c + d with fresh constants each step (as
    micrograd wraps the numbers it meets), so no value has a huge fan-out."""
    mg = micrograd()
    v = mg.Value(0.5)
    for i in range(max(1, (values - 1) // 4)):
        v = v * (1.0 + i * 1e-6) + 0.001
    return v


def micrograd_values(root: Any) -> int:
    seen: set[int] = set()
    todo = [root]
    while todo:
        v = todo.pop()
        if id(v) not in seen:
            seen.add(id(v))
            todo.extend(v._prev)
    return len(seen)


def micrograd_first_picture(steps: int = 1) -> bytes:
    """micrograd + draw_dot + `dot`: `x*y + x` (4 values), forward, backward, picture."""
    mg = micrograd()
    x, y = mg.Value(2.0), mg.Value(3.0)
    out = x * y + x
    for _ in range(steps - 1):
        out = out * y + x
    out.backward()
    return dot_svg(draw_dot_text(out))


def micrograd_mlp_per_step(steps: int) -> None:
    """micrograd's way to show every step: draw_dot + `dot` once per step of the MLP."""
    nn = micrograd_nn()
    model = nn.MLP(3, [4, 4, 1])
    out = model([2.0, 3.0, -1.0])
    out.backward()
    text = draw_dot_text(out)
    for _ in range(steps):
        dot_svg(text)


def naive_per_step(source: str) -> int:
    """Re-render per step: for each step, run the program, draw that step's DOT and lay it out
    with a new `dot` process, then tag the SVG as the app does. Returns the steps drawn."""
    trace = run(source).to_dict()
    n = len(trace["steps"])
    for k in range(n):
        trace = run(source).to_dict()
        lay = draw.build(trace, k)
        draw.finish_svg(dot_svg(lay.dot).decode(), lay, trace)
    return n
