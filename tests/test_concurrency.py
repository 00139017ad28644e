"""Answers under concurrency are the answers alone: a real uvicorn, 8 client threads, every
answer compared byte for byte with the same request answered while nothing else ran.

What this guards against: state that one request changes and another reads (the first round's
`grad()` kept its node budget in a module-level object, so under load about 1 answer in 100
was a 500 and some were 200s with another program's numbers).
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.examples import EXAMPLES
from engine.lessons import LESSONS
from tests.uvicorn_proc import Server, uvicorn_server

THREADS = 8
ROUNDS = 3  # each thread sends every request this many times, in its own shuffled order

SECOND_ORDER_TANH = (
    "x = 0.5\ny = x\nfor i in range(24):\n    y = tanh(y)\ng = grad(y, x)\nh = grad(g, x)\nh"
)
# Small enough to lay out well within max_layout_seconds on a loaded machine.
SMALL_SECOND_ORDER = SECOND_ORDER_TANH.replace("24", "3")
PROGRAMS: list[dict[str, Any]] = [
    {"source": "x*y + x", "values": {"x": 2, "y": 3}},
    {"source": "x*y + x", "values": {"x": 2, "y": 3}, "accumulate": "assign", "order": "kahn"},
    {"source": SECOND_ORDER_TANH},
    {"source": SECOND_ORDER_TANH.replace("0.5", "-1.25")},
    {"source": "x = 3\ny = x**3\ng = grad(y, x)\ngrad(g, x)"},
    {
        "source": "W = randn(3, 4)\nx = randn(4)\nL = (tanh(W @ x)**2).sum()\n"
        "g = grad(L, W)\ng.sum()"
    },
    {"source": "x = [1.0, -2.0, 3.0]\nL = grad((x * x).sum(), x).sum() * sin(x).sum()"},
    {
        "source": "X = randn(8, 8)\nL = ((sigmoid(X @ X) - 1)**2).mean()",
        "lessons": sorted(LESSONS),
    },
    *(
        {"source": e["source"], "values": e["values"], "lessons": [e["lesson"]]}
        for e in EXAMPLES
        if e["lesson"] in LESSONS
    ),
]
PICTURES = [  # GET /api/svg: run, draw, answer (the drawing's caches are shared by design)
    {"source": "x*y + x", "values": "x=2,y=3", "step": "1"},
    {"source": SMALL_SECOND_ORDER, "step": "5"},
    {"source": "a = x*y\nb = max(a, z)\nL = a*b", "values": "x=2,y=3,z=4"},
]


def requests() -> list[tuple[str, str, dict[str, Any]]]:
    out = [("POST", "/api/trace", body) for body in PROGRAMS]
    out += [("GET", "/api/svg", params) for params in PICTURES]
    out += [("POST", "/api/render", {"source": SMALL_SECOND_ORDER, "lang": "en"})]
    return out


def send(client: httpx.Client, method: str, path: str, data: dict[str, Any]) -> bytes:
    if method == "GET":
        r = client.get(path, params=data)
    else:
        r = client.post(
            path, content=json.dumps(data), headers={"content-type": "application/json"}
        )
    assert r.status_code == 200, (path, data, r.status_code, r.text[:300])
    return r.content


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    env = {
        # No cached answers: every request below is really computed.
        "GRADTRACE_CACHE_ENTRIES": "0",
        "GRADTRACE_MAX_IN_FLIGHT": "32",
        "GRADTRACE_MAX_IN_FLIGHT_PER_CLIENT": "32",
    }
    with uvicorn_server(env, app="app.main:app") as s:
        yield s


def client_for(server: Server) -> httpx.Client:
    # identity: the bytes compared are the answer's own, not a compressor's.
    return httpx.Client(base_url=server.url, timeout=30, headers={"accept-encoding": "identity"})


def test_every_answer_under_8_threads_equals_the_answer_alone(server: Server) -> None:
    work = requests()
    with client_for(server) as client:
        alone = [send(client, *req) for req in work]
    mismatches: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def worker(seed: int) -> None:
        order = [i for i in range(len(work)) for _ in range(ROUNDS)]
        random.Random(seed).shuffle(order)
        try:
            with client_for(server) as client:
                for i in order:
                    body = send(client, *work[i])
                    if body != alone[i]:
                        with lock:
                            mismatches.append(f"{work[i][1]} {str(work[i][2])[:80]}")
        except BaseException as err:  # an assertion in a thread: reported below
            with lock:
                errors.append(err)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    assert not any(t.is_alive() for t in threads), "a client thread did not finish"
    assert not errors, errors[:3]
    assert not mismatches, f"{len(mismatches)} answers differed: {mismatches[:5]}"


def test_the_requests_cover_second_order_grads_and_every_lesson() -> None:
    asked = {name for body in PROGRAMS for name in body.get("lessons", [])}
    assert asked == set(LESSONS)
    assert sum("grad(g, x)" in body["source"] for body in PROGRAMS) >= 3
