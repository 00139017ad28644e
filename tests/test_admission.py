"""Admission after the body (issue 11, item 4), against a real uvicorn on loopback: a request
counts against max_in_flight only once its body is in, so stalled uploads cost connections,
not slots, and end with 408 after body_read_seconds; one client address holds at most
max_in_flight_per_client slots; a kept answer needs no slot; and a request over a size limit is
refused before the answer cache is asked.

The numbers measured are written to stderr (run with -s to see them).
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from app import cache
from app.main import app
from tests.uvicorn_proc import Server, uvicorn_server

BODY_READ_SECONDS = 1.5  # the server's body_read_seconds in the stalled-upload test
NORMAL_BOUND = 2.0  # seconds: a normal request while uploads stall (the target)


def say(line: str) -> None:
    sys.stderr.write(line + "\n")


@pytest.fixture(scope="module")
def stall_server() -> Iterator[Server]:
    # max_in_flight stays at its default (16): fewer than the 20 stalled uploads below.
    with uvicorn_server({"GRADTRACE_BODY_READ_SECONDS": str(BODY_READ_SECONDS)}) as server:
        yield server


def stalled_upload(server: Server) -> socket.socket:
    """A POST whose headers and half of whose body are sent; the rest never comes."""
    body = json.dumps({"source": "x*y + x", "values": {"x": 2, "y": 3}}).encode()
    sock = socket.create_connection((server.host, server.port), timeout=10)
    head = (
        "POST /api/trace HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body[: len(body) // 2])
    return sock


def test_stalled_uploads_cost_connections_not_slots_and_end_with_408(
    stall_server: Server,
) -> None:
    began = time.monotonic()
    stalled = [stalled_upload(stall_server) for _ in range(20)]
    rng = random.Random(0)
    times = []
    with httpx.Client(base_url=stall_server.url, timeout=10) as client:
        for _ in range(8):  # fresh values each time: no answer cache can serve them
            x, y = rng.randrange(1, 100), rng.randrange(1, 100)
            start = time.perf_counter()
            r = client.post("/api/trace", json={"source": "x*y + x", "values": {"x": x, "y": y}})
            times.append(time.perf_counter() - start)
            assert r.status_code == 200, r.text[:300]
            assert r.json()["grads"] == {"x": y + 1.0, "y": float(x)}
    normal_done = time.monotonic() - began
    say(
        f"\nnormal requests beside 20 stalled uploads: median "
        f"{sorted(times)[len(times) // 2] * 1000:.0f} ms, slowest {max(times) * 1000:.0f} ms"
    )
    assert max(times) < NORMAL_BOUND
    # They ran while every upload still stalled (else this test would prove nothing).
    assert normal_done < BODY_READ_SECONDS, f"{normal_done:.2f}s"

    waited = []
    for sock in stalled:
        response = http.client.HTTPResponse(sock)
        response.begin()
        body = response.read()
        waited.append(time.monotonic() - began)
        assert response.status == 408
        assert response.getheader("connection") == "close"
        error = json.loads(body)["error"]
        assert error["code"] == "timeout" and error["limit"] == "body_read_seconds"
        assert f"{BODY_READ_SECONDS:g} s" in error["message"]
        assert "body_read_seconds" in error["message"]
        assert sock.recv(1) == b""  # and the server closed the connection
        sock.close()
    say(f"stalled uploads answered 408 after {min(waited):.2f}-{max(waited):.2f} s")
    assert min(waited) >= BODY_READ_SECONDS - 0.1 and max(waited) < BODY_READ_SECONDS + 2.0

    with httpx.Client(base_url=stall_server.url, timeout=10) as client:  # and all is well
        assert client.post("/api/trace", json={"source": "x*2"}).status_code == 200


def test_a_body_that_trickles_in_past_body_read_seconds_is_408(stall_server: Server) -> None:
    """The bound is on the whole body, not on each part: a byte a second never ends it."""
    sock = socket.create_connection((stall_server.host, stall_server.port), timeout=10)
    sock.sendall(
        b"POST /api/trace HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n"
    )
    began = time.monotonic()
    sock.settimeout(0.3)  # a byte, then up to 0.3 s of listening, again and again
    answer = b""
    while not answer and time.monotonic() - began < BODY_READ_SECONDS + 2:
        try:
            sock.sendall(b" ")
            answer = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:  # the server may close first: then the answer is in, or lost
            break
    sock.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
    assert time.monotonic() - began >= BODY_READ_SECONDS - 0.1


# --- max_in_flight_per_client --------------------------------------------------------------


@pytest.fixture(scope="module")
def small_server() -> Iterator[Server]:
    env = {"GRADTRACE_MAX_IN_FLIGHT": "4", "GRADTRACE_MAX_IN_FLIGHT_PER_CLIENT": "2"}
    with uvicorn_server(env) as server:
        yield server


def client_at(server: Server, address: str) -> httpx.Client:
    """A client whose requests come from `address` (any 127.x.y.z is loopback on Linux)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=server.url, transport=transport, timeout=10)


