"""What the notebook widget draws at each step, made in the kernel: a "frame" per step.

A frame is plain JSON: the step's SVG (engine.drawing, escaped there), its label ("Step 1 of
2"), the sentence that says what the step does (the page's #explain, static/js/explain.js, told
again here so the kernel can say it), and the grad table's row (gradtrace/tables.py's cells).
`frames(...)` gives every step's frame while they fit in `EAGER_BYTES`, so the front end steps
without asking the kernel; past it the kernel sends one frame at a time (`frame(...)`).
`fallback_html(...)` is the same frame as HTML without a script, for viewers with no widgets.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator, Mapping
from typing import Any

from engine import drawing as draw
from engine.tracing.display import step_svg_or_message
from gradtrace.sentences import sentence, word
from gradtrace.tables import cell_text

# Every step's frame goes to the front end at once while their JSON stays under this many
# bytes (a saved notebook keeps them too); a larger trace sends the step on show only.
EAGER_BYTES = 1_000_000

# The words the front end shows; the widget sends them in its language.
UI_WORDS = ("first", "back", "next", "last", "slider", "step_col", "error_at", "error_title")


def ui_words(lang: str) -> dict[str, str]:
    return {key: word(lang, key) for key in UI_WORDS}


def columns(trace: Mapping[str, Any]) -> list[dict[str, str]]:
    """The grad table's columns: nodes that get a grad (constants left out), in creation
    order, as gradtrace/tables.py and engine/tracing/table.py have them."""
    return [
        {"id": n["id"], "label": f"{n['label']}.grad"}
        for n in trace["nodes"]
        if n["kind"] != "const" and n["grad"] is not None
    ]


def _zero_like(value: Any) -> Any:
    return [_zero_like(v) for v in value] if isinstance(value, list) else 0.0


def _running(trace: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The grads after each step in turn (one dict, updated in place: read it before next)."""
    grads = {n["id"]: _zero_like(n["grad"]) for n in trace["nodes"] if n["grad"] is not None}
    for step in trace["steps"]:
        grads.update(step["grads"])
        yield grads


def _what(trace: Mapping[str, Any], k: int, lang: str) -> str:
    """The row's head, as the grad table words it: `1 · out._backward() (+)`."""
    st = trace["steps"][k]
    node = next((n for n in trace["nodes"] if n["id"] == st["node"]), {"label": st["node"]})
    if k == 0:
        key = "seed_row_ones" if trace.get("seeded_with_ones") else "seed_row"
    else:
        key = "backward_row"
    op = str(node.get("symbol") or node.get("op") or "")
    return f"{k} · " + word(lang, key, node=str(node["label"]), op=op)


def _frame(
    trace: Mapping[str, Any],
    k: int,
    grads: Mapping[str, Any],
    cols: list[dict[str, str]],
    options: Mapping[str, Any],
) -> dict[str, Any]:
    lang = options["lang"]
    changed = trace["steps"][k]["grads"] if trace.get("steps") else {}
    last = max(0, draw.step_count(trace) - 1)
    return {
        "step": k,
        "label": word(lang, "step_of", k=str(k), n=str(last)),
        "what": _what(trace, k, lang) if trace.get("steps") else "",
        "sentence": sentence(trace, k, lang),
        "cells": [[cell_text(grads.get(c["id"])), c["id"] in changed] for c in cols],
        "svg": step_svg_or_message(
            trace, k, lang=lang, legend=options["legend"], collapse=options["collapse"]
        ),
    }


def frame(trace: Mapping[str, Any], k: int, **options: Any) -> dict[str, Any]:
    """Step `k`'s frame (k already clamped). Options: lang, legend, collapse."""
    grads: Mapping[str, Any] = {}
    for i, running in enumerate(_running(trace)):
        if i == k:
            grads = running
            break
    return _frame(trace, k, grads, columns(trace), options)


def frames(
    trace: Mapping[str, Any], *, budget: int = EAGER_BYTES, **options: Any
) -> list[dict[str, Any]] | None:
    """Every step's frame, or None as soon as their JSON passes `budget` bytes (or the first
    frame times the number of steps does: the steps share one layout, so sizes differ little,
    and a long trace is not drawn to the budget only to be dropped)."""
    cols = columns(trace)
    out: list[dict[str, Any]] = []
    size = 0
    n = draw.step_count(trace)
    for k, running in enumerate(_running(trace)):
        one = _frame(trace, k, running, cols, options)
        size += len(json.dumps(one, ensure_ascii=False).encode("utf-8"))
        if size > budget or (k == 0 and size * n > budget):
            return None
        out.append(one)
    return out


def error_text(error: Mapping[str, Any], lang: str) -> str:
    """`Line 1, column 3: syntax error: invalid syntax` (the position when there is one)."""
    if error.get("line") is None:
        return str(error["message"])
    where = word(lang, "error_at", line=str(error["line"]), column=str(error.get("column") or 1))
    return f"{where}: {error['message']}"


def fallback_html(
    one: Mapping[str, Any] | None, cols: list[dict[str, str]], lang: str, error: Any = None
) -> str:
    """The frame as HTML with no script: what a viewer without widgets shows (GitHub, a static
    export, a front end with no widget manager). The SVG came from engine.drawing, escaped."""
    e = html.escape
    lang_attr = "zh-CN" if lang == "zh" else "en"
    if error or not one:
        text = error_text(error, lang) if error else word(lang, "no_steps")
        return f'<div class="gradtrace-output" lang="{lang_attr}"><p>{e(text)}</p></div>'
    heads = "".join(f'<th scope="col"><code>{e(c["label"])}</code></th>' for c in cols)
    cells = "".join(
        f"<td><b>{e(text)}</b></td>" if changed else f"<td>{e(text)}</td>"
        for text, changed in one["cells"]
    )
    return (
        f'<div class="gradtrace-output" lang="{lang_attr}">'
        f'<div style="max-width:100%;overflow-x:auto">{one["svg"]}</div>'
        f"<p>{e(one['sentence'])}</p>"
        '<div style="max-width:100%;overflow-x:auto"><table class="gradtrace-table">'
        f'<thead><tr><th scope="col">{e(word(lang, "step_col"))}</th>{heads}</tr></thead>'
        f'<tbody><tr aria-current="step"><th scope="row">{e(one["what"])}</th>{cells}</tr>'
        "</tbody></table></div></div>"
    )
