"""Every failure answers with the error object of spec/api.md, never echoing the input back."""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from engine.errors import ProgramError


def error_body(message: str, code: str, **extra: object) -> dict[str, object]:
    return {"error": {"message": message, "line": None, "column": None, "code": code, **extra}}


class SafeJSONResponse(JSONResponse):
    """JSON that always encodes: a lone surrogate echoed from the request (a key of `values`)
    becomes "?" instead of a UnicodeEncodeError, i.e. a 500."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None,
                          separators=(",", ":")).encode("utf-8", "replace")


def short(part: object, limit: int = 40) -> str:
    """A piece of user input fit to quote: bounded in length."""
    text = str(part)
    return text if len(text) <= limit else text[:limit] + "…"


def describe_validation(exc: RequestValidationError) -> str:
    """A short sentence per problem: where and what, without the offending input."""
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(short(p) for p in err.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "malformed request"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProgramError)
    async def program_error(_: Request, exc: ProgramError) -> JSONResponse:
        return SafeJSONResponse(exc.to_dict(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return SafeJSONResponse(
            error_body(describe_validation(exc), "malformed_request"), status_code=422
        )

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return SafeJSONResponse(
            error_body(str(exc.detail), f"http_{exc.status_code}"),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )
