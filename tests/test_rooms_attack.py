"""A class that one student cannot break (issue 21), tried as a student with a laptop would, on
the deployment as compose runs it: two real replicas, a real Redis and real nginx with
deploy/nginx.conf as shipped (tests/room_deploy.py). Clients come from addresses of their own
(all of 127/8 is loopback), so the bot's laptop, the school's NAT and an instructor elsewhere
are three clients to nginx and to the app.

Each scenario prints what it measured (MEASURED …): run with -s to read the numbers. Speeds
are reported, not asserted, except bounds generous enough to catch a collapse; what is
asserted is what the class sees: every state, every answer counted once, nobody dropped.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import websockets

from bench.measure import median, percentile
from bench.rooms import bot
from tests.nginx_proc import have_nginx
from tests.redis_proc import have_redis
from tests.room_client import (
    Client,
    PageStudent,
    PageTeacher,
    create_room,
    http,
    measured,
    run,
)
from tests.room_deploy import Deployment, deployment

pytestmark = [
    pytest.mark.skipif(not have_nginx(), reason="nginx is not installed (Debian: nginx-light)"),
    pytest.mark.skipif(not have_redis(), reason="redis-server is not installed"),
]
STATE = {"source": "a = x*y\nb = a + x", "values": {"x": 2, "y": 3}, "step": 0}
QUESTION = {"type": "ask", "id": "q1", "question": "x.grad after the next step?",
            "kind": "value", "answer": 4}  # fmt: skip
NAT = "127.0.0.10"  # a school: every student behind one address
TEACHER = "127.0.0.20"
LAPTOP = "127.0.0.66"  # the bot's


@pytest.fixture(scope="module")
def deployed() -> Iterator[Deployment]:
    with deployment() as d:
        yield d


async def _all(students: list[PageStudent], test: Any, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not all(test(s) for s in students):
        if time.monotonic() > end:
            bad = [s for s in students if not test(s)]
            raise AssertionError(f"{len(bad)} of {len(students)} students never {what}")
        await asyncio.sleep(0.05)


def test_a_250_socket_bot_beside_60_students_breaks_nothing(deployed: Deployment) -> None:
    """One laptop holds 250 sockets in the room (as many as one address may), each sending as
    fast as its welcome allows, beside 60 students behind a NAT and their instructor: every
    state reaches every student, nobody is dropped, `GET /api/rooms/CODE` answers, and every
    student's answer is counted once."""
    url = deployed.url

    async def go() -> dict[str, Any]:
        room = create_room(url, STATE, address=TEACHER)
        teacher = PageTeacher(url, room, address=TEACHER).start()
        await teacher.ask(QUESTION)
        with bot([deployed.nginx.port], room["room"], 250, LAPTOP) as botted:
            students = [PageStudent(url, room["room"], address=NAT).start() for _ in range(60)]
            await _all(students, lambda s: s.question == "q1", 30, "got the question")
            for s in students:
                s.answer(4)
            await _all(students, lambda s: s.acked == 4, 20, "had their answer stored")
            sent: dict[int, float] = {}
            statuses: list[int] = []
            pool = ThreadPoolExecutor(1)
            loop = asyncio.get_running_loop()
            info = f"{url}/api/rooms/{room['room']}"
            for step in range(1, 21):
                t = time.perf_counter()
                seq = await teacher.step({**STATE, "step": step})
                sent[seq] = t
                statuses.append((await loop.run_in_executor(pool, http, "GET", info))[0])
                await asyncio.sleep(0.25)
            await asyncio.sleep(1.0)
            deadline = time.monotonic() + 10
            while teacher.tally.get("4") != 60 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        latencies = [s.states[q] - t for s in students for q, t in sent.items() if q in s.states]
        out = {
            "states": len(latencies),
            "of": 60 * len(sent),
            "p50_ms": round(1000 * median(latencies), 1),
            "p99_ms": round(1000 * percentile(latencies, 99), 1),
            "max_ms": round(1000 * max(latencies), 1),
            "student_closes": sum(len(s.closes) for s in students),
            "teacher_closes": list(teacher.closes),
            "room_info": sorted(set(statuses)),
            "counted_4": teacher.tally.get("4"),
            "tally_total": teacher.total,
            "bot": botted,
        }
        for s in students:
            await s.stop()
        await teacher.stop()
        return out

    out = run(go(), timeout=120)
    measured("250-socket bot beside 60 students", **out)
    assert out["states"] == out["of"] == 1200, out  # every real state delivered
    assert out["student_closes"] == 0 and out["teacher_closes"] == [], out  # nobody dropped
    assert out["room_info"] == [200], out
    assert out["counted_4"] == 60, out  # every real answer, once
    assert out["bot"]["connected"] == 250 and out["bot"]["closed"] == 0, out
    assert out["p99_ms"] < 1500, out  # a bound that catches a collapse; the bench reports speed


