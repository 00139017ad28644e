"""Lesson 9, misconceptions, each with the symptom it really produces.

- **backward twice**: leaf grads accumulate, so a second backward doubles them. PyTorch frees
  the saved tensors after the first backward and raises (unless retain_graph=True), but only
  if some op saved one: a graph of adds runs twice without complaint, and the grads double.
- **forgetting zero_grad**: a few steps of gradient descent on the program's output; without
  zeroing, each step uses the sum of every grad so far, and the parameters take a different
  path.
- **a missing local backward**: one op passes nothing on, as in the notes' own `max` example
  (ERRATA 1: its `b` has no backward, so ∂L/∂x comes out 18 instead of 36); every path through
  that op is silently dropped.
- **a non-scalar output**: backward needs an upstream vector v and gives vᵀJ; a one-hot v picks
  one output's gradient (one row of the Jacobian), ones give the gradient of the sum.
"""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

import numpy as np

from engine.lessons.common import number, op_nodes, reverse_walk
from engine.lessons.memory import saved_by
from engine.lessons.rerun import zeroing_statements
from engine.limits import check_deadline
from engine.program import Run

TORCH_TWICE = (
    "RuntimeError: Trying to backward through the graph a second time (or directly access "
    "saved tensors after they have already been freed). Saved intermediate values of the graph "
    "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you "
    "need to backward through the graph a second time or if you need to access saved tensors "
    "after calling backward."
)
SGD_STEPS = 3
LR = 0.1
MAX_ROWS = 8  # one-hot upstream vectors shown for a non-scalar output


def leaf_grads(run: Run, grads: dict[int, np.ndarray]) -> dict[str, Any]:
    return {run.id(n): number(grads.get(n.seq, np.zeros(n.data.shape))) for n in run.leaves}


def refresh(run: Run) -> None:
    """Run the forward pass again after leaf values changed (the graph stays as built)."""
    with np.errstate(all="ignore"):
        for n in run.nodes:
            if n.op is not None:
                n.data = np.asarray(n.op.compute(*(x.data for x in n.inputs)), dtype=np.float64)


def twice(run: Run) -> dict[str, Any]:
    grads, topo = reverse_walk(run.output)
    saves = any(saved_by(n) for n in op_nodes(topo))
    first = leaf_grads(run, grads)
    with np.errstate(all="ignore"):  # 2·g can overflow: number() sends it as null
        second = leaf_grads(run, {s: 2 * g for s, g in grads.items()})
    return {
        "first": first,
        "second": second,
        "saves": saves,
        "torch_error": TORCH_TWICE if saves else None,
    }


def zero_grad(run: Run, steps: int = SGD_STEPS, lr: float = LR) -> dict[str, Any]:
    """`steps` of p -= lr·p.grad, with and without zeroing the grads between steps."""
    start = {n.seq: n.data.copy() for n in run.leaves}
    runs: dict[str, list[dict[str, Any]]] = {}
    for zero in (True, False):
        for n in run.leaves:
            n.data = start[n.seq].copy()
        refresh(run)
        held = {n.seq: np.zeros(n.data.shape) for n in run.leaves}
        rows = []
        for t in range(1, steps + 1):
            grads, _ = reverse_walk(run.output)
            fresh = {n.seq: grads.get(n.seq, np.zeros(n.data.shape)) for n in run.leaves}
            held = fresh if zero else {s: held[s] + fresh[s] for s in held}
            rows.append(
                {
                    "t": t,
                    "loss": number(np.sum(run.output.data)),
                    "params": {run.id(n): number(n.data) for n in run.leaves},
                    "fresh": {run.id(n): number(fresh[n.seq]) for n in run.leaves},
                    "held": {run.id(n): number(held[n.seq]) for n in run.leaves},
                }
            )
            for n in run.leaves:
                n.data = n.data - lr * held[n.seq]
            refresh(run)
        rows.append(
            {
                "t": steps + 1,
                "loss": number(np.sum(run.output.data)),
                "params": {run.id(n): number(n.data) for n in run.leaves},
            }
        )
        runs["zeroed" if zero else "accumulated"] = rows
    for n in run.leaves:
        n.data = start[n.seq]
    refresh(run)
    return {"lr": lr, "steps": steps, **runs}


