"""POST /api/trace: a program in, its graph and step-by-step backward trace out."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app import cache
from app.config import Settings, SettingsDep
from app.errors import SafeJSONResponse as JSONResponse  # strict JSON: never a NaN token
from app.query import QueryError, parse_lang, parse_query
from app.schemas import JSON_ERRORS, TRACE_QUERY, ErrorResponse, TraceRequest, TraceResponse
from app.views import trace_body, worded_lessons
from engine.program import run_program

router = APIRouter(prefix="/api", tags=["api"])

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "The program cannot run (with its position)."},
    413: {"model": ErrorResponse, "description": "The program or request is over a limit."},
    422: {"model": ErrorResponse, "description": "The request is malformed."},
    503: JSON_ERRORS[503],
}


@router.post("/trace", response_model=TraceResponse, responses=ERRORS)
def post_trace(request: TraceRequest, http: Request, settings: SettingsDep) -> JSONResponse:
    """Run the program and record every step of its backward pass, with what it printed and
    its did-you-mean warnings (worded in `?lang=`, English by default).

    A plain `def`: FastAPI runs it in a worker thread, so the event loop stays free.
    """
    program = run_program(
        request.source,
        request.values,
        accumulate=request.accumulate,
        order=request.order,
        limits=settings.limits,
    )
    lang = parse_lang(http.query_params.get("lang"))
    body = trace_body(program, lang)
    if request.lessons:  # the one call of the lessons: the same run, no second parse or build
        from engine.lessons import lesson_passes, run_lessons
        from engine.tracing.cost import AnswerBudget

        lessons = run_lessons(
            program,
            request.lessons,
            options=request.lesson_options,
            # The trace's numbers as the engine counted them before backward: no second walk.
            budget=AnswerBudget(settings.limits, program.trace.numbers),
            on_pass=request.lesson_pass,
        )
        body["lessons"] = worded_lessons(lessons, lang)
        if request.lesson_pass is not None:  # which pass each lesson looked at
            body["lesson_passes"] = lesson_passes(program, request.lessons, request.lesson_pass)
    return JSONResponse(body)


@router.get("/trace", response_model=TraceResponse, responses=ERRORS, openapi_extra=TRACE_QUERY)
def get_trace(request: Request, settings: SettingsDep) -> Response:
    """The same trace by GET, with the query parameters of /api/svg (`step` and `lang` do not
    change it): an address that names its content, so browsers, proxies and CDNs may cache it
    (a long max-age, an ETag with the app's version, 304 on If-None-Match)."""
    return cache.cached_get(request, settings, lambda: trace_answer(request, settings))


def trace_answer(request: Request, settings: Settings) -> Response:
    try:
        q = parse_query(dict(request.query_params), default_source=False)
    except QueryError as err:
        return JSONResponse(err.to_dict(), status_code=err.status)
    ran = run_program(
        q.source, q.values, accumulate=q.accumulate, order=q.order, limits=settings.limits
    )
    return JSONResponse(trace_body(ran, q.lang))
