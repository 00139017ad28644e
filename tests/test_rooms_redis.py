"""Rooms through Redis (GRADTRACE_REDIS_URL): one real redis-server and two app processes
sharing it, the instructor on one (A) and students on the other (B). Everything that has to
cross processes does: states in seq order, the late joiner's catch-up, presence counts, the
question, its tally and its reveal, the end, the limit on students, and expiry."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import redis

from app.rooms import codes
from tests.redis_proc import have_redis, redis_server
from tests.room_client import Client, create_room, end_room, http, run
from tests.uvicorn_proc import uvicorn_server

pytestmark = pytest.mark.skipif(not have_redis(), reason="redis-server is not installed")
STATE = {"source": "x*y + x", "values": {"x": 2, "y": 3}, "step": 0}
IDLE = 6.0  # seconds: rooms expire within a test's time


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, str, str]]:
    """(Redis URL, replica A, replica B)."""
    with redis_server() as url:
        env = {
            "GRADTRACE_REDIS_URL": url,
            "GRADTRACE_MAX_STUDENTS_PER_ROOM": "4",
            "GRADTRACE_ROOM_IDLE_SECONDS": str(IDLE),
        }
        with uvicorn_server(env) as a, uvicorn_server(env) as b:
            yield url, a.url, b.url


def test_states_and_presence_cross_replicas_in_seq_order(cluster: tuple[str, str, str]) -> None:
    _, a, b = cluster

    async def go() -> None:
        room = create_room(a, STATE)
        teacher = await Client.join(a, room, "instructor")
        assert (await teacher.expect("presence"))["students"] == 0
        on_b = []
        for n in (1, 2, 3):
            on_b.append(await Client.join(b, room))
            assert (await on_b[-1].expect("state"))["state"] == STATE
            assert (await teacher.expect("presence"))["students"] == n
        on_a = await Client.join(a, room)
        assert (await on_a.expect("state"))["seq"] == 0
        assert (await teacher.expect("presence"))["students"] == 4
        for step in (1, 2, 3):
            await teacher.send({"type": "state", "state": {**STATE, "step": step}})
        for member in (teacher, on_a, *on_b):
            got = [await member.expect("state") for _ in range(3)]
            assert [(m["seq"], m["state"]["step"]) for m in got] == [(1, 1), (2, 2), (3, 3)]
        info = json.loads(http("GET", f"{b}/api/rooms/{room['room']}")[2])
        assert info == {"room": room["room"], "students": 4, "state": {**STATE, "step": 3}}
        # full across both replicas: a fifth student is refused on either
        for there in (a, b):
            fifth = await Client.open(there, room["room"])
            await fifth.send({"type": "hello", "role": "student"})
            assert "max_students_per_room" in (await fifth.recv())["message"]
            assert await fifth.closed() == 1013  # try again later
        await on_b[0].close()
        assert (await teacher.expect("presence"))["students"] == 3
        late = await Client.join(b, room)  # the place is free again; it catches up at once
        assert await late.recv() == {"type": "state", "seq": 3, "state": {**STATE, "step": 3}}
        assert (await teacher.expect("presence"))["students"] == 4
        # a student on B cannot drive: nothing reaches A
        await late.send({"type": "state", "state": {"source": "evil"}})
        assert (await late.expect("error"))["code"] == "forbidden"
        assert [m for m in await teacher.silent(0.4) if m["type"] == "state"] == []
        end_room(a, room)

    run(go())


def test_a_question_asked_on_one_replica_is_answered_tallied_and_revealed_across(
    cluster: tuple[str, str, str],
) -> None:
    _, a, b = cluster

    async def go() -> None:
        room = create_room(a, STATE)
        teacher = await Client.join(a, room, "instructor")
        students = [await Client.join(b, room) for _ in range(3)]
        await teacher.send({"type": "ask", "id": "g1", "question": "x.grad after step 2?",
                            "kind": "value", "answer": 4})  # fmt: skip
        for s in students:
            got = await s.expect("ask")
            assert got["id"] == "g1" and "answer" not in got
        for s, value in zip(students, (4, 3, 3), strict=True):
            await s.send({"type": "answer", "id": "g1", "value": value})
            await s.expect("answered")
        await students[2].send({"type": "answer", "id": "g1", "value": 4})  # replaces its 3
        await students[2].expect("answered")
        counts = {}
        for _ in range(20):
            tally = await teacher.expect("tally")
            counts = tally["counts"]
            if counts == {"4": 2, "3": 1}:
                break
        assert counts == {"4": 2, "3": 1} and tally["total"] == 3
        await teacher.send({"type": "reveal", "id": "g1"})
        for member in (teacher, *students):
            r = await member.expect("reveal")
            assert r["answer"] == 4 and r["counts"] == {"4": 2, "3": 1} and r["total"] == 3
        await students[1].send({"type": "answer", "id": "g1", "value": 4})
        assert (await students[1].expect("error"))["code"] == "closed"
        end_room(b, room)  # ended from the other replica
        for member in (teacher, *students):
            assert (await member.expect("ended"))["reason"] == "ended"
            assert await member.closed() == 1000
        assert http("GET", f"{a}/api/rooms/{room['room']}")[0] == 404
        assert http("GET", f"{b}/r/{room['room']}")[0] == 404

    run(go())


def test_a_wrong_key_is_refused_on_any_replica(cluster: tuple[str, str, str]) -> None:
    _, a, b = cluster

    async def go() -> None:
        room = create_room(a)
        c = await Client.open(b, room["room"])
        await c.send({"type": "hello", "role": "instructor", "key": "x" * 32})
        assert (await c.recv())["code"] == "wrong_key"
        assert await c.closed() == 4403
        teacher = await Client.join(b, room, "instructor")  # the right key works there
        assert (await teacher.expect("state"))["seq"] == 0
        end_room(a, room)

    run(go())


def test_rooms_live_in_redis_with_the_idle_lifetime_and_expire(
    cluster: tuple[str, str, str],
) -> None:
    url, a, b = cluster
    r = redis.Redis.from_url(url, decode_responses=True)

    async def go() -> None:
        room = create_room(a, STATE)
        code = room["room"]
        student = await Client.join(b, room)
        key = f"gradtrace:room:{code}"
        assert r.hget(key, "state") == json.dumps(STATE, separators=(",", ":"))
        assert 0 < r.ttl(key) <= IDLE and 0 < r.ttl(key + ":students") <= IDLE
        assert r.zscore("gradtrace:rooms", code) is not None
        # the key itself is not stored: only its nonce, which binds it to this room
        assert room["instructor_key"] not in r.hvals(key)
        assert r.hget(key, "nonce") == codes.key_nonce(room["instructor_key"])
        got = await student.expect("ended", timeout=IDLE + 6)
        assert got["reason"] == "expired"
        assert not r.exists(key) and http("GET", f"{a}/api/rooms/{code}")[0] == 404

    try:
        run(go())
    finally:
        r.close()


def test_an_unreachable_redis_is_a_503_that_names_it_and_the_page_still_works() -> None:
    """Redis down (nothing listens on the URL's port): the class's addresses answer 503 with
    Retry-After and say why; the rest of the app does not depend on Redis."""
    env = {"GRADTRACE_REDIS_URL": "redis://127.0.0.1:9/0"}  # port 9 (discard): refused
    with uvicorn_server(env) as server:
        status, headers, body = http("POST", server.url + "/api/rooms", {})
        assert status == 503, body
        assert int(headers["retry-after"]) >= 1
        error = json.loads(body)["error"]
        assert error["code"] == "unavailable" and "GRADTRACE_REDIS_URL" in error["message"]
        assert http("GET", server.url + "/api/rooms/ABCDEF")[0] == 503
        assert http("GET", server.url + "/?source=x*y")[0] == 200
