"""The whole interactive stepper in one HTML file that opens from disk with no network.

It is the app's page: templates/standalone.html rendered with Jinja2 (imported here only, when a
page is asked for), with the page's CSS, script (its modules bundled into one classic script by
gradtrace/assets.py), words (both languages), the trace and its drawing inline. Editing is off
(there is no server to re-run a program); stepping, the table, the explanations and the
language switch all work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine import drawing as draw
from engine.drawing.passes import pass_at
from gradtrace.assets import ASSETS, ENTRY, page_script, ui_strings
from gradtrace.errors import ExportError
from gradtrace.files import Program, drawing
from gradtrace.script_json import json_for_script


def asset_path(*parts: str) -> Path:
    """The page's file `parts` (e.g. "static", "app.css"); ExportError when it is not there."""
    path = ASSETS.joinpath(*parts)
    if not path.is_file():
        raise ExportError(
            f"the standalone page needs {Path(*parts)} from gradtrace's source tree; run from a "
            "checkout (scripts/setup installs one), or set GRADTRACE_ASSETS to a folder that "
            "holds static/ and templates/"
        )
    return path


@lru_cache(maxsize=1)
def _environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    asset_path("templates", "standalone.html")
    return Environment(
        loader=FileSystemLoader(str(ASSETS / "templates")),
        autoescape=select_autoescape(["html"]),
        keep_trailing_newline=True,
    )


def _inline(text: str, tag: str) -> str:
    """Static text to put inside <script> or <style>: no early end tag, no comment opener."""
    return re.sub(rf"</(?={tag})", r"<\\/", text, flags=re.I).replace("<!--", "<\\!--")


def standalone_html(
    trace: Mapping[str, Any],
    *,
    program: Program | None = None,
    contrast: Mapping[str, Any] | None = None,
    step: int | None = None,
    lang: str = "en",
    collapse: bool = False,
    compact: bool = False,
    frame: bool = False,
    layout: str | None = None,
    title: str | None = None,
) -> str:
    """The interactive stepper in one HTML file: nothing is fetched, so it opens from disk or in
    a notebook's iframe. `compact` is the notebook form: no header, the height follows the
    drawing; with `frame`, the form for an iframe of fixed height (a docs page's), which the
    stepper fills. `layout` ("LR" or "TB") draws that direction only; None carries both, and
    the page shows the one that draws larger in its box (static/js/layout.js)."""
    from markupsafe import Markup

    lang = "zh" if lang == "zh" else "en"
    strings = ui_strings()
    t = strings.get(lang) or strings.get("en") or {}
    n_steps = max(0, draw.step_count(trace) - 1)
    k = draw.clamp_step(trace, step)
    svg, plan, drawings, draw_error = _drawings(trace, lang, collapse, layout)
    fit = ("frame" if frame else "content") if compact else None
    state = _page_state(trace, program, contrast, k, lang, collapse, fit, layout)
    state.update(draw_error=draw_error, collapsed=plan, strings=strings, drawings=drawings)
    if svg is not None and len(trace.get("passes") or ()) > 1:
        state.update(_pass_drawings(trace, lang, collapse, layout))
    query = state["query"]
    values = program.values if program else {}
    values_text = ", ".join(f"{name} = {_value_text(v)}" for name, v in values.items())
    context = {
        "t": t,
        "lang": lang,
        "compact": compact,
        "frame": compact and frame,
        "title": title or (t.get("title", "gradtrace")),
        "css": Markup(_inline(asset_path("static", "app.css").read_text("utf-8"), "style")),
        "js": Markup(_inline(_script(), "script")),
        "state_json": Markup(json_for_script(state)),
        "svg": svg,  # from engine.drawing: escaped there, safe to inline
        "draw_error": draw_error,
        "source": query["source"],
        "values_text": values_text,
        "accumulate": query["accumulate"],
        "order": query["order"],
        "step": k,
        "n_steps": n_steps,
        "step_label": t.get("step_of", "Step {k} of {n}").format(k=k, n=n_steps),
    }
    page: str = _environment().get_template("standalone.html").render(**context)
    return page