def test_500_simultaneous_answers_are_all_counted(deployed: Deployment) -> None:
    url = deployed.url

    async def go() -> dict[str, Any]:
        room = create_room(url, STATE, address=TEACHER)
        teacher = PageTeacher(url, room, address=TEACHER).start()
        await teacher.ask({**QUESTION, "id": "q500"})
        schools = ["127.0.1.1", "127.0.1.2", "127.0.1.3"]  # 200, 200, 100 behind three NATs
        students = [PageStudent(url, room["room"], address=schools[i // 200]) for i in range(500)]
        for s in students:
            s.start()
        await _all(students, lambda s: s.question == "q500", 60, "got the question")
        t = time.perf_counter()
        for i, s in enumerate(students):  # all of them in the same moment
            s.answer(i % 5)
        await _all(students, lambda s: s.acked is not None, 30, "had their answer stored")
        stored = time.perf_counter() - t
        deadline = time.monotonic() + 10
        while teacher.total != 500 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        out = {"stored_all_in_s": round(stored, 2), "tally_total": teacher.total,
               "tally": teacher.tally, "resends": sum(s.ref - 1 for s in students),
               "closes": sum(len(s.closes) for s in students)}  # fmt: skip
        for s in students:
            await s.stop()
        await teacher.stop()
        return out

    out = run(go(), timeout=120)
    measured("500 simultaneous answers", **out)
    assert out["tally_total"] == 500 and out["tally"] == {str(k): 100 for k in range(5)}, out
    assert out["closes"] == 0, out


def test_a_thousand_rooms_from_one_client_are_bounded_and_others_still_start_a_class(
    deployed: Deployment,
) -> None:
    url = deployed.url
    script = "127.0.0.50"
    t = time.perf_counter()
    statuses: dict[int, int] = {}
    for _ in range(1000):
        status, headers, body = http("POST", url + "/api/rooms", {}, address=script)
        statuses[status] = statuses.get(status, 0) + 1
        if status == 429:
            refusal = json.loads(body)["error"]
            retry = headers["retry-after"]
    took = time.perf_counter() - t
    measured("1000 room creations from one client", statuses=statuses, seconds=round(took, 2))
    assert statuses == {201: 20, 429: 980}, statuses  # max_rooms_per_address
    assert "max_rooms_per_address" in refusal["message"] and int(retry) > 0
    # an instructor elsewhere is not held back by it
    status, _, body = http("POST", url + "/api/rooms", {}, address="127.0.0.51")
    assert status == 201, body


def test_a_written_x_forwarded_for_does_not_dodge_the_bound(deployed: Deployment) -> None:
    """nginx sets X-Forwarded-For to the address that connected; uvicorn trusts only nginx's:
    a client that writes its own (a new one each time) is still one client."""
    url = deployed.url
    made = 0
    for i in range(60):
        spoof = {"X-Forwarded-For": f"10.9.{i}.{i}", "X-Real-IP": f"10.8.{i}.1"}
        status, _, _ = http("POST", url + "/api/rooms", {}, headers=spoof, address="127.0.0.52")
        made += status == 201
    # straight to a replica (not through nginx), the header is not trusted either
    direct = 0
    replica = deployed.replicas[0].url
    for i in range(60):
        spoof = {"X-Forwarded-For": f"10.7.{i}.{i}"}
        status, _, _ = http("POST", replica + "/api/rooms", {}, headers=spoof, address="127.0.0.53")
        direct += status == 201
    measured("spoofed X-Forwarded-For, 60 creations each", via_nginx=made, direct=direct)
    assert made == 20 and direct == 20


def test_a_page_of_another_site_can_neither_open_a_room_nor_its_socket(
    deployed: Deployment,
) -> None:
    url = deployed.url
    host = url.removeprefix("http://")
    evil = {"Origin": "https://evil.example"}
    status, _, body = http("POST", url + "/api/rooms", {}, headers=evil)
    assert status == 403 and json.loads(body)["error"]["code"] == "cross_site", body
    for bad in ("null", "http://" + host + ".evil.example", "file://"):
        assert http("POST", url + "/api/rooms", {}, headers={"Origin": bad})[0] == 403, bad
    room = create_room(url)  # no Origin: not a browser (a script, this test)
    status, _, _ = http("POST", url + "/api/rooms", {}, headers={"Origin": "http://" + host})
    assert status == 201  # the page's own origin
    status, _, _ = http(
        "POST", f"{url}/api/rooms/{room['room']}/end",
        headers={**evil, "X-Instructor-Key": room["instructor_key"]},
    )  # fmt: skip
    assert status == 403

    async def sockets() -> tuple[int, str]:
        try:
            await Client.open(url, room["room"], origin="https://evil.example")
        except websockets.InvalidStatus as refused:
            code = refused.response.status_code
        else:
            code = 101
        ok = await Client.open(url, room["room"], origin="http://" + host)
        await ok.send({"type": "hello", "role": "student"})
        kind = (await ok.recv())["type"]
        await ok.close()
        return code, kind

    code, kind = run(sockets())
    measured("foreign Origin", post=403, socket_handshake=code)
    assert code == 403 and kind == "welcome"
