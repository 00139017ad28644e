"""POST /api/trace: a program in, its graph and step-by-step backward trace out."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from app.config import Settings, get_settings
from app.schemas import ErrorResponse, TraceRequest, TraceResponse
from engine import run

router = APIRouter(prefix="/api", tags=["api"])

SettingsDep = Annotated[Settings, Depends(get_settings)]

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "The program cannot run (with its position)."},
    413: {"model": ErrorResponse, "description": "The program or request is over a limit."},
    422: {"model": ErrorResponse, "description": "The request is malformed."},
}


@router.post("/trace", response_model=TraceResponse, responses=ERRORS)
def post_trace(request: TraceRequest, settings: SettingsDep) -> JSONResponse:
    """Run the program and record every step of its backward pass.

    A plain `def`: FastAPI runs it in a worker thread, so the event loop stays free.
    """
    result = run(
        request.source,
        request.values,
        accumulate=request.accumulate,
        order=request.order,
        limits=settings.limits,
    )
    return JSONResponse(result.to_dict())
