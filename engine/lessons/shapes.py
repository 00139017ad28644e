"""Lesson 5, tensors shape by shape: what each backward step does to shapes.

For every backward step (aligned with the trace's steps) and each input edge: the incoming
grad's shape, the local rule with the shapes it multiplies (`dA = ū·Bᵀ: (2,3,2)@(2,2,4) →
(2,3,4)`), then — as a sub-step of its own — the reduction that sums a broadcast gradient back
to the input's shape ("(2,3,4) summed over axes 0 and 2 → (3,1)"), and the shape added into
the input's grad. The rules are the ops' own (engine.autograd.ops), run once more with a math
namespace that writes down what it does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.ops import ArrayMath
from engine.lessons.common import number
from engine.program import Run
from engine.tracing.labels import rule_text
from engine.tracing.record import Trace


class ShapeMath(ArrayMath):
    """ArrayMath that records the shape-changing work a rule does, in order."""

    def __init__(self) -> None:
        self.work: list[dict[str, Any]] = []

    def matmul(self, a: Any, b: Any) -> Any:  # type: ignore[override]
        out = np.matmul(a, b)
        self.work.append(
            {"kind": "matmul", "a": list(a.shape), "b": list(b.shape), "out": list(out.shape)}
        )
        return out

    def sum_to(self, g: Any, shape: tuple[int, ...]) -> Any:  # type: ignore[override]
        g = np.asarray(g)
        if g.shape != tuple(shape):
            lead = g.ndim - len(shape)
            ones = [lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1]
            self.work.append(
                {
                    "kind": "reduce",
                    "from": list(g.shape),
                    "to": list(shape),
                    "axes": list(range(lead)) + ones,
                    "added": list(range(lead)),
                    "ones": ones,
                }
            )
        return ArrayMath.sum_to(g, shape)

    def broadcast_to(self, x: Any, shape: Any) -> Any:  # type: ignore[override]
        x = np.asarray(x)
        if x.shape != tuple(shape):
            self.work.append({"kind": "broadcast", "from": list(x.shape), "to": list(shape)})
        return np.broadcast_to(x, shape)

    def scatter(self, g: Any, shape: tuple[int, ...], key: Any) -> Any:  # type: ignore[override]
        self.work.append({"kind": "scatter", "from": list(np.shape(g)), "to": list(shape)})
        return ArrayMath.scatter(g, shape, key)


def shapes(run: Run) -> dict[str, Any]:
    """Per backward step of the run's order, the shapes each input edge's rule works on."""
    with run.trace_with("add", run.order) as trace:
        return _shape_steps(trace)


def _shape_steps(trace: Trace) -> dict[str, Any]:
    ids = trace.ids()
    steps: list[dict[str, Any]] = []
    for k, step in enumerate(trace.steps):
        node = step.node
        if step.kind == "seed":
            steps.append(
                {"step": k, "node": ids[node.seq], "seed": True, "shape": list(node.data.shape)}
            )
            continue
        assert node.op is not None and step.upstream is not None
        terms = []
        for term in step.terms:
            needs = [i == term.arg for i in range(len(node.inputs))]
            m = ShapeMath()
            with np.errstate(all="ignore"):
                node.op.gradient(step.upstream, [x.data for x in node.inputs], node.data, needs, m)
            entry: dict[str, Any] = {
                "input": ids[term.input.seq],
                "arg": term.arg,
                "rule": rule_text(node, term.arg),
                "shape": list(term.input.data.shape),
                "work": m.work,
            }
            terms.append(entry)
        out: dict[str, Any] = {
            "step": k,
            "node": ids[node.seq],
            "op": node.op.name,
            "shape": list(node.data.shape),
            "upstream": list(step.upstream.shape),
            "inputs": [list(x.data.shape) for x in node.inputs],
            "terms": terms,
        }
        if node.op.name == "cross_entropy":
            z = node.inputs[0].data
            e = np.exp(z - z.max(axis=-1, keepdims=True))
            p = e / e.sum(axis=-1, keepdims=True)
            onehot = node.op.onehot(z)  # type: ignore[attr-defined]
            out["softmax"] = {
                "p": number(p),
                "onehot": number(onehot),
                "grad": number(p - onehot),
                "rows": 1 if z.ndim == 1 else int(z.shape[0]),
            }
        steps.append(out)
    return {"steps": steps, "tensors": any(n.data.ndim for n in trace.nodes)}
