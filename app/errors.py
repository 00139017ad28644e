"""Every failure answers with the error object of spec/api.md, never echoing the input back.

The image address (`/api/svg`) answers every failure with an SVG that shows the message instead,
so a broken `<img>` in course notes says why. What nothing else caught (a bug) is answered by
`internal_error_response`, which app/middleware/last_resort.py sends: a 500 with the security
headers, on a connection that stays open.
"""

from __future__ import annotations

import html
import json
import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException

from app.middleware.security import headers_for
from app.query import parse_lang
from engine.errors import Msg, ProgramError
from engine.words.messages import translate_error

log = logging.getLogger("gradtrace")

SVG_PATHS = ("/api/svg",)  # addresses whose every answer is an image
PAGE_PATHS = ("/", "/embed", "/docs", "/redoc")  # addresses a person opens: a bug shows a page
BODY_NOT_PARSED = "There was an error parsing the body"  # FastAPI's words for an undecodable body


def error_body(message: str, code: str, **extra: object) -> dict[str, Any]:
    return {"error": {"message": message, "line": None, "column": None, "code": code, **extra}}


def keyed_body(
    key: str, code: str, lang: str = "en", *, limit: str | None = None, **params: Any
) -> dict[str, Any]:
    """The error object of the message `key` (engine/words' msg_<key>) worded in `lang`, with
    its key and params, as the engine's errors carry them (a client can word it again)."""
    msg = Msg(key, params)
    extra: dict[str, Any] = {"limit": limit} if limit is not None else {}
    return error_body(msg.in_language(lang), code, **extra, **msg.to_dict())


def finite(content: Any) -> Any:
    """`content` with every NaN or infinity replaced by null (NaN is not JSON)."""
    if isinstance(content, float):
        return content if math.isfinite(content) else None
    if isinstance(content, dict):
        return {k: finite(v) for k, v in content.items()}
    if isinstance(content, list | tuple):
        return [finite(v) for v in content]
    return content


def to_json(content: Any) -> bytes:
    """Strict JSON: no NaN or Infinity tokens ever (a browser's JSON.parse refuses them), and
    a lone surrogate echoed from the request becomes "?" instead of a UnicodeEncodeError."""
    try:
        text = _dumps(content)
    except ValueError:
        # The engine refuses non-finite numbers; if one slips through, the answer stays JSON.
        log.error("a non-finite number reached a JSON answer; sent as null")
        text = _dumps(finite(content))
    return text.encode("utf-8", "replace")


_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
# About the most numbers one piece of an answer holds (json's encoder takes about 2 µs a
# number, so some 30 ms at the most; see _dumps). Most answers are smaller and go in one piece:
# taking a mid-sized answer apart costs more than it saves (the MLP's page: 3.5 -> 14 ms).
PIECE_NUMBERS = 16_384
_CONTAINERS = (list, tuple, dict)
_HEAVY = (list, tuple, dict, str)  # what may hold more than one number's worth


def _dumps(content: Any) -> str:
    """json.dumps(content) with our options, byte for byte, made in pieces of at most about
    PIECE_NUMBERS numbers: json's C encoder holds the GIL until it is done, so a 7 MB trace
    encoded whole would stop every other thread, the event loop included (so every request,
    /healthz too), for most of a second. Between pieces the event loop gets its turn."""
    if _weight(content, PIECE_NUMBERS) <= PIECE_NUMBERS:
        return _encode(content)  # the common case: one call, as json.dumps
    out: list[str] = []
    _pieces(content, out)
    return "".join(out)


def _weight(x: Any, cap: int) -> int:
    """About how many numbers (and short strings) `x` holds, counted until past `cap`. A list
    whose first item is no container is taken to be all numbers (a tensor's row)."""
    if isinstance(x, str):
        return 1 + len(x) // 64  # a string costs json little per character
    if isinstance(x, list | tuple):
        if not x or not isinstance(x[0], _CONTAINERS):
            return 1 + len(x)
        items: Any = x
    elif isinstance(x, dict):
        items = x.values()
    else:
        return 1
    total = 1
    for v in items:
        total += _weight(v, cap - total) if isinstance(v, _HEAVY) else 1
        if total > cap:
            break
    return total


