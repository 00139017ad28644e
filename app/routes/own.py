"""The own-engine page (GET /own) and its endpoint (POST /api/own).

The student's code runs in their browser (static/js/own/: Pyodide in a Web Worker, with the
recorder). The server never sees it run: POST /api/own takes the recording the browser made,
validates it (engine/own/schema.py), and answers with the trace, its drawing, the words of
every step, the bugs found and gradtrace's own run of the same graph (engine/own/report.py).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from app.config import SettingsDep
from app.errors import SafeJSONResponse as JSONResponse  # strict JSON: never a NaN token
from app.errors import to_json
from app.query import parse_lang
from app.routes.pages import templates
from app.schemas import JSON_ERRORS
from engine import drawing as draw
from engine.own import OwnError, OwnLimits, own_limits, report
from engine.words.messages import translate
from gradtrace.assets import ui_strings
from gradtrace.script_json import script_safe

ROOT = Path(__file__).resolve().parents[2]
OWN = ROOT / "static" / "js" / "own"
PYODIDE = ROOT / "static" / "pyodide"
# The examples the page starts from (static/js/own/examples/<id>.py), in the menu's order.
EXAMPLES = ("micrograd", "recursive", "assign", "exp", "upstream", "twice", "minitorch")
LAYOUTS = ("lr", "tb")

router = APIRouter()
OwnLimitsDep = Annotated[OwnLimits, Depends(own_limits)]


@functools.lru_cache(maxsize=1)
def examples() -> list[dict[str, str]]:
    """The examples, each with its words' key and its source."""

    def source(name: str) -> str:
        return (OWN / "examples" / f"{name}.py").read_text("utf-8")

    return [{"id": name, "title": "own_ex_" + name, "source": source(name)} for name in EXAMPLES]


def pyodide_version() -> str | None:
    """The Pyodide scripts/pyodide installed in static/pyodide, or None when it is missing."""
    try:
        return (PYODIDE / ".version").read_text("utf-8").strip() or None
    except OSError:
        return None


@router.get("/own", response_class=HTMLResponse, include_in_schema=False)
def own_page(request: Request, limits: OwnLimitsDep) -> Response:
    """The page: an editor with the examples, and the stepper the main page has. Code given in
    the address (`?source=`) is shown, never run: the student presses Run."""
    params = request.query_params
    lang = parse_lang(params.get("lang"))
    by_id = {ex["id"]: ex for ex in examples()}
    asked = params.get("example") or ""
    example = asked if asked in by_id else "micrograd"
    linked = params.get("source")
    source = linked[: limits.max_own_source_chars] if linked else by_id[example]["source"]
    state: dict[str, Any] = {
        "query": {"lang": lang, "source": source},
        "strings": ui_strings(),
        "own": {
            "examples": examples(),
            "example": None if linked else example,
            "from_link": bool(linked),
            "limits": limits.for_page(),
            "pyodide": {"version": pyodide_version(), "url": "/static/pyodide/"},
        },
    }
    t = ui_strings()[lang]
    context = {
        "t": t,
        "lang": lang,
        "source": source,
        "example": state["own"]["example"],
        "examples": examples(),
        "from_link": bool(linked),
        "state_json": script_safe(to_json(state).decode("utf-8"), line_separators=False),
        "step": 0,
        "n_steps": 0,
        "step_label": "",
        "svg": None,
        "draw_error": None,
    }
    return templates.TemplateResponse(request=request, name="own.html", context=context)


class OwnRequest(BaseModel):
    """POST /api/own: a recording made in the browser (docs/own.md) and how to draw it."""

    model_config = ConfigDict(extra="forbid", strict=True)
    recording: dict[str, Any] = Field(description="What static/js/own/recorder.py recorded.")
    lang: str = "en"
    layout: str = "lr"


@router.post("/api/own", responses=JSON_ERRORS, tags=["api"])
def post_own(
    body: Annotated[OwnRequest, Body()], settings: SettingsDep, limits: OwnLimitsDep
) -> Response:
    """Validate a recording of a student's own backward and answer with its trace, drawing,
    words, findings, end-to-end check and gradtrace's run of the same graph. It runs no code:
    a recording is data. 422 for a malformed one, 413 past a limit (named)."""
    lang = parse_lang(body.lang)
    if body.layout not in LAYOUTS:
        err = OwnError("bad_kind", "layout")
        return JSONResponse(err.to_dict(lang), status_code=err.status)
    try:
        answer = report(body.recording, limits, lang)
    except OwnError as err:
        return JSONResponse(err.to_dict(lang), status_code=err.status)
    trace = answer["trace"]
    answer["svg"], answer["draw_error"] = None, None
    try:
        answer["svg"], _ = draw.render_folded(
            trace,
            None,
            None,
            max_nodes=int(settings.limits.max_drawn_nodes),
            lang=lang,
            rankdir="TB" if body.layout == "tb" else "LR",
            timeout=settings.limits.max_layout_seconds,
        )
    except draw.DrawError as err:
        message = translate(err.message, lang)
        answer["draw_error"] = {"message": message, "code": err.code, "limit": err.limit}
    return JSONResponse(answer)
