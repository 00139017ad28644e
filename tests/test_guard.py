"""Oversized bodies and query strings are refused before they are read in full."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.config import get_settings
from app.main import app
from app.middleware.guard import SizeGuard


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(app)


def test_a_declared_oversized_body_is_413_and_not_echoed(client: TestClient) -> None:
    big = "a" * (get_settings().max_body_bytes + 1)
    r = client.post("/api/trace", json={"source": "x", "junk": big})
    assert r.status_code == 413
    assert r.json()["error"]["limit"] == "max_body_bytes"
    assert len(r.content) < 1000


def small_guarded_client() -> TestClient:
    """The real app behind a guard with small limits, so the tests stay small."""
    return TestClient(SizeGuard(app, max_body_bytes=1000, max_query_bytes=100))


def test_a_chunked_body_is_cut_off_at_the_limit() -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"source": "x", "junk": "'
        for _ in range(100):
            yield b"a" * 100
        yield b'"}'

    r = small_guarded_client().post(
        "/api/trace", content=chunks(), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413
    assert r.json()["error"]["limit"] == "max_body_bytes"


def test_an_oversized_query_is_413() -> None:
    r = small_guarded_client().get("/?source=" + "x" * 101)
    assert r.status_code == 413
    assert r.json()["error"]["limit"] == "max_query_bytes"


def test_a_body_under_the_limit_reaches_the_app(client: TestClient) -> None:
    r = client.post("/api/trace", json={"source": "x*y + x", "values": {"x": 2, "y": 3}})
    assert r.status_code == 200 and r.json()["grads"] == {"x": 4.0, "y": 2.0}
