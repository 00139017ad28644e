"""POST /api/render: the page's re-run, the trace and its drawing in one answer (app/views.py's
view as JSON)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from app import cache
from app.config import Settings, SettingsDep
from app.errors import SafeJSONResponse as JSONResponse  # strict JSON: never a NaN token
from app.query import ACCUMULATE, ORDERS, QueryError, parse_lang
from app.schemas import JSON_ERRORS, NestedNumbers
from app.views import ViewAsk, run_view
from engine.errors import Msg

router = APIRouter()
LAYOUTS = ("lr", "tb")  # a drawing is in one direction; `auto` is the page's choice of these


class RenderRequest(BaseModel):
    """POST /api/render: what POST /api/trace takes, plus the page's own switches."""

    model_config = ConfigDict(extra="forbid", strict=True)
    source: str = Field(max_length=1_000_000)
    # As strict as POST /api/trace: a number or nested lists, never "2" or true (a 422).
    values: dict[str, NestedNumbers] | None = None
    accumulate: str = "add"
    order: str = "dfs"
    keep_values: bool = False
    collapse: bool | None = None  # None: collapse a long loop past draw.AUTO_COLLAPSE_NODES
    lang: str = "en"
    layout: str = "lr"  # the drawing's direction: lr (inputs on the left) or tb (on top)
    # Several passes: the pass to draw (an index into `passes`, clamped; None: the last), and
    # whether the answer is that drawing alone (the page stepping into another pass).
    draw_pass: int | None = Field(None, ge=0)
    svg_only: bool = False


DRAWING_KEYS = ("svg", "draw_error", "collapsible", "collapsed", "svg_pass")


@router.post("/api/render", responses=JSON_ERRORS)
def api_render(body: Annotated[RenderRequest, Body()], settings: SettingsDep) -> Response:
    """The page's re-run: {trace, contrast, svg, svg_pass, draw_error, values, dropped}, or
    {error, status} when the program cannot run (the status /api/trace would give, 400 or 413).
    With `svg_only`, only the drawing (of `draw_pass`): {svg, svg_pass, draw_error, collapsible,
    collapsed}."""
    if body.accumulate not in ACCUMULATE or body.order not in ORDERS or body.layout not in LAYOUTS:
        err = QueryError(Msg("render_options", {}), "options", 422)
        return JSONResponse(err.to_dict(), status_code=422)
    return cache.keep_if(*render_answer(body, settings))  # app/middleware/cache.py keeps it


def render_answer(body: RenderRequest, settings: Settings) -> tuple[Response, bool]:
    """POST /api/render's answer, and whether it may be kept (app/cache.py)."""
    asked = body.model_dump(exclude={"draw_pass", "svg_only"})
    view = run_view(ViewAsk(**{**asked, "lang": parse_lang(body.lang)}), settings, body.draw_pass)
    if "error" in view:
        # 200: the page asked "what does this text do?" and the answer is "it cannot run" —
        # a 4xx here would also land in the browser console on every keystroke.
        return JSONResponse(
            {"error": view["error"], "status": view["status"], "values": view.get("values")}
        ), False
    if body.svg_only:  # the trace is the page's already
        view = {k: view.get(k) for k in DRAWING_KEYS}
    return JSONResponse(view), cache.cacheable_view(view)