def _drawings(
    trace: Mapping[str, Any], lang: str, collapse: bool, layout: str | None
) -> tuple[str | None, dict[str, Any] | None, dict[str, str], dict[str, str] | None]:
    """(the drawing inlined, the collapsed loop's plan, the other direction's drawing by its
    name, the error that stopped them): `layout` draws that direction alone; None draws left to
    right inline and top to bottom for the page to compare (static/js/layout.js)."""
    first = layout if layout in ("LR", "TB") else "LR"
    try:
        svg, plan = drawing(trace, None, lang=lang, legend=False, collapse=collapse, rankdir=first)
        if layout in ("LR", "TB"):
            return svg, plan, {}, None
        tb, _ = drawing(trace, None, lang=lang, legend=False, collapse=collapse, rankdir="TB")
        return svg, plan, {"tb": tb}, None
    except ExportError as err:
        return None, None, {}, {"message": str(err), "code": "too_large"}


# A file of several passes carries the drawing of each kept pass (the page swaps them as the
# step crosses a pass, static/js/passes.js), as many as these allow; past them, the passes not
# carried are shown on the last pass's drawing, greyed.
MAX_PASS_DRAWINGS = 20
MAX_PASS_DRAWING_BYTES = 2_000_000


def _pass_drawings(
    trace: Mapping[str, Any], lang: str, collapse: bool, layout: str | None
) -> dict[str, Any]:
    """{svg_pass: the pass drawn inline (the last), pass_drawings: {k: SVG}} for the other kept
    passes, the first ones first, within MAX_PASS_DRAWINGS and MAX_PASS_DRAWING_BYTES."""
    passes = trace["passes"]
    last = pass_at(trace, None)
    rankdir = layout if layout in ("LR", "TB") else "LR"
    out: dict[str, str] = {}
    size = 0
    for k, p in enumerate(passes):
        if k == last or not p.get("kept") or len(out) >= MAX_PASS_DRAWINGS:
            continue
        try:
            svg, _ = drawing(
                trace, p["first_step"], lang=lang, legend=False, collapse=collapse, rankdir=rankdir
            )
        except ExportError:
            break
        size += len(svg)
        if size > MAX_PASS_DRAWING_BYTES:
            break
        out[str(k)] = svg
    return {"svg_pass": last, "pass_drawings": out}


def _script() -> str:
    """The page's modules as one classic script (a page opened from disk cannot import)."""
    asset_path("static", "js", ENTRY)
    return page_script()


def _page_state(
    trace: Mapping[str, Any],
    program: Program | None,
    contrast: Mapping[str, Any] | None,
    step: int,
    lang: str,
    collapse: bool,
    fit: str | None,
    layout: str | None,
) -> dict[str, Any]:
    """The page's state as the app's page gets it (the page's script reads it), standalone: no
    server, no examples. The drawing's part (draw_error, collapsed, strings) is filled in by
    the caller; the keys stay in this order, which is the order of the JSON in the file."""
    options = trace.get("options") or {}
    return {
        "version": 1,
        "embed": False,
        "standalone": True,
        "fit": fit,
        "query": {
            "source": program.source if program else "",
            "values": dict(program.values) if program else {},
            "accumulate": options.get("accumulate", "add"),
            "order": options.get("order", "dfs"),
            "step": step,
            "fwd": None,
            "lang": lang,
            "present": False,
            "layout": layout.lower() if layout in ("LR", "TB") else None,
            "collapse": bool(collapse),
        },
        "trace": trace,
        "contrast": contrast,
        "error": None,
        "draw_error": None,
        "collapsible": draw.collapse_plan(trace) is not None,
        "collapsed": None,
        "examples": [],
        "strings": None,
    }


def _value_text(v: Any) -> str:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))
    return json.dumps(v)
