"""The page's view of a program: run it, draw it, and the grads the other accumulation gives.

No HTTP here: the pages, the image and the re-run (app/routes/) each turn a view into their
answer. The server sends everything a program needs at once (the trace, the drawing laid out
once, the `=` row), and the page only moves an index through it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

import engine
from app import cache
from app.config import Settings
from engine import drawing as draw
from engine.drawing.collapse import full_refusal
from engine.drawing.passes import pass_at, pass_view
from engine.language.name_warnings import shown
from engine.words.messages import say, translate_error


@dataclasses.dataclass(frozen=True)
class ViewAsk:
    """What a page view is made of: the program, its values and the page's switches.

    `keep_values`: values carried over from an earlier program are dropped when the new one
    has no such free name (the page keeps the fields a student filled in while they edit).
    `collapse`: draw a long unrolled loop as its first and last iterations and a box (True),
    in full (False), or as draw.wants_collapse decides (None: collapsed past
    draw.AUTO_COLLAPSE_NODES nodes); a loop too large to draw in full is collapsed anyway.
    `layout`: the drawing's direction, ``lr`` (inputs on the left) or ``tb`` (on top)."""

    source: str
    values: dict[str, Any] | None = None
    accumulate: str = "add"
    order: str = "dfs"
    keep_values: bool = False
    collapse: bool | None = None
    lang: str = "en"
    layout: str = "lr"


def run_view(ask: ViewAsk, settings: Settings, draw_pass: int | None = None) -> dict[str, Any]:
    """`make_view`, from the worker's cache when the same program was drawn lately (the view
    is shared: read it, never change it). A program of several passes is drawn at its last
    pass; `draw_pass` (an index into `passes`, clamped; a summarised pass is drawn as the nearest
    kept one) draws that pass instead, the drawing
    kept apart from the run so that every pass shares one trace."""
    view = cache.cached_view(
        dataclasses.astuple(ask), settings.limits, lambda: make_view(ask, settings)
    )
    passes = (view.get("trace") or {}).get("passes")
    if draw_pass is None or not passes:
        return view
    k = max(0, min(int(draw_pass), len(passes) - 1))
    if not passes[k].get("kept"):  # its steps were summarised: the nearest kept pass
        k = min((i for i, p in enumerate(passes) if p.get("kept")), key=lambda i: (abs(i - k), -i))
    if k == view.get("svg_pass"):
        return view
    trace = view["trace"]
    drawing = cache.cached_view(
        (*dataclasses.astuple(ask), "pass", k),
        settings.limits,
        lambda: drawing_of(trace, passes[k]["first_step"], ask, settings),
    )
    return {**view, **drawing}


def max_drawn(settings: Settings) -> int:
    """The most nodes a drawing may have under these settings."""
    return int(getattr(settings.limits, "max_drawn_nodes", draw.MAX_DRAWN_NODES))


def collapse_param(value: str | None) -> bool | None:
    """`collapse=1` asks for a long loop collapsed, `collapse=0` for it in full; without it the
    drawing decides (draw.wants_collapse)."""
    return {"1": True, "0": False}.get(value or "")


def layout_param(value: str | None) -> str:
    """`layout=tb` draws inputs on top; anything else (`lr`, `auto`, absent) draws them on the
    left. `auto` is the page's to decide (static/js/layout.js): it asks for each direction."""
    return "tb" if (value or "").strip().lower() == "tb" else "lr"


def kept_values(ask: ViewAsk, settings: Settings) -> tuple[dict[str, Any], list[str]]:
    """The values the program will run with, and the names dropped (see ViewAsk.keep_values)."""
    values = dict(ask.values or {})
    if not (ask.keep_values and values):
        return values, []
    try:
        free = set(engine.parse(ask.source, settings.limits).free)
    except engine.ProgramError:
        return values, []
    return {k: v for k, v in values.items() if k in free}, [k for k in values if k not in free]


