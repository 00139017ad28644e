"""Security headers on every answer; overload is shed with 503 + Retry-After."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.types import Receive, Scope, Send

from app.main import app
from app.middleware.guard import LoadShedder


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(app)


@pytest.mark.parametrize("path", ["/", "/docs", "/healthz"])
def test_pages_carry_a_strict_csp_and_cannot_be_framed(client: TestClient, path: str) -> None:
    r = client.get(path)
    csp = r.headers["content-security-policy"]
    script_src = csp.split("script-src")[1].split(";")[0]
    assert script_src.strip() == "'self'"
    assert "frame-ancestors 'self'" in csp  # never another site's frame
    assert r.headers["x-frame-options"] == "SAMEORIGIN"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"


def test_api_errors_carry_the_headers_too(client: TestClient) -> None:
    r = client.post("/api/trace", json={"source": "tanhh(x)"})
    assert r.status_code == 400
    assert r.headers["x-content-type-options"] == "nosniff"


def test_embed_may_be_framed_by_other_sites(client: TestClient) -> None:
    r = client.get("/embed?source=x*y")
    assert "frame-ancestors *" in r.headers["content-security-policy"]
    assert "x-frame-options" not in r.headers
    assert r.headers["cross-origin-resource-policy"] == "cross-origin"


def test_svg_may_be_embedded_by_other_sites_and_runs_nothing(client: TestClient) -> None:
    r = client.get("/api/svg?source=x*y")
    assert r.headers["cross-origin-resource-policy"] == "cross-origin"
    assert "x-frame-options" not in r.headers
    assert "default-src 'none'" in r.headers["content-security-policy"]


def test_overload_is_shed_with_503_and_retry_after() -> None:
    release = asyncio.Event()

    async def slow(scope: Scope, receive: Receive, send: Send) -> None:
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    shed = LoadShedder(slow, max_in_flight=1)

    async def scenario() -> tuple[int, int, str | None]:
        transport = httpx.ASGITransport(app=shed)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            first = asyncio.create_task(c.get("/api/svg"))
            await asyncio.sleep(0.05)
            second = await c.get("/api/svg")
            release.set()
            done = await first
            return done.status_code, second.status_code, second.headers.get("retry-after")

    # A thread of its own: the session's Playwright browser may hold this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        first, second, retry_after = pool.submit(asyncio.run, scenario()).result(timeout=30)
    assert (first, second, retry_after) == (200, 503, "1")


# --- /docs and /redoc run under the CSP: every script and style from this origin -------------


def same_origin_assets(html: str) -> list[str]:
    """The addresses of the page's scripts and styles; asserts that none is inline or off-site."""
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert scripts, "no script at all"
    for attrs, inline in scripts:
        assert "src=" in attrs and not inline.strip(), f"an inline script: {inline[:80]!r}"
    urls = re.findall(r'<script\b[^>]*\bsrc="([^"]+)"', html)
    urls += re.findall(r'<link\b[^>]*\bhref="([^"]+)"', html)
    for url in urls:
        assert url.startswith("/") and not url.startswith("//"), url
    return urls


@pytest.mark.parametrize(("path", "needs"), [("/docs", "swagger-ui"), ("/redoc", "redoc")])
def test_the_api_docs_load_everything_from_this_origin(
    client: TestClient, path: str, needs: str
) -> None:
    r = client.get(path)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "script-src 'self';" in r.headers["content-security-policy"]
    urls = same_origin_assets(r.text)
    assert any(needs in url for url in urls), urls
    for url in urls:
        asset = client.get(url)
        assert asset.status_code == 200, url
        kind = "javascript" if url.endswith(".js") else "css" if url.endswith(".css") else "png"
        assert kind in asset.headers["content-type"], (url, asset.headers["content-type"])
    if path == "/docs":  # its start-up script, once inline, names the schema
        init = client.get(next(u for u in urls if u.endswith("init.js"))).text
        assert "SwaggerUIBundle(" in init and "/openapi.json" in init
    assert client.get("/openapi.json").status_code == 200