def _pieces(x: Any, out: list[str]) -> None:
    """Append the JSON of `x` to `out`: light parts whole, heavy ones taken apart, and runs
    of light items in a list encoded together (the bytes do not depend on where runs end)."""
    if isinstance(x, dict) and all(isinstance(k, str) for k in x):  # other keys: json's rules
        out.append("{")
        for i, (k, v) in enumerate(x.items()):
            out.append(f"{',' if i else ''}{_encode(k)}:")
            if _weight(v, PIECE_NUMBERS) > PIECE_NUMBERS:
                _pieces(v, out)
            else:
                out.append(_encode(v))
        out.append("}")
        return
    if not isinstance(x, list | tuple):
        out.append(_encode(x))
        return
    out.append("[")
    run: list[Any] = []
    size = 0
    first = True

    def flush() -> None:
        nonlocal run, size, first
        if run:
            out.append(("" if first else ",") + _encode(run)[1:-1])
            run, size, first = [], 0, False

    for v in x:
        w = _weight(v, PIECE_NUMBERS) if isinstance(v, _HEAVY) else 1
        if w > PIECE_NUMBERS:
            flush()
            if not first:
                out.append(",")
            _pieces(v, out)
            first = False
            continue
        if size + w > PIECE_NUMBERS:
            flush()
        run.append(v)
        size += w
    flush()
    out.append("]")


class SafeJSONResponse(JSONResponse):
    """JSON that always encodes, and never as non-standard JSON (see `to_json`)."""

    def render(self, content: Any) -> bytes:
        return to_json(content)


def message_svg(message: str, where: str | None = None) -> str:
    """A small SVG that shows an error message (escaped by engine.drawing)."""
    from engine.drawing import message_svg as draw_message

    return draw_message("gradtrace: " + message, [where] if where else [])  # it wraps the text


def error_response(
    path: str, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Response:
    """The error object as JSON, or as a picture of its message for the image address."""
    if path.startswith(SVG_PATHS):
        return Response(
            message_svg(str(body["error"]["message"])),
            status_code=status,
            media_type="image/svg+xml",
            headers=headers,
        )
    return SafeJSONResponse(body, status_code=status, headers=headers)


def short(part: object, limit: int = 40) -> str:
    """A piece of user input fit to quote: bounded in length."""
    text = str(part)
    return text if len(text) <= limit else text[:limit] + "…"


def describe_validation(exc: RequestValidationError) -> str:
    """A short sentence per problem: where and what, without the offending input."""
    parts = []
    for err in exc.errors()[:5]:
        if err.get("type") == "json_invalid":
            parts.append(f"the body is not valid JSON (at character {short(err['loc'][-1])})")
            continue
        where = ".".join(short(p) for p in err.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {short(err.get('msg', 'invalid'), 200)}")
    return "; ".join(parts) or "malformed request"  # pydantic's words, as CPython's are passed on


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProgramError)
    async def program_error(request: Request, exc: ProgramError) -> Response:
        # English unless the address asks otherwise (GET /api/trace?…&lang=zh).
        lang = parse_lang(request.query_params.get("lang"))
        body = {"error": translate_error(exc.to_dict()["error"], lang)}
        return error_response(request.url.path, exc.status, body)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return error_response(
            request.url.path, 422, error_body(describe_validation(exc), "malformed_request")
        )

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        lang = parse_lang(request.query_params.get("lang"))
        if exc.status_code == 400 and exc.detail == BODY_NOT_PARSED:
            # FastAPI's answer to a body its JSON reader gave up on (not UTF-8 text, or nested
            # too deeply for it): malformed, like any other body that is not JSON.
            return error_response(
                request.url.path, 422, keyed_body("body_unreadable", "malformed_request", lang)
            )
        return error_response(
            request.url.path,
            exc.status_code,
            error_body(short(exc.detail, 200), f"http_{exc.status_code}"),
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(RedisError)
    async def rooms_unavailable(request: Request, exc: RedisError) -> Response:
        # The rooms' Redis (GRADTRACE_REDIS_URL) is down or unreachable: not a bug, and not
        # the client's fault. Only the class's addresses use it; everything else still works.
        log.warning("rooms' Redis failed on %s: %s", request.url.path, type(exc).__name__)
        lang = parse_lang(request.query_params.get("lang"))
        body = keyed_body("rooms_unavailable", "unavailable", lang)
        return error_response(request.url.path, 503, body, headers={"Retry-After": "5"})

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> Response:
        # Reached only if LastResort is not in front (Starlette's outermost middleware calls
        # it, and then drops the connection).
        log.exception("unhandled error on %s", request.url.path)
        return internal_error_response(request.url.path)


def internal_error_response(path: str) -> Response:
    """A bug, not a bad input: the error object (or its picture, or a page saying it) without
    the traceback or the input, with the security headers of that address."""
    body = keyed_body("internal_error", "internal")
    if path in PAGE_PATHS:
        text = html.escape(str(body["error"]["message"]))
        response: Response = Response(
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            "<title>gradtrace: internal error</title></head>"
            f"<body><h1>gradtrace</h1><p>{text}</p></body></html>\n",
            status_code=500,
            media_type="text/html",
        )
    else:
        response = error_response(path, 500, body)
    svg = response.media_type == "image/svg+xml"
    response.raw_headers.extend(headers_for(path, svg))
    return response
