"""The ASGI app: `app.main:app`. Thin: routers, static files, error handlers."""

from __future__ import annotations

import sys
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from app.cache import AnswerCache
from app.compress import Compress
from app.config import get_settings
from app.errors import LastResort, install_error_handlers
from app.guard import LoadShedder, RequestDeadline, SizeGuard
from app.routes import api, docs, pages
from app.security import SecurityHeaders


class Health:
    """`/healthz`, answered here without routing, a slot or a worker thread: a probe says the
    event loop is free, so it should cost the loop as little as it can (a handful of GIL
    hand-overs while worker threads run programs, rather than the dozens a routed request
    takes)."""

    BODY = b'{"status":"ok"}'

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/healthz":
            await self.app(scope, receive, send)
            return
        headers = [(b"content-type", b"application/json"), (b"content-length", b"15")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        body = b"" if scope["method"] == "HEAD" else self.BODY
        await send({"type": "http.response.body", "body": body})


ROOT = Path(__file__).resolve().parent.parent
settings = get_settings()
sys.setswitchinterval(settings.gil_switch_seconds)

app = FastAPI(
    title="gradtrace",
    summary="Watch reverse-mode automatic differentiation happen, one backward step at a time.",
    version="0.1.0",
    docs_url=None,  # served from this origin instead, under the CSP (app/routes/docs.py)
    redoc_url=None,
)
install_error_handlers(app)
# Middleware runs outside-in in the reverse order of adding. From the outside in:
# - LastResort: a bug is a 500 with the security headers, and the connection stays open;
# - SecurityHeaders: on every answer (even a 503, 413 or cached one);
# - SizeGuard: headers, query and body over their limits are refused before any other work,
#   and the body is read whole (within body_read_seconds) before the request takes a slot;
# - AnswerCache: the same program again is answered from the worker's memory, already
#   compressed, without a slot, routing, a worker thread or the engine (app/cache.py);
# - LoadShedder: max_in_flight, and max_in_flight_per_client;
# - Compress: gzip, counted as work (it is), big bodies in a worker thread (app/compress.py);
# - RequestDeadline: the time bound per request.
app.add_middleware(RequestDeadline, seconds=settings.max_request_seconds)
# A trace is mostly repeated keys; level 6 costs a tenth of level 9 for nearly the same size.
app.add_middleware(
    Compress,
    minimum_size=settings.gzip_min_bytes,
    level=settings.gzip_level,
    thread_bytes=settings.gzip_thread_bytes,
)
app.add_middleware(
    LoadShedder,
    max_in_flight=settings.max_in_flight,
    max_per_client=settings.max_in_flight_per_client,
)
app.add_middleware(AnswerCache)
app.add_middleware(
    SizeGuard,
    max_body_bytes=settings.max_body_bytes,
    max_query_bytes=settings.max_query_bytes,
    max_header_bytes=settings.max_header_bytes,
    body_read_seconds=settings.body_read_seconds,
)
app.add_middleware(Health)  # inside SecurityHeaders: the probe's answer carries them too
app.add_middleware(SecurityHeaders)
app.add_middleware(LastResort)
app.include_router(api.router)
app.include_router(pages.router)
app.include_router(docs.router)
docs.mount_assets(app)  # before /static, which would shadow it
app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
