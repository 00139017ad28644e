"""Lesson 4, the gradient check: central differences in float64 beside the analytic grad.

For each leaf element (up to MAX_ELEMENTS in all, in row-major order), the output is evaluated
again with that element nudged to x + ε and x − ε, and (L(x+ε) − L(x−ε)) / 2ε is compared with
what backward gave. A non-scalar output is checked as its sum (the ones it is seeded with).

ε = 1e-5 (the step float64 actually takes is used). The error of a central difference has two
parts: truncation, about ε²·|L'''|/6, shrinking with ε; and rounding, about u·|L|/ε
(u ≈ 1.1e-16), growing as ε shrinks. They balance near ε ≈ u^(1/3) ≈ 5e-6. Of the notes' two
choices, 1e-5 (note 004) lands closer than 1e-6 (note 000): on the gallery's programs the worst
relative error is about 4e-9 with 1e-5 and 5e-8 with 1e-6, where small grads meet rounding.

relative error = |numeric − analytic| / (|numeric| + |analytic|), with both zero a pass; the
verdicts are seeds/ERRATA.md's: pass < 1e-7, warn < 1e-4, fail otherwise. Where the nudge
crosses a kink (relu or abs at 0, a max/min tie, a clamp bound: the ops whose `kink` is set)
the difference quotient is not a derivative, and the element is flagged "kink", not failed.

Where float64 cannot take the difference at all, the element is "unchecked", with its `reason`:
x ± ε rounds back to x (above |x| ≈ 9e10 float64's spacing is wider than 2ε: x = 1e308),
L(x ± ε) or the quotient is not finite, or |L| is so large that rounding alone (u·|L|/ε) would
keep the check from even a warn (L = 1e308 + y·y: L(y ± ε) are the same float). If no element
could be checked the verdict is "unchecked" (not a vacuous "pass"). Nothing non-finite is ever
sent: such numbers are null.

Bounded: at most MAX_ELEMENTS elements, fewer when 2·(op nodes) per element would pass
MAX_OP_EVALS (or their multiply-adds MAX_WORK), and the request's deadline
(max_request_seconds) is checked per element.
"""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

import numpy as np

from engine.autograd.value import Value
from engine.errors import Msg
from engine.lessons.common import number, op_work
from engine.limits import check_deadline
from engine.program import Run

EPS = 1e-5
U = 2.0**-53  # float64's unit roundoff
PASS, WARN = 1e-7, 1e-4
MAX_ELEMENTS = 64  # leaf elements checked per request (each costs two forward passes)
MAX_OP_EVALS = 200_000  # op evaluations a check may make, so a large graph checks fewer elements
MAX_WORK = 300_000_000  # …and multiply-adds (common.op_work), so large matmuls check fewer too


def verdict(rel: float) -> str:
    return "pass" if rel < PASS else "warn" if rel < WARN else "fail"


def relative_error(numeric: float, analytic: float) -> float:
    # Scaled by the larger of the two first, so that grads near 1e308 do not overflow the sum.
    m = max(abs(numeric), abs(analytic))
    if m == 0.0:
        return 0.0
    n, a = numeric / m, analytic / m
    return abs(n - a) / (abs(n) + abs(a))


def unchecked_reason(step: float, f_up: float, f_down: float, numeric: float) -> Msg | None:
    """Why an element cannot be checked by a central difference (a keyed message), or None if
    it can."""
    if step == 0.0:
        return Msg("gc_rounds_back", {})
    if not np.isfinite(f_up) and not np.isfinite(f_down):
        return Msg("gc_both_overflowed", {})
    if not np.isfinite(f_up):
        return Msg("gc_overflowed", {"what": "L(x+ε)"})
    if not np.isfinite(f_down):
        return Msg("gc_overflowed", {"what": "L(x−ε)"})
    if not np.isfinite(numeric):
        return Msg("gc_overflowed", {"what": "(L(x+ε) − L(x−ε)) / step"})
    return None


def lost_in_rounding(
    step: float, f_up: float, f_down: float, numeric: float, analytic: float
) -> Msg | None:
    """The rounding part of the error, u·|L|/step, can swamp the difference itself: L = 1e308 +
    y·y cannot show y's change of ε (L(y±ε) round to the same float). Where that noise alone
    keeps the check from even a "warn", the element is unchecked rather than failed."""
    noise = 2 * U * max(abs(f_up), abs(f_down)) / step
    if noise > WARN * (abs(numeric) + abs(analytic)):
        size = max(abs(f_up), abs(f_down))
        return Msg("gc_lost_in_rounding", {"size": f"{size:.3g}", "noise": f"{noise:.3g}"})
    return None


class Forward:
    """The program's forward pass again, with some leaf values replaced (no graph is built)."""

    def __init__(self, nodes: list[Value], output: Value) -> None:
        self.nodes = nodes
        self.output = output
        self.ops = sum(1 for n in nodes if n.op is not None)
        self.work = sum(op_work(n) for n in nodes)  # multiply-adds per pass, about

    def __call__(self, override: dict[int, np.ndarray]) -> tuple[float, list[np.ndarray]]:
        """L = Σ output at these leaf values, and where the kink ops' kinks are (each op's
        kink_at: x for relu, a − b for max, x − lo for clamp…)."""
        vals: dict[int, np.ndarray] = {}
        kinks: list[np.ndarray] = []
        with np.errstate(all="ignore"):
            for n in self.nodes:
                if n.op is None:
                    vals[n.seq] = override.get(n.seq, n.data)
                    continue
                args = [vals[x.seq] for x in n.inputs]
                vals[n.seq] = np.asarray(n.op.compute(*args), dtype=np.float64)
                if n.op.kink:
                    kinks.extend(n.op.kink_at(*args))
            return float(np.sum(vals[self.output.seq])), kinks


