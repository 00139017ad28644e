"""The ASGI app: `app.main:app`. Thin: routers, static files, error handlers."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.config import get_settings
from app.errors import install_error_handlers
from app.guard import SizeGuard
from app.routes import api, pages

ROOT = Path(__file__).resolve().parent.parent

app = FastAPI(
    title="gradtrace",
    summary="Watch reverse-mode automatic differentiation happen, one backward step at a time.",
    version="0.1.0",
)
install_error_handlers(app)
app.add_middleware(
    SizeGuard,
    max_body_bytes=get_settings().max_body_bytes,
    max_query_bytes=get_settings().max_query_bytes,
)
app.include_router(api.router)
app.include_router(pages.router)
app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")


@app.get("/healthz", include_in_schema=False)
def healthz() -> dict[str, str]:
    return {"status": "ok"}
