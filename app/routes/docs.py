"""/docs (Swagger UI) and /redoc, served whole from this origin so that they run under the
page's CSP (`script-src 'self'`): FastAPI's own pages load their scripts from a CDN, which the
CSP blocks, and Swagger UI's page starts itself with an inline script, which it blocks too.
Their CSP is the page's, widened only as app/middleware/security.py says (`WIDER`).

The assets are the ones the `fastapi-offline` package ships (Swagger UI's bundle and CSS,
ReDoc's standalone bundle); the inline start-up script of FastAPI's page is served as a file.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = Path(fastapi_offline.__file__).resolve().parent / "static"
# Under /static: never shed nor timed (app/middleware/guard.py), as the page's own files.
ASSET_URL = "/static/docs"
INIT_URL = "/docs/swagger-init.js"

router = APIRouter(include_in_schema=False)
INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def mount_assets(app: FastAPI) -> None:
    """Serve the assets; before any mount of `/static` itself, which would shadow them."""
    app.mount(ASSET_URL, StaticFiles(directory=ASSETS), name="docs-assets")


@lru_cache
def swagger_parts(openapi_url: str, title: str) -> tuple[str, str]:
    """FastAPI's Swagger UI page with local assets, split into its HTML (which loads the
    start-up script by address) and that script."""
    response = get_swagger_ui_html(
        openapi_url=openapi_url,
        title=title,
        swagger_js_url=f"{ASSET_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSET_URL}/swagger-ui.css",
        swagger_favicon_url=f"{ASSET_URL}/favicon.png",
    )
    page = bytes(response.body).decode()
    scripts = INLINE_SCRIPT.findall(page)
    assert len(scripts) == 1, "FastAPI's Swagger UI page changed: one inline script expected"
    html = INLINE_SCRIPT.sub(
        f'<noscript>The schema itself: <a href="{openapi_url}">{openapi_url}</a></noscript>'
        f'<script src="{INIT_URL}"></script>',
        page,
    )
    return html, scripts[0]


def _app_info(request: Request) -> tuple[str, str]:
    app: FastAPI = request.app
    return app.openapi_url or "/openapi.json", app.title


@router.get("/docs")
def swagger_ui(request: Request) -> HTMLResponse:
    openapi_url, title = _app_info(request)
    html, _ = swagger_parts(openapi_url, f"{title} - Swagger UI")
    return HTMLResponse(html)


@router.get(INIT_URL)
def swagger_init(request: Request) -> Response:
    openapi_url, title = _app_info(request)
    _, script = swagger_parts(openapi_url, f"{title} - Swagger UI")
    return Response(script, media_type="text/javascript")


@router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    openapi_url, title = _app_info(request)
    # Its CSP lets ReDoc's search worker start (app/middleware/security.py, WIDER).
    return get_redoc_html(
        openapi_url=openapi_url,
        title=f"{title} - ReDoc",
        redoc_js_url=f"{ASSET_URL}/redoc.standalone.js",
        redoc_favicon_url=f"{ASSET_URL}/favicon.png",
        with_google_fonts=False,
    )