def crosses_kink(base: list[np.ndarray], up: list[np.ndarray], down: list[np.ndarray]) -> bool:
    """Does nudging the element move some kink op's argument across (or off) its kink?"""
    for b, u, d in zip(base, up, down, strict=True):
        moved = u != d
        if np.any(moved & ((np.sign(u) != np.sign(d)) | (b == 0))):
            return True
    return False


class GradcheckOptions(TypedDict, total=False):
    """What the gradient check takes through the API."""

    max_elements: int  # leaf elements checked at most (≤ MAX_ELEMENTS)


def gradcheck(run: Run, **options: Unpack[GradcheckOptions]) -> dict[str, Any]:
    """One row per checked leaf element, with a verdict. A run with `accumulate="assign"`
    checks the buggy backward (and fails where it overwrote)."""
    max_elements = options.get("max_elements", MAX_ELEMENTS)
    # The analytic side: the grads of the run's own backward pass.
    grads = {n.seq: n.grad for n in run.nodes}
    forward = Forward(run.nodes, run.output)
    budget = max(
        1, min(MAX_OP_EVALS // max(1, 2 * forward.ops), MAX_WORK // max(1, 2 * forward.work))
    )
    cap = max(1, min(int(max_elements), MAX_ELEMENTS, budget))
    base_value, base_kinks = forward({})
    rows: list[dict[str, Any]] = []
    leaves = run.leaves
    total = sum(n.data.size for n in leaves)
    for leaf in leaves:
        g = grads.get(leaf.seq)
        g = np.zeros(leaf.data.shape) if g is None else g
        for flat in range(leaf.data.size):
            check_deadline()
            if len(rows) >= cap:
                break
            row = check_element(forward, base_kinks, leaf, flat, g)
            rows.append({"leaf": run.id(leaf), "label": leaf.label, **row})
    summary = {
        v: sum(1 for r in rows if r["verdict"] == v)
        for v in ("pass", "warn", "fail", "kink", "unchecked")
    }
    return {
        "eps": EPS,
        "thresholds": {"pass": PASS, "warn": WARN},
        "value": number(base_value),  # null if the sum of the output overflows
        "rows": rows,
        "checked": len(rows),
        "elements": total,
        "limit": cap,
        "truncated": len(rows) < total,
        "summary": summary,
        "verdict": "fail"
        if summary["fail"]
        else "warn"
        if summary["warn"]
        else "unchecked"
        if rows and summary["unchecked"] == len(rows)
        else "pass",
        "accumulate": run.accumulate,
    }


def check_element(
    forward: Forward, base_kinks: list[np.ndarray], leaf: Value, flat: int, g: np.ndarray
) -> dict[str, Any]:
    """One element's row: the central difference beside the analytic grad (from the leaf's
    grad `g`), and a verdict."""
    index = np.unravel_index(flat, leaf.data.shape) if leaf.data.ndim else ()
    x0 = float(leaf.data[index])
    a = float(g[index])
    up, down = leaf.data.copy(), leaf.data.copy()
    up[index] = x0 + EPS
    down[index] = x0 - EPS
    step = float(up[index]) - float(down[index])  # the step float64 actually took
    f_up, k_up = forward({leaf.seq: up})
    f_down, k_down = forward({leaf.seq: down})
    with np.errstate(all="ignore"):
        numeric = (f_up - f_down) / step if step else float("nan")
    reason = unchecked_reason(step, f_up, f_down, numeric)
    rel = relative_error(numeric, a) if reason is None else float("inf")
    if reason is None and verdict(rel) != "pass":
        reason = lost_in_rounding(step, f_up, f_down, numeric, a)
    kink = reason is None and crosses_kink(base_kinks, k_up, k_down)
    return {
        "index": [int(i) for i in index],
        "value": x0,
        "analytic": a,
        "step": step,
        "up": f_up if np.isfinite(f_up) else None,
        "down": f_down if np.isfinite(f_down) else None,
        "numeric": numeric if np.isfinite(numeric) else None,
        "rel_error": rel if np.isfinite(rel) else None,
        "verdict": "unchecked" if reason else "kink" if kink else verdict(rel),
        # Why an "unchecked" element could not be checked: in English, and its key and params
        # (the app words it in the page's language: app/views.py, worded_reasons).
        "reason": None if reason is None else str(reason),
        "why": None if reason is None else reason.to_dict(),
        "texts": exact_texts(f_up, f_down),
    }


SHOWN_DIGITS = 10  # L(x±ε) differ past the 4 digits the page shows elsewhere: 7 and 7


def exact_texts(f_up: float, f_down: float) -> dict[str, str]:
    """L(x+ε), L(x−ε) and their difference to SHOWN_DIGITS significant digits: enough to see
    the difference the quotient is made of."""

    def digits(x: float, keep_zeros: bool = True) -> str:
        if not np.isfinite(x):
            return "—"
        return f"{x:#.{SHOWN_DIGITS}g}" if keep_zeros else f"{x:.{SHOWN_DIGITS}g}"

    with np.errstate(all="ignore"):
        diff = digits(f_up - f_down, keep_zeros=False)
        return {"up": digits(f_up), "down": digits(f_down), "diff": diff}
