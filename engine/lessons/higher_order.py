"""Lesson 6, higher-order gradients: what `grad(L, x)` built, and the backward pass through it.

`grad(L, x)` (engine/autograd/higher.py) runs the first backward pass with graph nodes, so
∂L/∂x is a node like any other; the page's own trace is then the *second* backward pass,
through those nodes. For `y = x**3; g = grad(y, x)` the first pass builds g = 3·x**2 (27 at
x = 3) and the second pass gives x.grad = 6x (18). Each grad call is listed with the nodes it
built, and the second pass is checked against central differences of the built graph.

Bounded like gradcheck: at most MAX_CHECKS leaves, fewer when 2·(op nodes) per leaf would pass
gradcheck's MAX_OP_EVALS (`limit`, `truncated`), the request's deadline checked per leaf. A
leaf whose nudged forward passes are not finite, or where x ± ε rounds back to x, gets
`numeric: null, agree: null` and a reason in `unchecked`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.graph import reachable
from engine.lessons.common import number
from engine.lessons.gradcheck import MAX_OP_EVALS, Forward, unchecked_reason
from engine.limits import check_deadline
from engine.program import Run

EPS = 1e-5
MAX_CHECKS = 64  # scalar leaves checked by central differences (two forward passes each)


def higher(run: Run) -> dict[str, Any]:
    """The grad() calls and the nodes each built, and the second pass checked leaf by leaf."""
    with run.trace_with("add", run.order):
        # The second pass's grads, by leaf (backward never changes a grad in place).
        analytic_of = {leaf.seq: leaf.grad for leaf in run.leaves}
    calls = []
    for call in run.grads_built:
        span = call["span"]
        calls.append(
            {
                "output": run.id(call["output"]),
                "wrt": run.id(call["wrt"]),
                "result": run.id(call["result"]),
                "value": number(call["result"].data),
                "nodes": [run.id(n) for n in call["nodes"]],
                "line": span.line if span else None,
            }
        )
    # The second pass: each leaf's grad from the trace, beside a central difference of the
    # whole program (grad() graphs included) in that leaf (scalar leaves only).
    forward = Forward(run.nodes, run.output)
    scalar_leaves = [leaf for leaf in run.leaves if not leaf.data.ndim]
    # Two forward passes per leaf: a program of many leaves checks the first `limit` of them.
    cap = max(1, min(MAX_CHECKS, MAX_OP_EVALS // max(1, 2 * forward.ops)))
    checks = []
    unchecked: dict[str, str] = {}
    for leaf in scalar_leaves[:cap]:
        check_deadline()  # max_request_seconds, as the build checks it
        x0 = float(leaf.data)
        up_x, down_x = leaf.data + EPS, leaf.data - EPS
        step = float(up_x) - float(down_x)  # the step float64 actually took
        up, down = forward({leaf.seq: up_x})[0], forward({leaf.seq: down_x})[0]
        with np.errstate(all="ignore"):
            numeric = (up - down) / step if step else float("nan")
        reason = unchecked_reason(step, up, down, numeric)
        analytic = analytic_of[leaf.seq]
        a = float(analytic) if analytic is not None else 0.0
        if reason is not None:
            unchecked[run.id(leaf)] = str(reason)  # in English: the page does not show it
        checks.append(
            {
                "leaf": run.id(leaf),
                "label": leaf.label,
                "value": x0,
                "analytic": a,
                "numeric": None if reason else numeric,  # null: not checkable (`unchecked`)
                "agree": None if reason else bool(np.isclose(a, numeric, rtol=1e-6, atol=1e-8)),
            }
        )
    return {
        "calls": calls,
        "second_pass": bool(calls) and any(c["result"] in _depends(run) for c in calls),
        "checks": checks,
        "unchecked": unchecked,  # leaf id -> why a central difference could not be taken
        "leaves": len(scalar_leaves),
        "limit": cap,
        "truncated": len(checks) < len(scalar_leaves),
        "output": run.id(run.output),
    }


def _depends(run: Run) -> set[str]:
    return {run.id(n) for n in reachable(run.output)}
