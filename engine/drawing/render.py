"""Rendering: the drawing laid out by Graphviz and finished as SVG (`render_svg`), and the
layouts themselves (`to_svg`): cached by shape, bounded in time, run in two lanes, and the
verdicts of the shapes whose layout ran out of its budget remembered."""

from __future__ import annotations

import functools
import hashlib
import math
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from engine.drawing import graphviz
from engine.drawing.budget import CpuTimeExpired, wall_ceiling
from engine.drawing.collapse import collapse_plan, wants_collapse
from engine.drawing.dot import build
from engine.drawing.errors import DrawError
from engine.drawing.geometry import TextsMismatch
from engine.drawing.passes import pass_view
from engine.drawing.svg import finish_svg
from engine.limits import Deadline, Limits, current_deadline

# Layouts run in two lanes, each with its own slots and Graphviz helpers: a small picture is
# never queued behind a large layout that may take its whole budget (max_layout_seconds).
MAX_CONCURRENT_LAYOUTS = 2  # large layouts at once; more callers wait (see SLOT_WAIT_BUDGETS)
SMALL_LAYOUT_LINES = 160  # DOT statements (nodes + edges) of a small layout: about 60 nodes
MAX_SMALL_LAYOUTS = 2  # small layouts at once, in their own lane
# A caller waits for a slot at most this many layout budgets: every layout holds its slot for at
# most one budget of CPU time, so about one budget of wall time on a machine that is not
# overloaded, and a waiter behind a full lane still gets its turn; else it answers "busy". (On
# an overloaded one a layout holds its slot up to its wall ceiling, budget.wall_ceiling.)
SLOT_WAIT_BUDGETS = 2.0
REMEMBERED_TIMEOUTS = 1_024  # shapes whose layout ran out of its budget (16-byte hashes)


_large_slots = threading.BoundedSemaphore(MAX_CONCURRENT_LAYOUTS)
_small_slots = threading.BoundedSemaphore(MAX_SMALL_LAYOUTS)
# The verdicts: the hash of a DOT text whose layout ran out of its budget -> that budget. Keyed
# like to_svg's cache (the DOT with placeholders for texts), so it is the graph's shape. Only a
# budget of CPU time run out is kept: that is the layout's own cost, the same at any load.
_timed_out: OrderedDict[bytes, float] = OrderedDict()
_timed_out_lock = threading.Lock()


@functools.cache
def default_layout_seconds() -> float:
    """The layout budget of a caller that names none: max_layout_seconds, with the
    environment's override (GRADTRACE_MAX_LAYOUT_SECONDS) read once."""
    return Limits().with_env().max_layout_seconds


def _shape_key(dot_text: str) -> bytes:
    """The verdicts' key: a 16-byte hash of the DOT laid out."""
    return hashlib.blake2b(dot_text.encode("utf-8"), digest_size=16).digest()


def _ran_out(key: bytes, budget: float) -> bool:
    """Did a layout of this shape already run out of a budget at least as large?"""
    with _timed_out_lock:
        failed = _timed_out.get(key)
        if failed is None or budget > failed:
            return False
        _timed_out.move_to_end(key)
        return True


def _remember_ran_out(key: bytes, budget: float) -> None:
    """Remember that this shape ran out of `budget` (the REMEMBERED_TIMEOUTS latest)."""
    with _timed_out_lock:
        _timed_out[key] = max(budget, _timed_out.get(key, 0.0))
        _timed_out.move_to_end(key)
        while len(_timed_out) > REMEMBERED_TIMEOUTS:
            _timed_out.popitem(last=False)


def forget_layout_timeouts() -> None:
    """Forget every remembered verdict (tests, and a budget raised at run time)."""
    with _timed_out_lock:
        _timed_out.clear()


def is_small_layout(dot_text: str) -> bool:
    """A layout for the small lane. Our DOT has one statement a line; other DOT (one line of
    `a -> b; ...`) is counted by its edges."""
    return max(dot_text.count("\n"), dot_text.count("->")) <= SMALL_LAYOUT_LINES


