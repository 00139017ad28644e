"""Lesson 3, forward mode beside reverse mode: dual numbers over the same graph.

Every value carries a tangent ẋ = ∂x/∂s along one input direction s. A pass seeds one input
element with 1 (a unit tangent; everything else 0) and pushes tangents through the graph in
topological order with each op's Jacobian–vector product (JVP): d(a·b) = ȧ·b + a·ḃ, and so on.
One pass gives one column of the Jacobian — for a scalar L, one entry of ∇L — so the gradient
takes one pass per input element, against one reverse pass (a vector–Jacobian product, VJP,
seeded with L̄ = 1) for all of them. Both give the same gradient; `same` says whether they do.
Each op's JVP and the text of its rule are the op's own (`jvp`, `jvp_rule`: engine/autograd/ops).

Bounded: at most MAX_PASSES passes, fewer when passes × op nodes would pass MAX_TANGENT_EVALS
or their multiply-adds MAX_WORK (`computed`, `limit`); SHOWN_PASSES of them are sent for
stepping, fewer once their tangents hold SHOWN_NUMBERS numbers (`shown`); the request's
deadline (max_request_seconds) is checked per pass. A tangent that leaves float64's range is
sent as null.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.graph import dfs_order
from engine.autograd.value import Value
from engine.lessons.common import number, op_work, reverse_walk
from engine.limits import check_deadline
from engine.program import Run
from engine.tracing.labels import jvp_text, tangent_name

MAX_PASSES = 256  # forward passes computed (one per input element)
MAX_TANGENT_EVALS = 200_000  # op tangents a request may compute: a large graph gets fewer passes
# …and multiply-adds (common.op_work): a 128×128 matmul's JVP is two 2M-flop products per pass
MAX_WORK = 300_000_000
SHOWN_ELEMENTS = 64  # a tangent larger than this is sent as null (its shape is in the trace)
SHOWN_PASSES = 12  # passes whose tangents are sent for stepping
SHOWN_NUMBERS = 100_000  # …and no more passes once their tangents hold this many numbers
Array = np.ndarray


def tangent_pass(
    topo: list[Value], seed: dict[int, Array], *, dense: bool = True
) -> dict[int, Array | None]:
    """One forward-mode pass: every node's tangent, given the leaves' tangents in `seed`.

    Every JVP is linear in the tangents, so a node whose inputs all have tangent 0 has tangent
    0 without computing it (and without 0·∞ = NaN from a rule evaluated at a constant): a
    one-hot seed touches only what depends on its leaf. With `dense=False` those zeros are
    left as None."""
    tangents: dict[int, Array | None] = {}
    with np.errstate(all="ignore"):
        for node in topo:
            if node.op is None:
                tangents[node.seq] = seed.get(node.seq)
                continue
            given = [tangents[x.seq] for x in node.inputs]
            if all(ti is None for ti in given):
                tangents[node.seq] = None
                continue
            t = [
                np.zeros(x.data.shape) if ti is None else ti
                for ti, x in zip(given, node.inputs, strict=True)
            ]
            x = [i.data for i in node.inputs]
            tangents[node.seq] = np.broadcast_to(
                np.asarray(node.op.jvp(x, t, node.data), dtype=np.float64),
                node.data.shape,
            ).copy()
    if dense:
        for node in topo:
            if tangents[node.seq] is None:
                tangents[node.seq] = np.zeros(node.data.shape)
    return tangents


def forward_mode(run: Run) -> dict[str, Any]:
    """One forward-mode pass per input element (up to the cap), beside one reverse pass."""
    root = run.output
    topo = dfs_order(root)
    ops = sum(1 for n in topo if n.op is not None)
    in_topo = {t.seq for t in topo}
    leaves = [n for n in run.leaves if n.seq in in_topo]
    inputs = [(leaf, idx) for leaf in leaves for idx in np.ndindex(leaf.data.shape)]
    n_inputs = len(inputs)
    work = sum(op_work(n) for n in topo)  # per pass; a JVP costs about twice its op
    cap = max(1, min(MAX_PASSES, MAX_TANGENT_EVALS // max(1, ops), MAX_WORK // max(1, 2 * work)))
    forward_grad, passes = forward_passes(run, topo, leaves, inputs[:cap])
    reverse, _topo = reverse_walk(root)  # the gradient by one reverse pass
    done = min(n_inputs, cap)
    # Compare the elements that got a forward pass (the first `done`, in leaf order).
    same, start = True, 0
    for leaf in leaves:
        k = max(0, min(leaf.data.size, done - start))
        a = forward_grad[leaf.seq].reshape(-1)[:k]
        b = reverse[leaf.seq].reshape(-1)[:k]
        same = same and bool(np.allclose(a, b, rtol=1e-9, atol=1e-12))
        start += leaf.data.size
    return {
        "topo": [run.id(n) for n in topo],
        "rules": {run.id(n): jvp_text(n) for n in topo if n.op is not None},
        "tangents": {run.id(n): tangent_name(n.label or "?") for n in topo},
        "passes": passes,
        "inputs": n_inputs,
        "computed": done,
        "shown": len(passes),
        "limit": cap,
        "forward": {run.id(leaf): number(forward_grad[leaf.seq]) for leaf in leaves},
        "reverse": {run.id(leaf): number(reverse[leaf.seq]) for leaf in leaves},
        "same": bool(same),
        "cost": {
            "inputs": n_inputs,
            "outputs": int(root.data.size),
            "ops": ops,
            "forward_passes": n_inputs,
            "reverse_passes": 1,
            "forward_evals": n_inputs * ops,  # one tangent (JVP) per op per pass
            "reverse_evals": ops,  # one local backward (VJP) per op, once
        },
    }


def forward_passes(
    run: Run, topo: list[Value], leaves: list[Value], inputs: list[tuple[Value, Any]]
) -> tuple[dict[int, Array], list[dict[str, Any]]]:
    """One pass per input element: the gradient they give, by leaf, and the first passes'
    tangents for stepping (SHOWN_PASSES of them, fewer past SHOWN_NUMBERS numbers)."""
    forward_grad: dict[int, Array] = {leaf.seq: np.zeros(leaf.data.shape) for leaf in leaves}
    passes = []
    shown_numbers = 0  # numbers sent in the shown passes' tangents so far
    for p, (leaf, idx) in enumerate(inputs):
        check_deadline()
        seed = np.zeros(leaf.data.shape)
        seed[idx] = 1.0
        tangents = tangent_pass(topo, {leaf.seq: seed}, dense=False)
        out_t = tangents[run.output.seq]
        with np.errstate(all="ignore"):
            forward_grad[leaf.seq][idx] = 0.0 if out_t is None else float(np.sum(out_t))
        if p < SHOWN_PASSES and shown_numbers < SHOWN_NUMBERS:
            shown: dict[str, Any] = {}
            for n in topo:
                tn = tangents[n.seq]
                if n.data.size > SHOWN_ELEMENTS:
                    shown[run.id(n)] = None
                else:
                    shown[run.id(n)] = number(np.zeros(n.data.shape) if tn is None else tn)
                    shown_numbers += n.data.size
            passes.append(
                {
                    "leaf": run.id(leaf),
                    "label": leaf.label,
                    "index": [int(i) for i in idx],
                    "tangents": shown,
                }
            )
    return forward_grad, passes
