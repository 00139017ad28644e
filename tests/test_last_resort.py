"""The last-resort handler (issue 11, item 7): an exception that nothing caught (a bug) is a
500 with the error object, the security headers of its address, and the kind of answer the
address gives: a page for `/` and `/embed`, a picture for `/api/svg`, JSON elsewhere. It never
echoes the input, and the keep-alive connection stays open."""

from __future__ import annotations

import http.client
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

import app.routes.api as api
from app.main import app
from app.routes import images, pages, render
from tests.uvicorn_proc import Server, uvicorn_server


class Bug(RuntimeError):
    pass


def broken(*args: Any, **kw: Any) -> Any:
    raise Bug("a bug while working on SECRET_INPUT <script>")


@pytest.fixture()
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setattr(pages, "_page", broken)
    monkeypatch.setattr(images, "svg_answer", broken)
    monkeypatch.setattr(api, "run_program", broken)
    # Raise into the test as Starlette's own last resort would: this checks that none is needed.
    with TestClient(app, raise_server_exceptions=True) as c:
        yield c


def secure(r: Any, frame: str) -> str:
    csp = r.headers["content-security-policy"]
    assert f"frame-ancestors {frame}" in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert "close" not in r.headers.get("connection", "")
    assert "SECRET_INPUT" not in r.text and "Traceback" not in r.text
    return str(csp)


@pytest.mark.parametrize(("path", "frame"), [("/", "'self'"), ("/embed", "*")])
def test_a_bug_on_a_page_is_a_500_page(client: TestClient, path: str, frame: str) -> None:
    r = client.get(path, params={"source": "x*y + SECRET_INPUT"})
    assert r.status_code == 500
    assert r.headers["content-type"].startswith("text/html")
    assert "an internal error" in r.text and "<script" not in r.text
    csp = secure(r, frame)
    assert "script-src 'self'" in csp


def test_a_bug_in_the_image_is_a_500_picture(client: TestClient) -> None:
    r = client.get("/api/svg", params={"source": "x*y + SECRET_INPUT # last resort"})
    assert r.status_code == 500
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert "an internal error" in " ".join(ET.fromstring(r.content).itertext())
    csp = secure(r, "*")
    assert csp.startswith("default-src 'none'")  # an SVG opened alone runs nothing
    assert r.headers["cross-origin-resource-policy"] == "cross-origin"


@pytest.mark.parametrize(
    ("method", "path"), [("POST", "/api/trace"), ("GET", "/api/trace"), ("POST", "/api/render")]
)
def test_a_bug_in_the_api_is_a_500_error_object(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, method: str, path: str
) -> None:
    monkeypatch.setattr(render, "run_view", broken)  # what /api/render runs
    source = f"x*y + SECRET_INPUT # last resort {method}"
    if method == "POST":
        r = client.post(path, json={"source": source})
    else:
        r = client.get(path, params={"source": source})
    assert r.status_code == 500
    assert r.headers["content-type"].startswith("application/json")
    error = json.loads(r.content)["error"]
    assert error["code"] == "internal" and {"message", "line", "column"} <= set(error)
    secure(r, "'self'")


# --- on a real server: the connection stays open ------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with uvicorn_server({}) as s:  # tests.server_hooks: /test/raise and ?raise=1
        yield s


def test_after_a_bug_the_keep_alive_connection_carries_the_next_request(server: Server) -> None:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    kinds = [
        ("/test/raise", "application/json"),
        ("/?source=x&raise=1", "text/html"),
        ("/embed?source=x&raise=1", "text/html"),
        ("/api/svg?source=x%20%23%20keep-alive&raise=1", "image/svg+xml"),
    ]
    local = None
    for path, kind in kinds:
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read()
        assert r.status == 500, path
        assert (r.getheader("content-type") or "").startswith(kind), path
        assert r.getheader("content-security-policy"), path
        assert r.getheader("x-content-type-options") == "nosniff", path
        assert r.getheader("connection") is None and not r.will_close, path
        assert b"SECRET_INPUT" not in body
        assert conn.sock is not None
        port = conn.sock.getsockname()[1]
        assert local in (None, port), "a new connection was opened"
        local = port
    conn.request("GET", "/healthz")  # the same socket, after four bugs
    r = conn.getresponse()
    assert r.status == 200 and json.loads(r.read()) == {"status": "ok"}
    assert conn.sock is not None and conn.sock.getsockname()[1] == local
    conn.close()
