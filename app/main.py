"""The ASGI app: `app.main:app`. Thin: routers, static files, error handlers."""

from __future__ import annotations

import sys
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.config import get_settings
from app.errors import install_error_handlers
from app.middleware.stack import add_middleware
from app.routes import api, docs, images, own, pages, render, rooms

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
add_middleware(app, settings)  # in order, outermost last: app/middleware/stack.py
app.include_router(api.router)
app.include_router(pages.router)
app.include_router(images.router)
app.include_router(render.router)
app.include_router(rooms.router)  # the live classroom: app/rooms/
app.include_router(own.router)  # the own-engine page and its endpoint: app/routes/own.py
app.include_router(docs.router)
docs.mount_assets(app)  # before /static, which would shadow it
app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
