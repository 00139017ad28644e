"""Every failure answers with the error object of spec/api.md, never echoing the input back."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from engine.errors import ProgramError


def error_body(message: str, code: str, **extra: object) -> dict[str, object]:
    return {"error": {"message": message, "line": None, "column": None, "code": code, **extra}}


def describe_validation(exc: RequestValidationError) -> str:
    """A short sentence per problem: where and what, without the offending input."""
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "malformed request"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProgramError)
    async def program_error(_: Request, exc: ProgramError) -> JSONResponse:
        return JSONResponse(exc.to_dict(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            error_body(describe_validation(exc), "malformed_request"), status_code=422
        )

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse(
            error_body(str(exc.detail), f"http_{exc.status_code}"),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )
