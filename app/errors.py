"""Every failure answers with the error object of spec/api.md, never echoing the input back.

The image address (`/api/svg`) answers every failure with an SVG that shows the message instead,
so a broken `<img>` in course notes says why.
"""

from __future__ import annotations

import json
import logging
import math
import textwrap
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from engine.errors import ProgramError

log = logging.getLogger("gradtrace")

SVG_PATHS = ("/api/svg",)  # addresses whose every answer is an image
BODY_NOT_PARSED = "There was an error parsing the body"  # FastAPI's words for an undecodable body


def error_body(message: str, code: str, **extra: object) -> dict[str, Any]:
    return {"error": {"message": message, "line": None, "column": None, "code": code, **extra}}


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
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        # The engine refuses non-finite numbers; if one slips through, the answer stays JSON.
        log.error("a non-finite number reached a JSON answer; sent as null")
        text = json.dumps(
            finite(content), ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
    return text.encode("utf-8", "replace")


class SafeJSONResponse(JSONResponse):
    """JSON that always encodes, and never as non-standard JSON (see `to_json`)."""

    def render(self, content: Any) -> bytes:
        return to_json(content)


def message_svg(message: str, where: str | None = None) -> str:
    """A small SVG that shows an error message (escaped by engine.draw)."""
    from engine.draw import message_svg as draw_message

    lines = textwrap.wrap(message, 80, break_long_words=True)[:8] or [""]
    return draw_message("gradtrace: " + lines[0], ([where] if where else []) + lines[1:])


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
    return "; ".join(parts) or "malformed request"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProgramError)
    async def program_error(request: Request, exc: ProgramError) -> Response:
        return error_response(request.url.path, exc.status, exc.to_dict())

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return error_response(
            request.url.path, 422, error_body(describe_validation(exc), "malformed_request")
        )

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 400 and exc.detail == BODY_NOT_PARSED:
            # FastAPI's answer to a body its JSON reader gave up on (not UTF-8 text, or nested
            # too deeply for it): malformed, like any other body that is not JSON.
            return error_response(
                request.url.path,
                422,
                error_body(
                    "the body cannot be read as JSON (it is not UTF-8 text, or it is nested too "
                    "deeply)",
                    "malformed_request",
                ),
            )
        return error_response(
            request.url.path,
            exc.status_code,
            error_body(short(exc.detail, 200), f"http_{exc.status_code}"),
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> Response:
        # A bug, not a bad input: the error object without the traceback or the input.
        log.exception("unhandled error on %s", request.url.path)
        return error_response(
            request.url.path, 500, error_body("an internal error; it has been logged", "internal")
        )
