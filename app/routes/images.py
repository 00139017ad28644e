"""GET /api/svg: the graph at a step as an SVG image, for <img src> in course notes.

A program that cannot run gets a 4xx whose body is an SVG that shows why, so a broken image
says what broke. Cached as its address names it (app/cache.py).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

import engine
from app import cache
from app.config import Settings, SettingsDep
from app.query import QueryError, parse_lang, parse_query, raw_plus_in_source
from app.routes.pages import strings
from app.schemas import SVG_QUERY, SVG_RESPONSES
from app.views import collapse_param, layout_param, max_drawn
from engine import drawing as draw
from engine.words import words

router = APIRouter()


def svg_response(svg: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """An SVG answer; its security headers, an image's own, are added on the way out
    (app/middleware/security.py)."""
    return Response(content=svg, status_code=status, media_type="image/svg+xml", headers=headers)


def error_svg(
    message: str,
    line: int | None = None,
    column: int | None = None,
    lang: str = "en",
    hint: str = "",
) -> str:
    """A picture of an error message (worded in `lang` already), with where in the program it
    is and `hint` after it (engine.drawing.message_svg wraps it to the picture's width)."""
    where = words(lang)["svg_error_at"].format(line=line, column=column) if line else None
    text = f"{message} {hint}".strip()
    return draw.message_svg("gradtrace: " + text, [where] if where else [])


@router.get("/api/svg", response_class=Response, responses=SVG_RESPONSES, openapi_extra=SVG_QUERY)
def api_svg(request: Request, settings: SettingsDep) -> Response:
    """The graph at a step as SVG, for <img src> in course notes. A program that cannot run
    gets a 4xx whose body is an SVG that shows why. Cached as its address names it (app.cache)."""
    return cache.cached_get(request, settings, lambda: svg_answer(request, settings))


def svg_answer(request: Request, settings: Settings) -> Response:
    params = dict(request.query_params)
    lang = parse_lang(params.get("lang"))
    try:
        q = parse_query(params, default_source=False)
    except QueryError as err:
        return svg_response(error_svg(err.in_language(lang), lang=lang), err.status)
    limits = settings.limits
    try:
        result = engine.run(
            q.source, q.values, accumulate=q.accumulate, order=q.order, limits=limits
        )
        trace = result.to_dict()
    except engine.ProgramError as err:
        plus = raw_plus_in_source(request.scope.get("query_string", b""))
        hint = words(q.lang)["hint_plus"] if plus else ""  # `x*y+x`: say to write %2B
        message = err.in_language(q.lang)
        return svg_response(error_svg(message, err.line, err.column, q.lang, hint), err.status)
    step = draw.clamp_step(trace, q.step_in(trace))
    legend = params.get("legend", "1") not in ("0", "false", "no")
    try:
        svg, _ = draw.render_folded(
            trace,
            step,
            draw.collapse_plan(trace),
            collapse=collapse_param(params.get("collapse")),
            lang=q.lang,
            legend=legend,
            rankdir="TB" if layout_param(params.get("layout")) == "tb" else "LR",
            max_nodes=max_drawn(settings),
            timeout=limits.max_layout_seconds,
        )
    except draw.DrawError as err:
        if err.code == "busy":
            message = err.msg.in_language(q.lang)
            return svg_response(error_svg(message, lang=q.lang), 503, {"Retry-After": "2"})
        title = strings()[q.lang]["too_large"]
        return svg_response(draw.message_svg(title, [err.msg.in_language(q.lang)]), 413)
    return svg_response(svg)
