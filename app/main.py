"""The ASGI app: `app.main:app`. Thin: routers, static files, error handlers."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.staticfiles import StaticFiles

from app.cache import AnswerCache
from app.config import get_settings
from app.errors import install_error_handlers
from app.guard import LoadShedder, RequestDeadline, SizeGuard
from app.routes import api, pages
from app.security import SecurityHeaders

ROOT = Path(__file__).resolve().parent.parent

app = FastAPI(
    title="gradtrace",
    summary="Watch reverse-mode automatic differentiation happen, one backward step at a time.",
    version="0.1.0",
)
install_error_handlers(app)
# Middleware runs outside-in in the reverse order of adding: headers on every answer (even a
# 503 or 413), then load shedding, then the time bound per request, then the size guard.
app.add_middleware(
    SizeGuard,
    max_body_bytes=get_settings().max_body_bytes,
    max_query_bytes=get_settings().max_query_bytes,
    max_header_bytes=get_settings().max_header_bytes,
)
app.add_middleware(RequestDeadline, seconds=get_settings().max_request_seconds)
app.add_middleware(LoadShedder, max_in_flight=get_settings().max_in_flight)
# Compress every answer worth it (a trace is mostly repeated keys; level 6 costs a tenth of
# level 9 for nearly the same size); outside that, the same program again is answered from the
# worker's memory, already compressed, without routing or a worker thread (app/cache.py).
app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)
app.add_middleware(AnswerCache)
app.add_middleware(SecurityHeaders)
app.include_router(api.router)
app.include_router(pages.router)
app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")


@app.get("/healthz", include_in_schema=False)
def healthz() -> dict[str, str]:
    return {"status": "ok"}
