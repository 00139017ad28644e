"""The training lesson: a loop of passes, seen. Three parts, each from the run's own passes
(engine/tracing/passes.py) and from the same program run again with one edit (rerun.py):

- **zero_grad**: the loop run again with its zeroing lines (`w.grad.zero_()`, `w.grad = None`,
  `opt.zero_grad()`) taken out: both loss curves, the leaf's grad growing pass by pass without
  them, the first pass and step where the two runs part;
- **path**: for one or two scalar parameters (a leaf's numbers), the loss over them on a grid
  around their path, each grid point the loss of pass 1's graph re-evaluated there; the
  parameters at each pass and the update each pass made (−lr·grad for plain SGD). Three or
  more: each one's value and grad per pass;
- **rates**: the loop at lr/10, lr and 10·lr (the optimizer's `lr=`, else the number
  multiplying `.grad` in the update), the curves overlaid, so divergence shows.

Bounded: the reruns run under the run's limits and the request's deadline; the grid's work
stops at MAX_GRID_WORK elements, the series at MAX_SERIES_NUMBERS numbers a run.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict, Unpack

import numpy as np

from engine.autograd.value import Value
from engine.errors import ProgramError
from engine.lessons.common import close, number
from engine.lessons.rerun import (
    Rerun,
    learning_rate,
    rerun,
    spliced,
    with_rate,
    without_zeroing,
    zeroing_statements,
)
from engine.limits import check_deadline
from engine.program import Run
from engine.tracing.passes import Pass

MAX_COORDS = 24  # parameters' numbers plotted per pass, for three or more
MAX_SERIES_NUMBERS = 60_000  # numbers of one run's per-pass values and grads
GRID = 25  # points on each side of the contour grid (two parameters)
GRID_1D = 121  # points of the loss curve over one parameter
MAX_GRID_WORK = 3_000_000  # elements computed re-evaluating pass 1's graph over the grid
PAD = 0.2  # the grid reaches this share of the path's extent past it on each side
FACTORS = (0.1, 1.0, 10.0)


class TrainingOptions(TypedDict, total=False):
    """What the training lesson takes through the API."""

    pair: list[Any] | None  # for three parameters or more: the two the contours are over


def chosen_pair(given: Any, n: int) -> tuple[int, int] | None:
    """Two different coordinates among the `n` shown, or None."""
    if not isinstance(given, list) or len(given) != 2:
        return None
    a, b = given
    ok = all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in (a, b))
    return (a, b) if ok and a != b else None


def training(run: Run, **options: Unpack[TrainingOptions]) -> dict[str, Any]:
    """The three parts, or `{"training": False}` for a program of one pass."""
    passes = run.interpreter.passes.passes
    if len(passes) < 2:
        return {"training": False, "passes": len(passes)}
    leaves = list(run.interpreter.passes.leaves)
    params = trained(passes, leaves)
    coords = [(i, j) for i in params for j in range(leaves[i].data.size)]
    shown = coords[: max(1, min(MAX_COORDS, MAX_SERIES_NUMBERS // (2 * len(passes) + 1)))]
    base = series(passes, leaves, shown, None)
    out: dict[str, Any] = {
        "training": True,
        "passes": len(passes),
        "coords": [coord_info(run, leaves, c) for c in shown],
        "count": len(coords),
        "loss": base["loss"],
        "values": base["values"],
        "grads": base["grads"],
        "lines": [p.span.line if p.span else None for p in passes],
        "first_steps": first_steps(passes),
    }
    check_deadline()
    out["zero_grad"] = zero_grad(run, passes, leaves, params, shown, base)
    check_deadline()
    pair = chosen_pair(options.get("pair"), len(shown)) if len(coords) > 2 else None
    out["path"] = path(run, passes, leaves, shown, len(coords), base, pair)
    check_deadline()
    out["rates"] = rates(run, leaves, shown, len(coords) <= 2, base)
    out["limits"] = {"grid": GRID, "max_grid_work": MAX_GRID_WORK, "max_coords": MAX_COORDS}
    return out


# --- the parameters and their numbers per pass -----------------------------------------------
def trained(passes: list[Pass], leaves: list[Value]) -> list[int]:
    """The leaves a pass gave a grad to and an update moved (else those given a grad), by
    their place in creation order."""
    first = passes[0].leaves_before
    with_grad = [i for i, leaf in enumerate(leaves)
                 if any(p.grads_after.get(leaf.seq) is not None for p in passes)]  # fmt: skip
    moved = [i for i in with_grad
             if leaves[i].seq in first and not np.array_equal(first[leaves[i].seq],
                                                              leaves[i].data)]  # fmt: skip
    return moved or with_grad


def coord_info(run: Run, leaves: list[Value], c: tuple[int, int]) -> dict[str, Any]:
    leaf = leaves[c[0]]
    shape = leaf.data.shape
    index = [int(k) for k in np.unravel_index(c[1], shape)] if shape else []
    label = leaf.label or leaf.name or "?"
    return {
        "id": run.ids.get(leaf.seq),
        "label": label + ("[" + ", ".join(map(str, index)) + "]" if index else ""),
        "leaf": label,
        "index": index,
    }


def at(arrays: dict[int, Any], leaf: Value | None, j: int) -> float | None:
    if leaf is None:
        return None
    a = arrays.get(leaf.seq)
    if a is None:
        return None
    return number(np.asarray(a, dtype=np.float64).reshape(-1)[j])


def series(
    passes: list[Pass], leaves: list[Value], coords: list[tuple[int, int]], error: Any
) -> dict[str, Any]:
    """Per pass: the loss (the output's value, summed for a tensor), each coordinate's value
    before the pass (and after the last) and its grad after the pass (null for None)."""

    def leaf(i: int) -> Value | None:
        return leaves[i] if i < len(leaves) else None

    loss = [number(np.sum(p.value)) for p in passes]
    values = [[at(p.leaves_before, leaf(i), j) for i, j in coords] for p in passes]
    final = {lf.seq: lf.data for lf in leaves}
    values.append([at(final, leaf(i), j) for i, j in coords])
    grads = [[at(p.grads_after, leaf(i), j) for i, j in coords] for p in passes]
    return {"loss": loss, "values": values, "grads": grads, "error": error}


def first_steps(passes: list[Pass]) -> list[int | None]:
    """Each kept pass's first step in the page's trace (its steps run across kept passes)."""
    out, k = [], 0
    for p in passes:
        out.append(k if p.kept else None)
        k += len(p.records or ())
    return out


def error_info(err: ProgramError | None) -> dict[str, Any] | None:
    if err is None:
        return None
    return {"en": err.message, "zh": err.in_language("zh"), "line": err.line}


def rerun_series(run: Run, text: str, coords: list[tuple[int, int]]) -> tuple[Rerun, dict]:
    r = rerun(run, text)
    return r, {**series(r.passes, r.leaves, coords, error_info(r.error)), "passes": len(r.passes)}


# --- zero_grad ----------------------------------------------------------------------------
def zero_grad(
    run: Run,
    passes: list[Pass],
    leaves: list[Value],
    params: list[int],
    coords: list[tuple[int, int]],
    base: dict[str, Any],
) -> dict[str, Any]:
    stmts = zeroing_statements(run.source.tree)
    if not stmts:
        return {"available": False}
    lines = [{"line": s.lineno, "text": run.source.segment(run.source.span(s))} for s in stmts]
    r, without = rerun_series(run, spliced(run.source.text, without_zeroing(stmts)), coords)
    first_grad = first_loss = None
    for k, q in enumerate(r.passes[: len(passes)]):
        p = passes[k]
        if first_loss is None and not close(np.sum(p.value), np.sum(q.value)):
            first_loss = k
        if first_grad is None and any(
            not same_grad(p.grads_after.get(leaves[i].seq), q.grads_after.get(r.leaves[i].seq))
            for i in params
            if i < len(r.leaves)
        ):
            first_grad = k
    step, leaf_step = None, None
    if first_grad is not None and passes[first_grad].kept:
        starts = first_steps(passes)
        step = starts[first_grad]
        records = passes[first_grad].records or []
        wanted = {leaves[i].seq for i in params}
        for j, (node, _, edges) in enumerate(records):
            if edges and any(node.inputs[e[0]].seq in wanted for e in edges):
                leaf_step = (step or 0) + j
                break
    return {
        "available": True,
        "lines": lines,
        "without": without,
        "first_grad_pass": first_grad,
        "first_loss_pass": first_loss,
        "first_step": step,
        "first_leaf_step": leaf_step,
    }


def same_grad(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return close(a, b)


# --- the descent path ------------------------------------------------------------------------
def path(
    run: Run,
    passes: list[Pass],
    leaves: list[Value],
    coords: list[tuple[int, int]],
    count: int,
    base: dict[str, Any],
    pair: tuple[int, int] | None = None,
) -> dict[str, Any]:
    rate = learning_rate(run.source.tree)
    out: dict[str, Any] = {"dims": count, "lr": rate.value if rate else None, "grid": None}
    if pair is not None:  # the contours over two of them, the others as before pass 1
        out["pair"] = list(pair)
        return {**out, **grid(passes, leaves, coords, list(pair), base)}
    if count > 2 or count != len(coords):
        return out
    return {**out, **grid(passes, leaves, coords, list(range(count)), base)}


def grid(
    passes: list[Pass],
    leaves: list[Value],
    coords: list[tuple[int, int]],
    axes_of: list[int],
    base: dict[str, Any],
) -> dict[str, Any]:
    """The loss of pass 1's graph over the coordinates `axes_of` (indices into `coords`), on
    a grid around their path; every other number as it was before pass 1."""
    out: dict[str, Any] = {"grid": None}
    count = len(axes_of)
    first = passes[0]
    topo = [n for n in first.topo if n.op is not None]
    work = max(1, sum(n.data.size for n in topo))
    side = GRID if count == 2 else GRID_1D
    side = min(side, int(math.sqrt(MAX_GRID_WORK / work)) if count == 2 else MAX_GRID_WORK // work)
    if side < 5:
        out["why"] = "too_large"
        return out
    axes = []
    for c in axes_of:
        seen = [v[c] for v in base["values"] if v[c] is not None]
        if not seen:
            return {**out, "why": "not_a_function"}
        lo, hi = min(seen), max(seen)
        extent = hi - lo if hi > lo else max(1.0, abs(lo))
        axes.append(np.linspace(lo - PAD * extent, hi + PAD * extent, side))
    evaluate = evaluator(first, leaves, [coords[c] for c in axes_of])
    start = [base["values"][0][c] for c in axes_of]
    exact = close(evaluate(start), np.sum(first.value))
    if not exact:  # pass 1's graph does not give its own loss again: no grid to trust
        out["why"] = "not_a_function"
        return out
    if count == 1:
        loss = [number(evaluate([x])) for x in axes[0]]
    else:
        loss = []
        for y in axes[1]:
            check_deadline()
            loss.append([number(evaluate([x, y])) for x in axes[0]])
    out["grid"] = {"x": number(axes[0]), "y": number(axes[1]) if count == 2 else None,
                   "loss": loss}  # fmt: skip
    return out


def evaluator(first: Pass, leaves: list[Value], coords: list[tuple[int, int]]) -> Any:
    """loss(point): pass 1's graph evaluated forward with the coordinates set to `point`, every
    other leaf as it was before pass 1 (the nodes themselves are not touched)."""
    topo = first.topo
    fixed: dict[int, np.ndarray] = {}
    for n in topo:
        if n.op is None:
            before = first.leaves_before.get(n.seq)
            fixed[n.seq] = np.asarray(n.data if before is None else before, dtype=np.float64)

    def loss(point: list[float]) -> float:
        data = dict(fixed)
        for (i, j), v in zip(coords, point, strict=True):
            seq = leaves[i].seq
            a = data[seq].copy() if seq in data else leaves[i].data.copy()
            a.reshape(-1)[j] = v
            data[seq] = a
        with np.errstate(all="ignore"):
            for n in topo:
                if n.op is not None:
                    data[n.seq] = np.asarray(
                        n.op.compute(*(data[x.seq] for x in n.inputs)), dtype=np.float64
                    )
        return float(np.sum(data[first.output.seq]))

    return loss


# --- learning rates -----------------------------------------------------------------------
def rates(
    run: Run, leaves: list[Value], coords: list[tuple[int, int]], paths: bool, base: dict
) -> dict[str, Any]:
    rate = learning_rate(run.source.tree)
    if rate is None:
        return {"available": False}
    runs = []
    for f in FACTORS:
        lr = rate.value * f
        if f == 1.0:
            got = {**base, "passes": len(base["loss"])}
        else:
            check_deadline()
            _, got = rerun_series(run, spliced(run.source.text, with_rate(rate, lr)), coords)
        finite = [v for v in got["loss"] if v is not None]
        diverged = (
            got["error"] is not None
            or len(finite) < len(got["loss"])
            or (bool(finite) and finite[-1] > finite[0])
        )
        entry = {"factor": f, "lr": lr, "loss": got["loss"], "error": got["error"],
                 "passes": got["passes"], "diverged": diverged}  # fmt: skip
        if paths:
            entry["values"] = got["values"]
        runs.append(entry)
    return {"available": True, "lr": rate.value, "line": rate.node.lineno, "how": rate.how,
            "runs": runs}  # fmt: skip
