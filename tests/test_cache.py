"""Caching the way the web does (app/cache.py): GET answers named by their address carry a long
public max-age and an ETag with the app's version, a matching If-None-Match is a 304, answers
are gzipped, and the same program again comes from the worker's memory, byte for byte."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app import cache
from app.main import app

PROGRAM = {"source": "x*y + x", "values": "x=2,y=3"}


@pytest.fixture()
def client() -> Iterator[TestClient]:
    cache.clear()
    with TestClient(app) as c:
        yield c
    cache.clear()


@pytest.mark.parametrize("path", ["/api/svg", "/api/trace"])
def test_a_permalink_answer_has_a_long_public_max_age_and_a_versioned_etag(
    client: TestClient, path: str
) -> None:
    r = client.get(path, params=PROGRAM)
    assert r.status_code == 200
    control = r.headers["cache-control"]
    assert "public" in control
    assert int(control.split("max-age=")[1].split(",")[0]) >= 86_400
    etag = r.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"')
    assert cache.APP_VERSION in etag


@pytest.mark.parametrize("path", ["/api/svg", "/api/trace"])
def test_if_none_match_with_the_etag_is_a_304_without_a_body(client: TestClient, path: str) -> None:
    etag = client.get(path, params=PROGRAM).headers["etag"]
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        r = client.get(path, params=PROGRAM, headers={"If-None-Match": header})
        assert r.status_code == 304, header
        assert r.content == b""
        assert r.headers["etag"] == etag
        assert "public" in r.headers["cache-control"]
    r = client.get(path, params=PROGRAM, headers={"If-None-Match": '"0.0.0-stale"'})
    assert r.status_code == 200 and r.content


def test_the_etag_names_the_program_not_the_order_of_its_parameters(client: TestClient) -> None:
    a = client.get("/api/svg?source=x*y&values=x%3D2&step=1").headers["etag"]
    b = client.get("/api/svg?step=1&values=x%3D2&source=x*y").headers["etag"]
    c = client.get("/api/svg?source=x*y&values=x%3D3&step=1").headers["etag"]
    d = client.get("/api/svg?source=x*y&values=x%3D2&step=0").headers["etag"]
    assert a == b
    assert len({a, c, d}) == 3


def test_a_new_version_has_new_etags(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    old = client.get("/api/svg", params=PROGRAM).headers["etag"]
    monkeypatch.setattr(cache, "APP_VERSION", "9.9.9")
    cache.clear()
    r = client.get("/api/svg", params=PROGRAM, headers={"If-None-Match": old})
    assert r.status_code == 200
    assert r.headers["etag"] != old and "9.9.9" in r.headers["etag"]


def test_get_trace_is_the_post_trace_of_the_same_program(client: TestClient) -> None:
    by_get = client.get("/api/trace", params=PROGRAM).json()
    by_post = client.post(
        "/api/trace", json={"source": "x*y + x", "values": {"x": 2, "y": 3}}
    ).json()
    assert by_get == by_post
    assert by_get["grads"] == {"x": 4.0, "y": 2.0}


def test_errors_are_neither_cached_nor_given_long_lives(client: TestClient) -> None:
    for path in ("/api/trace", "/api/svg"):
        r = client.get(path, params={"source": "x*"})
        assert r.status_code == 400
        assert "etag" not in r.headers
        assert "public" not in r.headers.get("cache-control", "")
    assert len(cache.answers) == 0
    r = client.post("/api/render", json={"source": "x*"})
    assert r.status_code == 200 and "error" in r.json()
    assert len(cache.answers) == 0


def test_answers_are_gzipped_for_clients_that_ask(client: TestClient) -> None:
    zipped = client.get("/api/trace", params=PROGRAM, headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in zipped.headers.get("vary", "").lower()
    plain = client.get("/api/trace", params=PROGRAM, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.json() == zipped.json()
    raw = client.post(
        "/api/render", json={"source": "x*y + x"}, headers={"Accept-Encoding": "gzip"}
    )
    assert raw.headers["content-encoding"] == "gzip"
    assert int(raw.headers["content-length"]) < len(raw.content)  # decoded by httpx


def test_the_same_program_again_is_the_same_answer_from_the_cache(client: TestClient) -> None:
    body = {"source": "x*y + x", "values": {"x": 2, "y": 3}}
    first = client.post("/api/render", json=body)
    hits = cache.answers.hits
    again = client.post("/api/render", json=body)
    assert cache.answers.hits == hits + 1
    assert again.content == first.content
    assert again.headers["content-type"] == first.headers["content-type"]
    assert cache.KEEP not in first.headers and cache.KEEP not in again.headers
    # The security headers are on the cached answer too.
    assert again.headers["content-security-policy"] == first.headers["content-security-policy"]
    svg = client.get("/api/svg", params=PROGRAM)
    svg_again = client.get("/api/svg", params=PROGRAM)
    assert svg_again.content == svg.content
    assert svg_again.headers["content-type"].startswith("image/svg+xml")
    assert svg_again.headers["content-security-policy"] == svg.headers["content-security-policy"]


def test_a_cached_gzip_answer_is_never_sent_to_a_client_that_did_not_ask(
    client: TestClient,
) -> None:
    client.get("/api/trace", params=PROGRAM, headers={"Accept-Encoding": "gzip"})
    plain = client.get("/api/trace", params=PROGRAM, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.json()["grads"] == {"x": 4.0, "y": 2.0}


def test_the_lru_is_bounded_by_entries_and_by_bytes() -> None:
    lru = cache.LRU(max_entries=3, max_bytes=100)
    for i in range(5):
        lru.put(i, str(i), 10)
    assert len(lru) == 3 and lru.get(0) is None and lru.get(4) == "4"
    lru.get(2)  # recently used: survives the next eviction
    lru.put(5, "5", 10)
    assert lru.get(2) == "2" and lru.get(3) is None
    lru.put("big", "x", 60)  # over a quarter of the bytes: never kept
    assert lru.get("big") is None
    for i in range(10, 14):
        lru.put(i, "y", 25)
    assert lru.bytes <= 100


def test_gzip_of_a_kept_answer_is_valid(client: TestClient) -> None:
    client.get("/api/trace", params=PROGRAM)
    key = cache.get_key("/api/trace", sorted(PROGRAM.items()))
    kept = cache.answers.get((key, True))
    assert kept is not None and kept.status == 200
    assert b'"grads"' in gzip.decompress(kept.body)


@pytest.mark.parametrize("path", ["/api/svg", "/api/trace"])
def test_if_none_match_star_is_never_a_304_for_a_program_that_fails(
    client: TestClient, path: str
) -> None:
    """`*` matches a current representation (RFC 9110 13.1.2): a program that cannot run has
    none, so it gets its 400 and the message, not a 304 that would hide the error."""
    for _ in range(2):  # and not once the error has been answered either
        r = client.get(path, params={"source": "x*"}, headers={"If-None-Match": "*"})
        assert r.status_code == 400 and r.content
        assert "etag" not in r.headers
    assert not cache.matches("*", '"any"')  # `*` alone says nothing about existence


@pytest.mark.parametrize("path", ["/api/svg", "/api/trace"])
def test_if_none_match_star_is_a_304_for_an_answer_that_exists(
    client: TestClient, path: str
) -> None:
    params = {"source": "x*y + x # star", "values": "x=2,y=3"}
    # Not asked before: the answer is made, found to be a 200, and sent as a 304 (and kept).
    r = client.get(path, params=params, headers={"If-None-Match": "*"})
    assert r.status_code == 304 and r.content == b""
    etag = r.headers["etag"]
    assert cache.APP_VERSION in etag and "public" in r.headers["cache-control"]
    hits = cache.answers.hits
    r = client.get(path, params=params, headers={"If-None-Match": "*"})
    assert r.status_code == 304 and r.headers["etag"] == etag
    assert cache.answers.hits > hits  # known from the cache this time
    r = client.get(path, params=params)
    assert r.status_code == 200 and r.headers["etag"] == etag