def sleepers(
    server: Server, address: str, count: int, seconds: float, out: list[httpx.Response]
) -> list[threading.Thread]:
    """`count` requests from `address` at once, each holding a slot for `seconds`."""

    def one() -> None:
        with client_at(server, address) as client:
            out.append(client.get("/test/sleep", params={"s": seconds}))

    threads = [threading.Thread(target=one) for _ in range(count)]
    for t in threads:
        t.start()
    return threads


KEPT = {"source": "x*y + x # kept", "values": "x=2,y=3"}


def test_one_client_cannot_take_every_slot(small_server: Server) -> None:
    with client_at(small_server, "127.0.0.4") as warm:  # a kept answer, for later
        assert warm.get("/api/trace", params=KEPT).status_code == 200
    greedy: list[httpx.Response] = []
    threads = sleepers(small_server, "127.0.0.1", 5, 2.0, greedy)
    deadline = time.monotonic() + 1.5  # the greedy client's requests are in (two at work)
    while sum(r.status_code == 503 for r in greedy) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # a loaded machine may take a moment to start five threads
    refused = [r for r in greedy if r.status_code == 503]
    assert len(refused) == 3, [r.status_code for r in greedy]
    for r in refused:
        error = r.json()["error"]
        assert error["code"] == "busy" and error["limit"] == "max_in_flight_per_client"
        assert "max_in_flight_per_client" in error["message"] and r.headers["retry-after"]

    # Another client still gets in: two slots of four are free.
    start = time.perf_counter()
    with client_at(small_server, "127.0.0.2") as other:
        r = other.post("/api/trace", json={"source": "x*y + x", "values": {"x": 5, "y": 7}})
    elapsed = time.perf_counter() - start
    say(f"\nanother client beside a greedy one: {r.status_code} in {elapsed * 1000:.0f} ms")
    assert r.status_code == 200 and r.json()["grads"] == {"x": 8.0, "y": 5.0}

    # Now fill the server (two more from a third address): a fourth address is shed by
    # max_in_flight, but what the answer cache holds needs no slot.
    more: list[httpx.Response] = []
    threads += sleepers(small_server, "127.0.0.3", 2, 1.5, more)
    time.sleep(0.5)
    with client_at(small_server, "127.0.0.4") as late:
        shed = late.post("/api/trace", json={"source": "x*3"})
        kept = late.get("/api/trace", params=KEPT)
    assert shed.status_code == 503 and shed.json()["error"]["limit"] == "max_in_flight"
    assert "max_in_flight" in shed.json()["error"]["message"]
    assert kept.status_code == 200 and kept.json()["grads"] == {"x": 4.0, "y": 2.0}

    for t in threads:
        t.join(timeout=10)
    assert sorted(r.status_code for r in greedy) == [200, 200, 503, 503, 503]
    assert [r.status_code for r in more] == [200, 200]


# --- size checks come before the answer cache ------------------------------------------------


def test_a_kept_answer_still_goes_through_the_header_size_check() -> None:
    cache.clear()
    with TestClient(app) as client:
        params = {"source": "x*y + x # kept, then asked with huge headers"}
        for path in ("/api/svg", "/api/trace"):
            assert client.get(path, params=params).status_code == 200
            hits = cache.answers.hits
            r = client.get(path, params=params, headers={"x-junk": "a" * 100_000})
            assert r.status_code == 431, path
            assert cache.answers.hits == hits  # refused before the cache was asked
        body = {"source": "x*y + x", "values": {"x": 2, "y": 3}}
        assert client.post("/api/render", json=body).status_code == 200
        r = client.post("/api/render", json=body, headers={"x-junk": "a" * 100_000})
        assert r.status_code == 431 and r.json()["error"]["limit"] == "max_header_bytes"
    cache.clear()