@functools.lru_cache(maxsize=64)
def to_svg(dot_text: str, timeout: float | None = None) -> str:
    """Lay out DOT text with Graphviz `dot -Tsvg`, bounded in time. The only Graphviz call.

    `timeout` is the layout's budget of CPU time in seconds (None: max_layout_seconds, see
    default_layout_seconds). A layout past its budget is stopped (its helper process killed) and
    its shape remembered, so the same DOT is refused at once from then on ("layout_timeout").
    Its wall-clock time is bounded too, by what is left of the request's deadline
    (max_request_seconds: "timeout") and by budget.wall_ceiling(budget) (a machine too busy to
    give it its CPU time: "busy"); neither is remembered, as neither says anything of the graph.
    Small layouts have their own slots (is_small_layout); waiting for a slot is bounded by
    SLOT_WAIT_BUDGETS budgets and the deadline, then answers "busy"."""
    budget = default_layout_seconds() if timeout is None else timeout
    deadline = current_deadline()
    key = _shape_key(dot_text)
    if _ran_out(key, budget):
        raise _out_of_budget(budget)
    if _left(deadline) <= 0:
        raise _out_of_request(deadline)
    slots = _small_slots if is_small_layout(dot_text) else _large_slots
    if not slots.acquire(timeout=max(min(SLOT_WAIT_BUDGETS * budget, _left(deadline)), 0.0)):
        raise DrawError("draw_busy", "busy")
    try:
        if _ran_out(key, budget):  # found out by another caller while this one waited
            raise _out_of_budget(budget)
        proc = _lay_out(dot_text, key, budget, deadline)
    finally:
        slots.release()
    if proc.returncode != 0 or not proc.stdout:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        if not err:
            raise DrawError("graphviz_no_output", "graphviz")
        raise DrawError("graphviz_failed", "graphviz", why=err[-1])
    return proc.stdout.decode("utf-8")


def _lay_out(
    dot_text: str, key: bytes, budget: float, deadline: Deadline | None
) -> subprocess.CompletedProcess[bytes]:
    """One layout, in its slot: Graphviz's answer, or the DrawError that says which bound it
    ran into (the verdict remembered when that was its own budget)."""
    ceiling = wall_ceiling(budget)
    wall = min(ceiling, _left(deadline))
    if wall <= 0:
        raise _out_of_request(deadline)
    try:
        # `dot -Tsvg`, in a warm helper process: a new `dot` costs ~12 ms of start-up alone.
        return graphviz.run_dot(dot_text.encode("utf-8"), timeout=budget, wall=wall)
    except CpuTimeExpired as exc:  # its own cost: the graph's, whatever the load
        _remember_ran_out(key, budget)
        raise _out_of_budget(budget) from exc
    except subprocess.TimeoutExpired as exc:  # held up: says nothing of the shape
        if wall < ceiling:
            raise _out_of_request(deadline) from exc
        raise _overloaded(ceiling, budget) from exc
    except OSError as exc:  # Graphviz missing
        raise DrawError("graphviz_missing", "graphviz") from exc


def _left(deadline: Deadline | None) -> float:
    return math.inf if deadline is None else deadline.left()


def _out_of_budget(budget: float) -> DrawError:
    return DrawError("limit_max_layout_seconds", "layout_timeout", "max_layout_seconds", max=budget)


def _out_of_request(deadline: Deadline | None) -> DrawError:
    assert deadline is not None
    return DrawError(
        "limit_" + deadline.setting, "timeout", deadline.setting, max=deadline.seconds
    )  # the setting's one message, as the engine's own deadline says it


def _overloaded(ceiling: float, budget: float) -> DrawError:
    return DrawError("layout_busy", "busy", "max_layout_seconds", ceiling=ceiling, budget=budget)


def render_svg(
    trace: Mapping[str, Any],
    step: int | None = None,
    *,
    timeout: float | None = None,
    **options: Any,
) -> str:
    """The drawing as SVG text. Raises DrawError when it cannot be drawn. `timeout` is the
    layout's budget (max_layout_seconds; None: default_layout_seconds()); `options` are
    dot.build's (rankdir, lang, legend, max_nodes, collapse: a long unrolled loop as its
    first and last iterations with one box between them). A trace of several passes is drawn
    at the pass `step` is in (engine/drawing/passes.py)."""
    trace, step = pass_view(trace, step)
    drawing = build(trace, step, **options)
    named = {"step": step, "lang": options.get("lang", "en")}  # the SVG's accessible name
    try:
        return finish_svg(to_svg(drawing.geometry or drawing.dot, timeout), drawing, trace, **named)
    except TextsMismatch:  # never seen; a drawing with the real texts is always right
        drawing.texts = {}
        return finish_svg(to_svg(drawing.dot, timeout), drawing, trace, **named)


def render_folded(
    trace: Mapping[str, Any],
    step: int | None,
    plan: dict[str, Any] | None,
    *,
    collapse: bool | None = None,
    **options: Any,
) -> tuple[str, dict[str, Any] | None]:
    """`render_svg` with the loop of `plan` (collapse_plan's) collapsed as `wants_collapse`
    decides, or anyway when the graph is too large to draw in full (too many nodes, or a layout
    past its budget). (SVG, the plan when the loop was drawn collapsed, else None). Raises
    DrawError as render_svg."""
    if trace.get("passes"):
        trace, step = pass_view(trace, step)
        plan = collapse_plan(trace)
    folded = wants_collapse(trace, plan, collapse)
    try:
        return render_svg(trace, step, collapse=folded, **options), plan if folded else None
    except DrawError as err:
        if err.code not in ("too_large", "layout_timeout") or folded or plan is None:
            raise
        return render_svg(trace, step, collapse=True, **options), plan