def zeroing_loop(run: Run) -> dict[str, Any] | None:
    """A program that runs a loop of passes and zeroes grads in it: its zeroing lines, which
    the training lesson takes out to show the same loop without them (training.py)."""
    if len(run.interpreter.passes.passes) < 2:
        return None
    stmts = zeroing_statements(run.source.tree)
    if not stmts:
        return None
    return {"lines": [{"line": s.lineno, "text": run.source.segment(run.source.span(s))}
                      for s in stmts]}  # fmt: skip


def missing(run: Run, drop: str | None) -> dict[str, Any]:
    grads, topo = reverse_walk(run.output)
    candidates = [n for n in op_nodes(topo) if n is not run.output]
    if not candidates:
        return {"candidates": [], "dropped": None}
    chosen = next((n for n in candidates if run.id(n) == drop), None)
    if chosen is None:  # the notes' case first: a max or min, else the op nearest the output
        chosen = next(
            (n for n in reversed(candidates) if n.op and n.op.name in ("max", "min")),
            candidates[-1],
        )
    wrong, _ = reverse_walk(run.output, skip=frozenset({chosen.seq}))
    right = leaf_grads(run, grads)
    bad = leaf_grads(run, wrong)
    return {
        "candidates": [run.id(n) for n in reversed(candidates)],
        "dropped": run.id(chosen),
        "correct": right,
        "without": bad,
        "wrong": [
            run.id(n)
            for n in run.leaves
            if not np.allclose(grads.get(n.seq, 0.0), wrong.get(n.seq, 0.0), equal_nan=True)
        ],
        "received": number(grads[chosen.seq]),  # the grad that reached it and went no further
    }


def vector(run: Run, upstream: Any = None) -> dict[str, Any]:
    out = run.output
    if out.data.ndim == 0:
        return {"scalar": True}
    rows = []
    for i, idx in enumerate(np.ndindex(out.data.shape)):
        if i >= MAX_ROWS:
            break
        v = np.zeros(out.data.shape)
        v[idx] = 1.0
        grads, _ = reverse_walk(out, seed=v)
        rows.append(
            {"index": [int(j) for j in idx], "v": number(v), "grads": leaf_grads(run, grads)}
        )
    ones, _ = reverse_walk(out)
    custom = None
    if upstream is not None:
        try:
            u = np.broadcast_to(np.asarray(upstream, dtype=np.float64), out.data.shape)
        except (ValueError, TypeError, OverflowError):  # ragged, not numbers, or past float64
            u = None
        if u is not None and np.isfinite(u).all():
            g, _ = reverse_walk(out, seed=u.copy())
            custom = {"v": number(u), "grads": leaf_grads(run, g)}
    return {
        "scalar": False,
        "shape": list(out.data.shape),
        "size": int(out.data.size),
        "rows": rows,
        "ones": leaf_grads(run, ones),
        "custom": custom,
    }


class MistakesOptions(TypedDict, total=False):
    """What the misconceptions lesson takes through the API."""

    drop: str | None  # the node id whose local backward goes missing (default: the notes' case)
    upstream: float | list[Any] | None  # an upstream vector for a non-scalar output


def mistakes(run: Run, **options: Unpack[MistakesOptions]) -> dict[str, Any]:
    """The four misconceptions, each shown on the run's graph."""
    start = [n.data for n in run.nodes]
    # SGD steps and chosen upstream vectors can leave float64's range on a valid program: such
    # numbers are sent as null (number()), and numpy's warnings about them are not errors.
    try:
        with np.errstate(all="ignore"):
            out: dict[str, Any] = {"twice": twice(run)}
            check_deadline()
            out["zero_grad"] = zero_grad(run)
            out["zero_grad"]["loop"] = zeroing_loop(run)
            check_deadline()
            out["missing"] = missing(run, options.get("drop"))
            check_deadline()
            out["vector"] = vector(run, options.get("upstream"))
    finally:
        # zero_grad moved the leaves and ran the forward pass again: the run's own values back,
        # the very arrays the page's trace and the other lessons read.
        for n, data in zip(run.nodes, start, strict=True):
            n.data = data
    out["leaves"] = [run.id(n) for n in run.leaves]
    return out
