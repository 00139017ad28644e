"""Hostile and broken HTTP (issue 5): wrong content types, malformed and oversized bodies, huge
and compressed permalinks, broken base64, lone surrogates and control characters in query
parameters, repeated parameters, odd methods — and the time bound per request, NaN that never
reaches JSON, and an internal error that echoes nothing.

Every case asserts the exact status and error code, that the answer came within BOUND, that an
error answer is small (the input is never echoed back in full) and that JSON is strict JSON.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import time
import types
import xml.etree.ElementTree as ET
import zlib
from base64 import urlsafe_b64encode
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import numpy as np
import pytest
from fastapi.testclient import TestClient
from starlette.concurrency import run_in_threadpool
from starlette.types import Message, Receive, Scope, Send

import engine
from app.config import get_settings
from app.errors import to_json
from app.main import app
from app.middleware.guard import LoadShedder, RequestDeadline, SizeGuard
from app.query import MAX_INFLATED_BYTES, deflate_source
from engine.limits import deadline

BOUND = 2.0  # seconds per request, generous
SMALL = 4096  # bytes: an error answer never echoes a large input
SVG = "{http://www.w3.org/2000/svg}"
LIMITS = get_settings().limits


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def strict(content: bytes) -> Any:
    def refuse(token: str) -> None:
        raise AssertionError(f"{token} in JSON")

    return json.loads(content, parse_constant=refuse)


def timed(client: TestClient, method: str, url: str, **kw: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    r = client.request(method, url, **kw)
    return r, time.perf_counter() - start


def json_error(r: Any, elapsed: float, status: int, code: str) -> dict[str, Any]:
    assert elapsed < BOUND, f"{elapsed:.2f}s"
    assert r.status_code == status, r.text[:300]
    assert r.headers["content-type"].startswith("application/json")
    assert len(r.content) < SMALL
    error = strict(r.content)["error"]
    assert error["code"] == code, error
    assert {"message", "line", "column"} <= set(error)
    return error


def svg_error(r: Any, elapsed: float, status: int, words: str) -> str:
    assert elapsed < BOUND, f"{elapsed:.2f}s"
    assert r.status_code == status, r.text[:300]
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert len(r.content) < SMALL
    root = ET.fromstring(r.content)  # well-formed XML: no control character got through
    assert not list(root.iter(SVG + "script"))
    text = " ".join(root.itertext())
    assert words in text, text
    return text


def state_of(html: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="state">(.*?)</script>', html, re.S)
    assert m
    return dict(strict(m.group(1).encode()))


# --- bodies: content types, encodings, shapes ---------------------------------------------------

JSON = "application/json"
BODIES: list[tuple[str, str | None, bytes, int, str]] = [
    ("text-plain", "text/plain", b'{"source": "x"}', 422, "malformed_request"),
    ("no-content-type", None, b'{"source": "x"}', 422, "malformed_request"),
    ("form", "application/x-www-form-urlencoded", b"source=x", 422, "malformed_request"),
    (
        "multipart",
        "multipart/form-data; boundary=X",
        b'--X\r\nContent-Disposition: form-data; name="source"\r\n\r\nx\r\n--X--\r\n',
        422,
        "malformed_request",
    ),
    ("xml", "application/xml", b"<source>x</source>", 422, "malformed_request"),
    ("gzip-body", JSON, gzip.compress(b'{"source": "x"}'), 422, "malformed_request"),
    ("not-utf8", JSON, b'{"source": "\x80"}', 422, "malformed_request"),
    (
        "deep-nesting",
        JSON,
        b'{"source": "x", "values": {"x": ' + b"[" * 100_000 + b"}",
        422,
        "malformed_request",
    ),
    ("empty", JSON, b"", 422, "malformed_request"),
    ("null", JSON, b"null", 422, "malformed_request"),
    ("bare-string", JSON, b'"x*y"', 422, "malformed_request"),
    ("array", JSON, b'[{"source": "x"}]', 422, "malformed_request"),
    ("truncated", JSON, b'{"source": "x', 422, "malformed_request"),
    ("missing-source", JSON, b"{}", 422, "malformed_request"),
    ("source-number", JSON, b'{"source": 5}', 422, "malformed_request"),
    ("source-list", JSON, b'{"source": ["x"]}', 422, "malformed_request"),
    ("value-string", JSON, b'{"source": "x", "values": {"x": "2"}}', 422, "malformed_request"),
    ("value-bool", JSON, b'{"source": "x", "values": {"x": true}}', 422, "malformed_request"),
    ("value-object", JSON, b'{"source": "x", "values": {"x": {"y": 1}}}', 422, "malformed_request"),
    (
        "value-huge-int",
        JSON,
        b'{"source": "x", "values": {"x": 1' + b"0" * 400 + b"}}",
        422,
        "malformed_request",
    ),
    ("values-list", JSON, b'{"source": "x", "values": [1, 2]}', 422, "malformed_request"),
    ("accumulate-case", JSON, b'{"source": "x", "accumulate": "ADD"}', 422, "malformed_request"),
    ("order-unknown", JSON, b'{"source": "x", "order": "bfs"}', 422, "malformed_request"),
    ("extra-field", JSON, b'{"source": "x", "eval": "1"}', 422, "malformed_request"),
    ("nan-value", JSON, b'{"source": "x", "values": {"x": NaN}}', 400, "bad_value"),
    ("infinity-value", JSON, b'{"source": "x", "values": {"x": Infinity}}', 400, "bad_value"),
    ("overflowing-value", JSON, b'{"source": "x", "values": {"x": 1e999}}', 400, "bad_value"),
    ("ragged-value", JSON, b'{"source": "x", "values": {"x": [1, [2]]}}', 400, "bad_value"),
    ("lone-surrogate-source", JSON, b'{"source": "x = \\ud800"}', 400, "bad_character"),
    (
        "lone-surrogate-key",
        JSON,
        b'{"source": "x", "values": {"\\udfff": 1}}',
        400,
        "unknown_value",
    ),
]


@pytest.mark.parametrize(
    ("content_type", "body", "status", "code"),
    [b[1:] for b in BODIES],
    ids=[b[0] for b in BODIES],
)
def test_a_broken_body_gets_a_4xx_error_object(
    client: TestClient, content_type: str | None, body: bytes, status: int, code: str
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    if content_type == JSON and body.startswith(b"\x1f\x8b"):
        headers["content-encoding"] = "gzip"  # not decoded by the server: still not JSON
    r, t = timed(client, "POST", "/api/trace", content=body, headers=headers)
    error = json_error(r, t, status, code)
    assert "\\ud800" not in r.text and "\ud800" not in error["message"]


def test_duplicate_keys_in_a_body_take_the_last_as_json_parse_does(client: TestClient) -> None:
    r = client.post(
        "/api/trace", content=b'{"source": "x", "source": "y*2"}', headers={"content-type": JSON}
    )
    assert r.status_code == 200 and strict(r.content)["grads"] == {"y": 2.0}


def test_a_malformed_request_never_echoes_its_junk(client: TestClient) -> None:
    junk = "J" * 50_000
    for body in (
        {"source": "x", junk: 1},
        {"source": "x", "values": {"x": junk}},
        {"source": ["<script>" + junk]},
    ):
        r, t = timed(client, "POST", "/api/trace", json=body)
        json_error(r, t, 422, "malformed_request")
        assert "J" * 100 not in r.text and "<script>" not in r.text


def test_a_30_mb_body_is_refused_before_it_is_read(client: TestClient) -> None:
    body = b'{"source": "x", "junk": "' + b"a" * 30_000_000 + b'"}'
    r, t = timed(client, "POST", "/api/trace", content=body, headers={"content-type": JSON})
    error = json_error(r, t, 413, "too_large")
    assert error["limit"] == "max_body_bytes" and "max_body_bytes" in error["message"]


def test_oversized_headers_are_refused(client: TestClient) -> None:
    r, t = timed(client, "GET", "/?source=x", headers={"x-junk": "a" * 100_000})
    assert json_error(r, t, 431, "too_large")["limit"] == "max_header_bytes"


@pytest.mark.parametrize(
    ("method", "path"),
    [("PUT", "/api/trace"), ("DELETE", "/api/trace"), ("PATCH", "/"), ("PUT", "/api/render")],
)
def test_other_methods_get_405_with_the_error_object(
    client: TestClient, method: str, path: str
) -> None:
    r, t = timed(client, method, path)
    json_error(r, t, 405, "http_405")


def test_an_unknown_address_gets_404_without_echoing_it(client: TestClient) -> None:
    r, t = timed(client, "GET", "/" + "<script>" * 100)
    json_error(r, t, 404, "http_404")
    assert "<script>" not in r.text


# --- query parameters: the image, the page, the embed -------------------------------------------


def z_of(data: bytes) -> str:
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    return urlsafe_b64encode(co.compress(data) + co.flush()).rstrip(b"=").decode()


QUERIES: list[tuple[str, str, int, str]] = [
    ("zip-bomb", "z=" + z_of(b"x" * 10_000_000), 413, f"inflates past {MAX_INFLATED_BYTES}"),
    ("z-over-source-limit", "z=" + z_of(b"x = 1\n" * 3_400), 413, "max_source_chars"),
    ("z-broken-base64", "z=!!!not*base64", 400, "not valid base64url"),
    ("z-not-deflate", "z=" + urlsafe_b64encode(b"plain text").decode(), 400, "damaged"),
    ("z-not-utf8", "z=" + z_of(b"\xff\xfe x"), 400, "not UTF-8"),
    ("z-empty", "z=AAAA", 400, "empty"),
    ("lone-surrogate-source", "source=x%20%2B%20%ED%A0%80", 400, "U+FFFD"),
    ("lone-surrogate-value-name", "source=x&values=%ED%A0%80=1", 400, "is not a name"),
    ("nul-in-source", "source=x%00", 400, "control character"),
    ("escape-in-source", "source=x%1B%5B31m", 400, "control character"),
    ("bidi-in-source", "source=x%E2%80%AE", 400, "direction control"),
    ("markup-value-name", "source=x&values=%3Cscript%3E=1", 400, "is not a name"),
    ("nan-value", "source=x&values=x=nan", 400, "finite"),
    ("inf-value", "source=x&values=x=1e309", 400, "finite"),
    ("nan-json-value", "source=x&values=" + quote('{"x": NaN}'), 400, "not valid JSON"),
    (
        "deep-json-value",
        "source=x&values=" + quote('{"x": ' + "[" * 5000 + "1" + "]" * 5000 + "}"),
        400,
        "values",
    ),
    ("unknown-value", "source=x&values=q=1", 400, "no free name 'q'"),
    ("newer-format", "source=x&v=2", 400, "v=2"),
    ("format-not-a-number", "source=x&v=abc", 400, "whole number"),
    ("accumulate-unknown", "source=x&accumulate=%3Cb%3E", 400, "accumulate"),
    ("no-program", "step=1", 400, "no program"),
]


@pytest.mark.parametrize(
    ("query", "status", "words"), [q[1:] for q in QUERIES], ids=[q[0] for q in QUERIES]
)
def test_a_hostile_image_address_gets_a_4xx_picture_that_says_why(
    client: TestClient, query: str, status: int, words: str
) -> None:
    r, t = timed(client, "GET", "/api/svg?" + query)
    svg_error(r, t, status, words)


@pytest.mark.parametrize(
    ("query", "status", "words"), [q[1:] for q in QUERIES], ids=[q[0] for q in QUERIES]
)
@pytest.mark.parametrize("page", ["/", "/embed"])
def test_a_hostile_page_address_opens_the_page_with_the_error(
    client: TestClient, page: str, query: str, status: int, words: str
) -> None:
    r, t = timed(client, "GET", page + "?" + query)
    assert t < BOUND and r.status_code == 200
    state = state_of(r.text)
    if query == "step=1":  # the page opens the lesson's example instead
        assert state["error"] is None and state["trace"] is not None
        return
    assert state["trace"] is None and words in state["error"]["message"]
    # the page echoes at most a program's worth of text, never the address in full
    assert len(state["query"]["source"]) <= LIMITS.max_source_chars
    plain = client.get(page + "?source=x").content  # the page around a one-letter program
    assert len(r.content) < len(plain) + 3 * LIMITS.max_source_chars


def test_a_huge_address_is_413_before_any_work() -> None:
    """(A client refuses to send an address over 64 KiB, so the limit is made small here; the
    load test sends a real one to a real server.)"""
    with TestClient(SizeGuard(app, max_body_bytes=1000, max_query_bytes=1000)) as small:
        for page in ("/", "/embed"):
            r, t = timed(small, "GET", page + "?source=" + "x" * 2000)
            assert json_error(r, t, 413, "too_large")["limit"] == "max_query_bytes"
        r, t = timed(small, "GET", "/api/svg?source=" + "x" * 2000)
        svg_error(r, t, 413, "max_query_bytes")


def test_an_over_long_program_is_shown_cut_to_the_source_limit(client: TestClient) -> None:
    source = "x = 1\n" * 3_400  # 20,400 characters: over max_source_chars, under the z= limit
    r = client.get("/?v=1&z=" + deflate_source(source))
    state = state_of(r.text)
    assert state["error"]["limit"] == "max_source_chars"
    assert state["query"]["source"] == source[: LIMITS.max_source_chars]
    textarea = re.search(r'<textarea id="source"[^>]*>(.*?)</textarea>', r.text, re.S)
    assert textarea and len(textarea.group(1)) <= LIMITS.max_source_chars + 100


def test_repeated_parameters_take_the_last(client: TestClient) -> None:
    last = client.get("/api/svg?source=x%2B1&step=1").content
    assert client.get("/api/svg?source=x*y&source=x%2B1&step=0&step=1").content == last
    state = state_of(client.get("/?source=x*y&source=x%2B1&step=0&step=1").text)
    assert state["query"]["source"] == "x+1" and state["query"]["step"] == 1


@pytest.mark.parametrize(
    ("step", "shown"),
    [
        ("99999999999999999999999999999999999999", 2),
        ("-5", 0),
        ("abc", 2),
        ("", 2),
        ("1e3", 2),
        ("%EF%BC%91", 1),
        ("first", 0),
    ],  # a full-width １ is a digit, as for int()
)
def test_odd_steps_clamp_or_mean_the_last(client: TestClient, step: str, shown: int) -> None:
    r, t = timed(client, "GET", f"/?source=x*y%2Bx&values=x=2,y=3&step={step}")
    assert t < BOUND and r.status_code == 200
    assert state_of(r.text)["query"]["step"] == shown


@pytest.mark.parametrize("lang", ["%3Cscript%3E", "zh-CN%22%3E", "%ED%A0%80", "x" * 1000])
def test_an_odd_language_falls_back_without_echoing(client: TestClient, lang: str) -> None:
    r = client.get(f"/?source=x&lang={lang}")
    assert r.status_code == 200
    assert re.search(r'<html lang="(en|zh-CN)">', r.text)
    assert "<script>" not in r.text.split('id="state"')[0]


def test_unknown_parameters_are_ignored(client: TestClient) -> None:
    plain = client.get("/api/svg?source=x*y").content
    assert client.get("/api/svg?source=x*y&onload=alert(1)&%3Cx%3E=1").content == plain


def test_an_address_too_long_for_the_image_is_a_picture_too(client: TestClient) -> None:
    r, t = timed(client, "GET", "/api/svg?source=x", headers={"x-junk": "a" * 100_000})
    svg_error(r, t, 431, "max_header_bytes")


@pytest.mark.parametrize(
    ("query", "headers"),
    [
        ("source=x", {"x-junk": "a" * 100_000}),
        ("", {}),
        ("source=" + quote("log(0)"), {}),
        ("source=x&z=1", {}),
    ],
)
def test_every_picture_runs_and_loads_nothing_and_may_be_embedded(
    client: TestClient, query: str, headers: dict[str, str]
) -> None:
    """Whoever answers (the size guard, the error handlers, the route), an SVG answer carries
    a CSP under which it can run no script and load nothing, and other sites may embed it."""
    r = client.get("/api/svg?" + query, headers=headers)
    assert r.headers["content-type"].startswith("image/svg+xml")
    csp = r.headers["content-security-policy"]
    assert csp.startswith("default-src 'none'") and "script-src" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cross-origin-resource-policy"] == "cross-origin"


# --- NaN never reaches JSON; an internal error echoes nothing -----------------------------------


REAL_RUN = engine.run


NAN = float("nan")


class NaNTrace:
    """What a broken engine might return: a trace with a NaN and an infinity in it."""

    free: list[Any] = []

    def to_dict(self) -> dict[str, Any]:
        good = REAL_RUN("x*y + x", {"x": 2, "y": 3}).to_dict()
        good["value"] = float("nan")
        good["nodes"][0]["grad"] = float("inf")
        good["nodes"][1]["value"] = np.float64("nan")
        return good


def test_to_json_never_writes_nan_or_infinity() -> None:
    out = to_json({"a": float("nan"), "b": [1.0, float("-inf"), {"c": np.float64("nan")}]})
    assert strict(out) == {"a": None, "b": [1.0, None, {"c": None}]}
    assert to_json({"k\ud800": 1}) == b'{"k?":1}'


@pytest.mark.parametrize("path", ["/api/trace", "/api/render", "/", "/embed"])
def test_a_nan_that_slipped_through_still_gives_strict_json(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    import app.routes.api as api

    # a program of its own, so that no answer cache hands this broken trace to another test
    unique = f"nan_probe_{path.strip('/').replace('/', '_')} * 1"

    def broken_run(*a: Any, **k: Any) -> Any:  # a Run whose trace holds NaNs, nothing printed
        return types.SimpleNamespace(
            trace=NaNTrace(),
            free=[],
            warnings=[],
            printed=[],
        )

    monkeypatch.setattr(api, "run_program", broken_run)
    monkeypatch.setattr(engine, "run_program", broken_run)
    monkeypatch.setattr(engine, "run", lambda *a, **k: NaNTrace())
    monkeypatch.setattr(  # the page's `=` row, from the same broken engine
        engine.program, "contrast", lambda *a, **k: {"accumulate": "assign", "grads": {"n0": NAN}}
    )
    if path.startswith("/api"):
        r = client.post(path, json={"source": unique})
        assert r.status_code == 200
        body = strict(r.content)
    else:
        r = client.get(path + "?source=" + quote(unique))
        assert r.status_code == 200
        body = state_of(r.text)
    trace = body.get("trace", body)
    assert trace["value"] is None and trace["nodes"][0]["grad"] is None


def test_an_internal_error_is_a_500_with_the_error_object_and_no_echo(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.routes.api as api

    def broken(source: str, *args: Any, **kw: Any) -> Any:
        raise RuntimeError(f"bug while running {source}")

    monkeypatch.setattr(api, "run_program", broken)
    r = client.post("/api/trace", json={"source": "x*y + SECRET_INPUT"})
    assert r.status_code == 500
    error = strict(r.content)["error"]
    assert error["code"] == "internal"
    assert "SECRET_INPUT" not in r.text and "Traceback" not in r.text


# --- the time bound per request (max_request_seconds) -------------------------------------------


def test_the_engine_stops_at_the_request_deadline_and_names_the_setting() -> None:
    with deadline(0.001), pytest.raises(engine.ProgramError) as info:
        time.sleep(0.002)
        engine.run("x*y + x")
    e = info.value
    assert e.status == 413 and e.limit == "max_request_seconds"
    assert "max_request_seconds" in e.message and "0.001 s" in e.message


def test_an_earlier_deadline_stays_in_force() -> None:
    with deadline(0.5) as outer, deadline(60) as inner:
        assert inner is outer


def test_a_layout_past_the_request_deadline_is_a_413_picture_naming_the_setting() -> None:
    lines = [f"a{i} = {i % 97 + 1}" for i in range(60)]
    lines += [f"b{i} = a{(i * 7) % 60} * a{(i * 13 + 5) % 60}" for i in range(220)]
    lines.append("L = " + " + ".join(f"b{i}" for i in range(220)) + " # unique")
    timed_app = RequestDeadline(app, seconds=0.5, grace=5)
    with TestClient(timed_app, raise_server_exceptions=False) as c:
        r, t = timed(c, "GET", "/api/svg?source=" + quote("\n".join(lines)))
    assert t < 1.5, f"{t:.2f}s"
    assert r.status_code == 413 and r.headers["content-type"].startswith("image/svg+xml")
    assert "max_request_seconds" in " ".join(ET.fromstring(r.content).itertext())


def scope_for(path: str) -> Scope:
    return {"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": []}


async def call(
    asgi: Any, path: str, running: list[asyncio.Future[None]]
) -> tuple[float, int, dict[bytes, bytes], bytes]:
    """Call an ASGI app; return as soon as its answer is complete, which may be before the app
    returns (the app's task is added to `running`)."""
    start = time.monotonic()
    done = asyncio.Event()
    status, headers, body = 0, {}, b""

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status, headers, body
        if message["type"] == "http.response.start":
            status, headers = message["status"], dict(message["headers"])
        else:
            body += message.get("body", b"")
            if not message.get("more_body"):
                done.set()

    running.append(asyncio.ensure_future(asgi(scope_for(path), receive, send)))
    await done.wait()
    return time.monotonic() - start, status, headers, body


def test_work_that_ignores_the_deadline_is_answered_503_and_still_counts_as_in_flight() -> None:
    """The backstop: a worker thread that cannot be stopped (here it sleeps 0.8 s) gets its
    client a 503 + Retry-After once the deadline and grace are past, and it keeps its place
    in max_in_flight until it really ends, so a flood of such requests is shed."""

    async def stubborn(scope: Scope, receive: Receive, send: Send) -> None:
        await run_in_threadpool(time.sleep, 0.8)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"late"})

    guarded = LoadShedder(RequestDeadline(stubborn, seconds=0.1, grace=0.1), max_in_flight=1)

    async def scenario() -> list[tuple[float, int, dict[bytes, bytes], bytes]]:
        running: list[asyncio.Future[None]] = []
        first = await call(guarded, "/api/trace", running)
        second = await call(guarded, "/api/svg", running)  # the first one's thread still sleeps
        await asyncio.gather(*running)  # it ends, and its place in max_in_flight is free again
        third = await call(guarded, "/api/trace", running)
        await asyncio.gather(*running)
        return [first, second, third]

    # A thread of its own: the session's Playwright browser may hold this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        first, second, third = pool.submit(asyncio.run, scenario()).result(timeout=60)
    t, status, headers, body = first
    assert status == 503 and 0.2 <= t < 0.6 and headers[b"retry-after"] == b"2"
    error = strict(body)["error"]
    assert error["code"] == "timeout" and error["limit"] == "max_request_seconds"
    assert "max_request_seconds" in error["message"]
    t, status, headers, body = second
    assert status == 503 and t < 0.1 and headers[b"retry-after"] == b"1"  # shed: still counted
    assert headers[b"content-type"] == b"image/svg+xml"  # the image address answers a picture
    assert third[1] == 503 and strict(third[3])["error"]["code"] == "timeout"  # not shed


def test_the_routes_that_compute_run_in_the_threadpool() -> None:
    """CPU-heavy work never runs on the event loop: every route that runs a program or lays
    out a graph is a plain `def`, which FastAPI runs in a worker thread."""
    from app.routes import api, images, pages, render

    routers = (api.router, pages.router, images.router, render.router)
    routes = [r for router in routers for r in router.routes]
    assert {r.path for r in routes} >= {"/api/trace", "/api/svg", "/", "/embed", "/api/render"}
    for route in routes:
        endpoint = route.endpoint  # type: ignore[attr-defined]
        assert not asyncio.iscoroutinefunction(endpoint), f"{route.path} is async"
