"""Lesson 3, forward mode beside reverse mode: dual numbers over the same graph.

Every value carries a tangent ẋ = ∂x/∂s along one input direction s. A pass seeds one input
element with 1 (a unit tangent; everything else 0) and pushes tangents through the graph in
topological order with each op's Jacobian–vector product (JVP): d(a·b) = ȧ·b + a·ḃ, and so on.
One pass gives one column of the Jacobian — for a scalar L, one entry of ∇L — so the gradient
takes one pass per input element, against one reverse pass (a vector–Jacobian product, VJP,
seeded with L̄ = 1) for all of them. Both give the same gradient; `same` says whether they do.

Bounded: at most MAX_PASSES passes, fewer when passes × op nodes would pass MAX_TANGENT_EVALS
or their multiply-adds MAX_WORK (`computed`, `limit`); SHOWN_PASSES of them are sent for
stepping, fewer once their tangents hold SHOWN_NUMBERS numbers (`shown`); the request's
deadline (max_request_seconds) is checked per pass. A tangent that leaves float64's range is
sent as null.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine.autograd.graph import dfs_order
from engine.autograd.ops.gather import numpy_key
from engine.autograd.value import Value
from engine.lessons.common import number, op_work, reverse_walk
from engine.limits import check_deadline
from engine.program import Run

MAX_PASSES = 256  # forward passes computed (one per input element)
MAX_TANGENT_EVALS = 200_000  # op tangents a request may compute: a large graph gets fewer passes
# …and multiply-adds (common.op_work): a 128×128 matmul's JVP is two 2M-flop products per pass
MAX_WORK = 300_000_000
SHOWN_ELEMENTS = 64  # a tangent larger than this is sent as null (its shape is in the trace)
SHOWN_PASSES = 12  # passes whose tangents are sent for stepping
SHOWN_NUMBERS = 100_000  # …and no more passes once their tangents hold this many numbers
Array = np.ndarray
Jvp = Callable[[Any, list[Array], list[Array], Array], Array]


def _sum_axes(op: Any, t: Array, mean: bool, x: Array) -> Array:
    out = np.sum(t, axis=op.axis, keepdims=op.keepdims)
    if mean:
        out = out / (x.size // max(np.asarray(np.sum(x, axis=op.axis)).size, 1))
    return np.asarray(out)


def _pow(op: Any, x: list[Array], t: list[Array], out: Array) -> Array:
    a, b = x
    da = np.where(b == 0, 0.0, b * a ** (b - 1)) * t[0]
    if not np.any(t[1]):
        return da  # a constant exponent: its term is 0 (and ln of a negative base is NaN)
    ln_a = np.log(np.where(a == 0, 1.0, a))
    db = np.where((a == 0) & (b >= 0), 0.0, out * ln_a) * t[1]
    return da + db


def _share(a: Array, b: Array, bigger: bool) -> Array:
    win = (a > b) if bigger else (a < b)
    return win + 0.5 * (a == b)


def _cross_entropy(op: Any, x: list[Array], t: list[Array], out: Array) -> Array:
    z = x[0]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    rows = 1 if z.ndim == 1 else z.shape[0]
    return np.asarray(np.sum((p - op.onehot(z)) * t[0]) / rows)


def _softmax(op: Any, x: list[Array], t: list[Array], out: Array) -> Array:
    return out * (t[0] - np.sum(out * t[0], axis=op.axis, keepdims=True))


def _log_softmax(op: Any, x: list[Array], t: list[Array], out: Array) -> Array:
    return t[0] - np.sum(np.exp(out) * t[0], axis=op.axis, keepdims=True)


def _scatter(op: Any, x: list[Array], t: list[Array], out: Array) -> Array:
    res = np.zeros(op.shape)
    res[op.key] = t[0]
    return res


def _gather(op: Any, x: list[Array], t: list[Array], out: Array) -> Array:
    return np.array(t[0][numpy_key(op.key)])


# The JVP of each op: (op, input values, input tangents, output value) -> output tangent.
JVPS: dict[str, Jvp] = {
    "add": lambda op, x, t, out: t[0] + t[1],
    "sub": lambda op, x, t, out: t[0] - t[1],
    "mul": lambda op, x, t, out: t[0] * x[1] + x[0] * t[1],
    "div": lambda op, x, t, out: t[0] / x[1] - x[0] * t[1] / (x[1] * x[1]),
    "pow": _pow,
    "max": lambda op, x, t, out: (
        _share(x[0], x[1], True) * t[0] + (1 - _share(x[0], x[1], True)) * t[1]
    ),
    "min": lambda op, x, t, out: (
        _share(x[0], x[1], False) * t[0] + (1 - _share(x[0], x[1], False)) * t[1]
    ),
    "neg": lambda op, x, t, out: -t[0],
    "exp": lambda op, x, t, out: out * t[0],
    "log": lambda op, x, t, out: t[0] / x[0],
    "sqrt": lambda op, x, t, out: t[0] / (2 * out),
    "sin": lambda op, x, t, out: np.cos(x[0]) * t[0],
    "cos": lambda op, x, t, out: -np.sin(x[0]) * t[0],
    "tanh": lambda op, x, t, out: (1 - out * out) * t[0],
    "sigmoid": lambda op, x, t, out: out * (1 - out) * t[0],
    "relu": lambda op, x, t, out: (x[0] > 0) * t[0],
    "abs": lambda op, x, t, out: np.sign(x[0]) * t[0],
    "matmul": lambda op, x, t, out: np.matmul(t[0], x[1]) + np.matmul(x[0], t[1]),
    "sum": lambda op, x, t, out: _sum_axes(op, t[0], False, x[0]),
    "mean": lambda op, x, t, out: np.asarray(np.mean(t[0], axis=op.axis, keepdims=op.keepdims)),
    "reshape": lambda op, x, t, out: np.reshape(t[0], op.shape),
    "transpose": lambda op, x, t, out: np.transpose(t[0], op.permutation(x[0].ndim)),
    "index": lambda op, x, t, out: np.array(t[0][op.key]),
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "cross_entropy": _cross_entropy,
    "mse": lambda op, x, t, out: np.asarray(
        np.sum(2 * (x[0] - x[1]) * (t[0] - t[1])) / max(np.broadcast(x[0], x[1]).size, 1)
    ),
    "broadcast_to": lambda op, x, t, out: np.broadcast_to(t[0], op.shape).copy(),
    "scatter": _scatter,
    "where": lambda op, x, t, out: np.where(op.cond, t[0], t[1]),
    # joins, clamp and integer-array indexing: each linear in its inputs but clamp, whose JVP
    # is its mask times the tangent
    "cat": lambda op, x, t, out: np.concatenate(t, axis=op.axis),
    "stack": lambda op, x, t, out: np.stack(t, axis=op.axis),
    "clamp": lambda op, x, t, out: op.inside(x[0]) * t[0],
    "gather": _gather,
    "scatter_add": lambda op, x, t, out: op.compute(t[0]),  # gather's gradient, under grad()
}


# The JVP rules as the page writes them: {0}, {1} the inputs, {d0}, {d1} their tangents (see
# tangent_name), {out} the result, {all} every input's tangent in order (cat and stack take any
# number of inputs).
JVP_RULES = {
    "add": "{d0} + {d1}",
    "sub": "{d0} − {d1}",
    "mul": "{d0}·{1} + {0}·{d1}",
    "div": "{d0}/{1} − {0}·{d1}/{1}²",
    "pow": "{1}·{0}^({1}−1)·{d0} + {out}·ln {0}·{d1}",
    "max": "[{0} ≥ {1}]·{d0} + [{1} ≥ {0}]·{d1}",
    "min": "[{0} ≤ {1}]·{d0} + [{1} ≤ {0}]·{d1}",
    "neg": "−{d0}",
    "exp": "{out}·{d0}",
    "log": "{d0}/{0}",
    "sqrt": "{d0}/(2·{out})",
    "sin": "cos {0}·{d0}",
    "cos": "−sin {0}·{d0}",
    "tanh": "(1−{out}²)·{d0}",
    "sigmoid": "{out}·(1−{out})·{d0}",
    "relu": "[{0} > 0]·{d0}",
    "abs": "sign {0}·{d0}",
    "matmul": "{d0}@{1} + {0}@{d1}",
    "sum": "Σ {d0}",
    "mean": "mean {d0}",
    "reshape": "reshape {d0}",
    "transpose": "{d0} transposed",
    "index": "{d0}[key]",
    "softmax": "{out}·({d0} − Σ {out}·{d0})",
    "log_softmax": "{d0} − Σ softmax({0})·{d0}",
    "cross_entropy": "Σ (softmax({0}) − onehot(t))·{d0} / N",
    "mse": "Σ 2({0}−{1})({d0}−{d1})/n",
    "broadcast_to": "broadcast {d0}",
    "scatter": "scatter {d0}",
    "where": "where(cond, {d0}, {d1})",
    "cat": "cat({all})",
    "stack": "stack({all})",
    "clamp": "[{lo} ≤ {0} ≤ {hi}]·{d0}",
    "gather": "{d0}[key]",
    "scatter_add": "scatter_add {d0}",
}


def tangent_name(label: str) -> str:
    """A tangent as a student reads it: the dot over a one-letter name (ẋ, ẋ₁), `d name` for
    a longer one (d out), `d(…)` around an expression."""
    if label[:1].isalpha() and all("₀" <= c <= "₉" for c in label[1:]):
        # combining dot above: over the letter (ẋ, ẋ₁), one character wide
        return label[0] + "\u0307" + label[1:]
    if label.replace("_", "").isalnum():
        return "d " + label
    return f"d({label})"


def jvp_text(node: Value) -> str:
    """The JVP rule of `node`'s op, with its inputs' names and their tangents'."""
    assert node.op is not None

    def label(v: Value) -> str:
        text = v.label or "?"
        return text if text.replace("_", "").isalnum() else f"({text})"

    names = {str(i): label(x) for i, x in enumerate(node.inputs)}
    names.update({f"d{i}": tangent_name(x.label or "?") for i, x in enumerate(node.inputs)})
    names["out"] = label(node)
    names["all"] = ", ".join(tangent_name(x.label or "?") for x in node.inputs)
    if node.op.name == "clamp":  # its bounds as numbers; an absent one is no bound
        lo, hi = node.op.lo, node.op.hi  # type: ignore[attr-defined]
        names["lo"] = "−∞" if lo is None else f"{lo:g}"
        names["hi"] = "∞" if hi is None else f"{hi:g}"
    text = JVP_RULES.get(node.op.name, "?")
    for key, value in names.items():
        text = text.replace("{" + key + "}", value)
    return text


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
                np.asarray(JVPS[node.op.name](node.op, x, t, node.data), dtype=np.float64),
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