def trace_body(ran: engine.Run, lang: str = "en") -> dict[str, Any]:
    """The trace's JSON as every answer gives it (docs/trace-format.md), with what the program
    says back: `printed` (its print(…) and `x.grad` lines, `{"line", "text"}`) and `warnings`
    (a free name one edit from an assigned one, `{"message", "line", "column", …}`, none for
    a name given a value, at most name_warnings.MAX_WARNINGS), the messages in `lang`. Both
    are always there, empty lists when the program says nothing."""
    body = ran.trace.to_dict()
    given = [f["name"] for f in ran.free if f["given"]]
    warnings = shown(ran.warnings, given, lang)
    # The program's own lines as printed; only the line that says the output was cut is ours.
    body["printed"] = [worded(p, lang) for p in ran.printed]
    body["warnings"] = warnings
    return body


def worded(line: dict[str, Any], lang: str) -> dict[str, Any]:
    """A printed line as the answer carries it: the program's own text as it is; ours (the
    line that says the output was cut) worded in `lang` from its key."""
    if "key" not in line:
        return line
    out = {k: v for k, v in line.items() if k not in ("key", "params")}
    out["text"] = say(line["key"], lang, line.get("params") or {})
    return out


def worded_lessons(lessons: dict[str, Any], lang: str) -> dict[str, Any]:
    """The lessons' data with their own messages in `lang`: a gradcheck row's `reason` (why it
    could not be checked), worded again from its key, `why`. The engine's words are English."""
    check = lessons.get("gradcheck")
    if lang == "en" or not check:
        return lessons
    rows = [
        {**r, "reason": say(r["why"]["key"], lang, r["why"]["params"])} if r.get("why") else r
        for r in check["rows"]
    ]
    return {**lessons, "gradcheck": {**check, "rows": rows}}


def make_view(ask: ViewAsk, settings: Settings) -> dict[str, Any]:
    """Run a program for the page: {trace, contrast, svg, draw_error, collapsed, ...} or
    {error, status}."""
    limits = settings.limits
    values, dropped = kept_values(ask, settings)
    try:
        ran = engine.run_program(
            ask.source, values, accumulate=ask.accumulate, order=ask.order, limits=limits
        )
        result = ran.trace
        trace = trace_body(ran, ask.lang)
    except engine.ProgramError as err:
        # In the page's language, worded again from its key (the engine raises in English).
        error = translate_error(err.to_dict()["error"], ask.lang)
        # The free names, so the page keeps a value field for each (a shape error); a program
        # that does not parse keeps the fields of the last program that ran.
        with contextlib.suppress(engine.ProgramError):
            error["free"] = list(engine.parse(ask.source, limits).free)
        return {"error": error, "status": err.status, "values": values}
    try:
        # The other accumulation's grads (the `=` row): one more backward on the same graph.
        contrast = engine.program.contrast(result)
    except engine.ProgramError:
        contrast = None
    return {
        "trace": trace,
        "contrast": contrast,
        **drawing_of(trace, None, ask, settings),
        "dropped": dropped,
        "values": values,
    }


def drawing_of(
    trace: dict[str, Any], step: int | None, ask: ViewAsk, settings: Settings
) -> dict[str, Any]:
    """The drawing of the pass `step` is in (None: the last pass; a trace of one pass is its
    own): {svg, draw_error, collapsible, collapsed, svg_pass} (svg_pass None for one pass)."""
    limits = settings.limits
    shown, _ = pass_view(trace, step)
    svg = None
    draw_error = None
    plan = draw.collapse_plan(shown)
    folded = None
    try:
        svg, folded = draw.render_folded(
            trace,
            step,
            plan,
            collapse=ask.collapse,
            max_nodes=max_drawn(settings),
            lang=ask.lang,
            rankdir="TB" if ask.layout == "tb" else "LR",
            timeout=limits.max_layout_seconds,
        )
    except draw.DrawError as err:
        message = err.msg.in_language(ask.lang)  # worded from its key, as every message is
        draw_error = {"message": message, "code": err.code, "limit": err.limit}
    refused = full_refusal(shown, plan, max_drawn(settings))
    if refused is None and folded is not None and ask.collapse is False:
        refused = {"code": "layout_timeout", "limit": limits.max_layout_seconds}  # asked, not drawn
    if folded is not None and refused:
        folded = {**folded, "refused": refused}  # the page offers no expanding, and says why
    return {
        "svg": svg,
        "draw_error": draw_error,
        "collapsible": plan is not None,
        "collapsed": folded,
        "svg_pass": pass_at(trace, step),
    }
