"""Rooms (spec/classroom.md) against a real uvicorn, the rooms kept in its process: the HTTP
routes, and the socket's protocol with real websocket clients — states in seq order to every
member, a late joiner caught up at once, everything a student or a stranger may not do refused
without effect, limits named, questions asked, answered, tallied and revealed, and a client that
never reads holding up nobody."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.rooms.codes import ALPHABET
from tests.room_client import Client, create_room, end_room, http, run
from tests.uvicorn_proc import Server, uvicorn_server

STATE = {"source": "x*y + x", "values": {"x": 2, "y": 3}, "step": 0}


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """Default settings."""
    with uvicorn_server({}) as server:
        yield server.url


@pytest.fixture(scope="module")
def small_server() -> Iterator[Server]:
    """Tiny limits: 2 rooms, 2 students a room, 1.5 s of idleness, 5 messages a second, and
    a short patience with slow readers (8 queued messages, 0.5 s a send); 2 MB messages."""
    env = {
        "GRADTRACE_ROOM_QUEUE_MESSAGES": "8",
        "GRADTRACE_ROOM_SEND_SECONDS": "0.5",
        "GRADTRACE_MAX_ROOM_MESSAGE_BYTES": "2000000",
        "GRADTRACE_MAX_ROOMS": "2",
        "GRADTRACE_MAX_STUDENTS_PER_ROOM": "2",
        "GRADTRACE_ROOM_IDLE_SECONDS": "1.5",
        "GRADTRACE_ROOM_HELLO_SECONDS": "0.5",
        "GRADTRACE_ROOM_MESSAGES_PER_SECOND": "5",
        "GRADTRACE_ROOM_MESSAGE_BURST": "5",
        "GRADTRACE_ROOM_STUDENT_MESSAGES_PER_SECOND": "5",
        "GRADTRACE_ROOM_STUDENT_MESSAGE_BURST": "5",
    }
    with uvicorn_server(env) as server:
        yield server


@pytest.fixture(scope="module")
def small(small_server: Server) -> str:
    return small_server.url


# --- HTTP -----------------------------------------------------------------------------------


def test_a_room_has_a_short_unguessable_code_a_join_link_and_a_long_key(base: str) -> None:
    rooms = [create_room(base, STATE) for _ in range(12)]
    codes = {r["room"] for r in rooms}
    assert len(codes) == 12
    for r in rooms:
        assert re.fullmatch(f"[{ALPHABET}]{{6,8}}", r["room"]), r
        assert not set(r["room"]) & set("01OIL"), r  # no look-alikes
        assert r["join_url"] == f"/r/{r['room']}"
        assert len(base64.urlsafe_b64decode(r["instructor_key"] + "==")) * 8 >= 128
        assert r["expires_in"] == 7200
    status, headers, body = http("GET", f"{base}/api/rooms/{rooms[0]['room'].lower()}")
    assert status == 200 and headers["cache-control"] == "no-store"
    info = json.loads(body)
    assert info == {"room": rooms[0]["room"], "students": 0, "state": STATE}
    assert rooms[0]["instructor_key"] not in body.decode()
    status, headers, body = http("GET", f"{base}/api/rooms/ZZZZZZ")
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found"
    assert http("POST", f"{base}/api/rooms")[0] == 201  # no body: a room with no view yet


@pytest.mark.parametrize(
    ("state", "status", "words"),
    [
        ({"source": "x", "colour": "red"}, 422, "colour"),
        ({"source": {"nested": 1}}, 422, "state.source"),
        ({"values": {"x": "two"}}, 422, "values"),
        ({"source": "x" * 20_000}, 413, "max_room_message_bytes"),
    ],
)
def test_a_room_opening_at_a_bad_view_is_refused_naming_why(
    base: str, state: Any, status: int, words: str
) -> None:
    got, _, body = http("POST", base + "/api/rooms", {"state": state})
    assert got == status and words in json.loads(body)["error"]["message"], body


def test_the_join_link_is_the_page_at_the_room_s_view_and_a_gone_room_says_so(base: str) -> None:
    room = create_room(base, {"source": "a*b", "values": {"a": 4, "b": 5}, "present": True})
    status, _, body = http("GET", f"{base}/r/{room['room']}")
    page = body.decode()
    assert status == 200 and "a*b" in page
    found = re.search(r'<script type="application/json" id="state">(.*?)</script>', page, re.S)
    assert found is not None
    state = json.loads(found.group(1))
    assert state["query"]["source"] == "a*b" and state["query"]["values"] == {"a": 4, "b": 5}
    assert state["query"]["present"] is False  # a phone is no projector
    assert state["trace"]["grads"] == {"a": 5.0, "b": 4.0}
    zh = http("GET", f"{base}/r/{room['room']}?lang=zh")[2].decode()
    assert '<html lang="zh-CN"' in zh
    assert f'data-room="{room["room"]}"' in page  # the page's script joins the room by it
    assert end_room(base, room) == 200
    for code in (room["room"], "NOPE", "x" * 300):
        status, headers, body = http("GET", f"{base}/r/{code}")
        assert status == 404 and headers["content-type"].startswith("text/html"), code
        assert "No class with this code" in body.decode()
        assert "content-security-policy" in headers
    status, headers, _ = http("GET", f"{base}/r?code={room['room'].lower()}")
    assert status == 404  # followed the redirect to /r/CODE: gone


def test_the_qr_code_is_an_svg_of_the_absolute_join_link(base: str) -> None:
    room = create_room(base)
    status, headers, body = http("GET", f"{base}/api/rooms/{room['room']}/qr.svg")
    assert status == 200 and headers["content-type"].startswith("image/svg+xml")
    assert "max-age" in headers["cache-control"]
    svg = body.decode()
    assert svg.startswith("<svg") and 'viewBox="0 0 ' in svg and "<script" not in svg
    assert f"{base}/r/{room['room']}" in svg  # in its <title>
    assert http("GET", f"{base}/api/rooms/QQQQQQ/qr.svg")[0] == 404


def test_ending_needs_the_key(base: str) -> None:
    room = create_room(base)
    url = f"{base}/api/rooms/{room['room']}/end"
    assert http("POST", url)[0] == 403
    assert http("POST", url, headers={"X-Instructor-Key": "guess"})[0] == 403
    assert http("GET", f"{base}/api/rooms/{room['room']}")[0] == 200
    assert end_room(base, room) == 200
    assert http("GET", f"{base}/api/rooms/{room['room']}")[0] == 404
    assert end_room(base, room) == 404


# --- the socket -----------------------------------------------------------------------------


def test_states_reach_every_member_in_seq_order_and_a_late_joiner_gets_the_latest(
    base: str,
) -> None:
    async def go() -> None:
        room = create_room(base, STATE)
        teacher = await Client.join(base, room, "instructor")
        first = await teacher.expect("state")
        assert first == {"type": "state", "seq": 0, "state": STATE}
        students = [await Client.join(base, room) for _ in range(2)]
        for s in students:
            assert await s.expect("state") == first
        for step in (1, 2, 3):
            await teacher.send({"type": "state", "state": {**STATE, "step": step}})
        for member in (teacher, *students):
            seqs = [(m["seq"], m["state"]["step"]) for m in [await member.expect("state")
                                                              for _ in range(3)]]  # fmt: skip
            assert seqs == [(1, 1), (2, 2), (3, 3)]
        late = await Client.join(base, room)
        assert await late.recv() == {"type": "state", "seq": 3, "state": {**STATE, "step": 3}}
        await teacher.send({"type": "state", "state": {"values": "x=5"}})  # as an address has it
        assert (await late.recv())["state"] == {"values": {"x": 5.0}}
        info = json.loads(http("GET", f"{base}/api/rooms/{room['room']}")[2])
        assert info["students"] == 3 and info["state"] == {"values": {"x": 5.0}}
        await teacher.send({"type": "end"})
        for member in (teacher, *students):
            assert (await member.expect("state"))["seq"] == 4
        for member in (teacher, *students, late):
            assert await member.expect("ended") == {"type": "ended", "reason": "ended"}
            assert await member.closed() == 1000
        assert http("GET", f"{base}/api/rooms/{room['room']}")[0] == 404

    run(go())


def test_a_student_cannot_drive_and_what_is_refused_changes_nothing(base: str) -> None:
    async def go() -> None:
        room = create_room(base, STATE)
        teacher = await Client.join(base, room, "instructor")
        other = await Client.join(base, room)
        mallory = await Client.join(base, room)
        await other.expect("state")
        await mallory.expect("state")
        await teacher.silent(0.3)  # its state and the presence counts
        for msg in (
            {"type": "state", "state": {"source": "evil"}},
            {"type": "ask", "id": "q", "question": "?", "kind": "value"},
            {"type": "reveal", "id": "q"},
            {"type": "end"},
        ):
            await mallory.send(msg)
            err = await mallory.recv()
            assert err["type"] == "error" and err["code"] == "forbidden", err
        assert await other.silent(0.3) == [] and await teacher.silent(0.1) == []
        info = json.loads(http("GET", f"{base}/api/rooms/{room['room']}")[2])
        assert info["state"] == STATE and info["students"] == 2
        await teacher.send({"type": "state", "state": {"step": 1}})
        assert (await other.expect("state"))["seq"] == 1  # no seq was spent on the refusals
        await teacher.send({"type": "answer", "id": "q", "value": 1})
        assert (await teacher.expect("error"))["code"] == "forbidden"
        end_room(base, room)

    run(go())


def test_a_wrong_key_or_an_unknown_room_is_refused_and_closed(base: str) -> None:
    async def go() -> None:
        room = create_room(base)
        c = await Client.open(base, room["room"])
        await c.send({"type": "hello", "role": "instructor", "key": room["instructor_key"][:-1]})
        assert (await c.recv())["code"] == "wrong_key"
        assert await c.closed() == 4403
        c = await Client.open(base, "ABCDEF")
        await c.send({"type": "hello", "role": "student"})
        assert (await c.recv())["code"] == "not_found"
        assert await c.closed() == 4404
        c = await Client.open(base, room["room"])
        await c.send({"type": "state", "state": {}})  # not a hello
        assert (await c.recv())["code"] == "hello"
        assert await c.closed() == 4400
        end_room(base, room)

    run(go())


def test_malformed_and_oversized_messages_get_an_error_and_the_socket_stays(base: str) -> None:
    async def go() -> None:
        room = create_room(base, STATE)
        teacher = await Client.join(base, room, "instructor")
        student = await Client.join(base, room)
        await student.expect("state")
        await teacher.silent(0.2)
        cases = [
            ("not json", "malformed"),
            ("[1, 2]", "malformed"),
            ('{"kind": "state"}', "malformed"),
            ('{"type": "dance"}', "malformed"),
            ('{"type": "state", "state": {"step": NaN}}', "malformed"),
            (json.dumps({"type": "state", "state": {"colour": "red"}}), "malformed"),
            (json.dumps({"type": "state", "state": {"source": ["x"]}}), "malformed"),
            (json.dumps({"type": "state", "state": {"source": "x" * 17_000}}), "too_large"),
            ("[" * 5000 + "]" * 5000, "malformed"),
        ]
        for text, code in cases:
            await teacher.send(text)
            err = await teacher.recv()
            assert err["type"] == "error" and err["code"] == code, (text[:40], err)
            if code == "too_large":
                assert "over max_room_message_bytes (16384)" in err["message"]
        assert await student.silent(0.3) == []
        await teacher.send({"type": "ping"})
        assert await teacher.recv() == {"type": "pong"}
        end_room(base, room)

    run(go())


def test_presence_tells_the_instructor_how_many_students_are_connected(base: str) -> None:
    async def go() -> None:
        room = create_room(base)
        teacher = await Client.join(base, room, "instructor")
        assert (await teacher.expect("presence"))["students"] == 0
        a = await Client.join(base, room)
        assert (await teacher.expect("presence"))["students"] == 1
        b = await Client.join(base, room)
        assert (await teacher.expect("presence"))["students"] == 2
        await a.close()
        assert (await teacher.expect("presence"))["students"] == 1
        assert all(m["type"] != "presence" for m in await b.silent(0.2))  # instructors only
        second = await Client.join(base, room, "instructor")  # a second tab: not a student
        assert (await second.expect("presence"))["students"] == 1
        assert await teacher.silent(0.3) == []
        end_room(base, room)

    run(go())


def test_ask_answer_replace_tally_and_reveal(base: str) -> None:
    async def go() -> None:
        room = create_room(base, STATE)
        teacher = await Client.join(base, room, "instructor")
        s1, s2, s3 = [await Client.join(base, room) for _ in range(3)]
        ask = {"type": "ask", "id": "q1", "question": "x.grad after the next step?",
               "kind": "value", "answer": 4, "step": 2}  # fmt: skip
        await teacher.send(ask)
        for s in (s1, s2, s3):
            got = await s.expect("ask")
            assert "answer" not in got and "answer_key" not in got
            assert got["question"] == ask["question"] and got["step"] == 2
        assert (await teacher.expect("ask"))["answer_key"] == "4"
        await s1.send({"type": "answer", "id": "q1", "value": 3})
        assert await s1.expect("answered") == {"type": "answered", "id": "q1", "key": "3"}
        await s2.send({"type": "answer", "id": "q1", "value": 1 / 3})
        await s3.send({"type": "answer", "id": "q1", "value": "0.33333"})
        await s1.send({"type": "answer", "id": "q1", "value": 4.00001})  # replaces its 3
        await s1.expect("answered")
        await asyncio.sleep(0.25)
        tallies = [m for m in await teacher.silent(0.3) if m["type"] == "tally"]
        assert tallies and tallies[-1]["counts"] == {"0.3333": 2, "4": 1}
        assert tallies[-1]["total"] == 3
        assert all(m["type"] != "tally" for m in await s2.silent(0.1))  # instructors only
        await s2.send({"type": "answer", "id": "q0", "value": 1})
        assert (await s2.expect("error"))["code"] == "closed"
        await s2.send({"type": "answer", "id": "q1", "value": "many"})
        assert (await s2.expect("error"))["code"] == "malformed"
        await teacher.send({"type": "reveal", "id": "q1"})
        for member in (teacher, s1, s2, s3):
            r = await member.expect("reveal")
            assert r["answer"] == 4 and r["answer_key"] == "4" and r["total"] == 3
            assert r["counts"] == {"0.3333": 2, "4": 1}
        await s3.send({"type": "answer", "id": "q1", "value": 4})
        assert "revealed" in (await s3.expect("error"))["message"]
        # a choice: only its choices count, and a late joiner sees the open question
        choice = {"type": "ask", "id": "q2", "question": "Which node runs next?",
                  "kind": "choice", "choices": ["x", "y", "x*y"], "answer": "x*y"}  # fmt: skip
        await teacher.send(choice)
        late = await Client.join(base, room)
        assert (await late.expect("ask"))["choices"] == ["x", "y", "x*y"]
        await late.send({"type": "answer", "id": "q2", "value": "z"})
        assert (await late.expect("error"))["code"] == "malformed"
        await late.send({"type": "answer", "id": "q2", "value": "y"})
        assert (await late.expect("answered"))["key"] == "y"
        await teacher.send({"type": "ask", "id": "q3", "question": "?", "kind": "choice",
                            "choices": ["a"]})  # fmt: skip
        assert (await teacher.expect("error"))["code"] == "malformed"
        await teacher.send({"type": "reveal", "id": "q2"})
        r = await late.expect("reveal")
        assert r["counts"] == {"y": 1} and r["answer"] == "x*y"
        end_room(base, room)

    run(go())


def test_ending_by_http_closes_every_socket(base: str) -> None:
    async def go() -> None:
        room = create_room(base)
        teacher = await Client.join(base, room, "instructor")
        student = await Client.join(base, room)
        assert end_room(base, room) == 200
        for member in (teacher, student):
            assert (await member.expect("ended"))["reason"] == "ended"
            assert await member.closed() == 1000

    run(go())


def test_a_client_that_never_reads_holds_up_nobody_and_is_dropped(small_server: Server) -> None:
    base = small_server.url

    async def go() -> None:
        room = create_room(base, STATE)
        teacher = await Client.join(base, room, "instructor")
        follower = await Client.join(base, room)
        stalled = stalled_student(small_server, room["room"])
        deadline = time.monotonic() + 5
        while (await teacher.expect("presence"))["students"] != 2:
            assert time.monotonic() < deadline
        await follower.expect("state")
        # Send until the stalled one is closed (4408): the kernel's buffers take some MB first.
        worst, i, counts = 0.0, 0, [2]
        watch = asyncio.ensure_future(presence_counts(teacher, counts))
        while counts[-1] != 1:
            i += 1
            assert i <= 30, "the stalled student was never closed"
            big = base64.b64encode(os.urandom(750_000)).decode()  # 1 MB that never compresses
            await asyncio.sleep(0.25)  # within room_messages_per_second (5)
            sent = time.monotonic()
            await teacher.send({"type": "state", "state": {"source": big, "step": i}})
            got = await follower.expect("state")
            worst = max(worst, time.monotonic() - sent)
            assert got["seq"] == i and got["state"]["step"] == i
        watch.cancel()
        assert worst < 1.0, f"a state took {worst:.3f} s to reach a reading student"
        assert i > 1  # it was dropped for being slow, not at once
        stalled.close()
        end_room(base, room)

    run(go())


async def presence_counts(member: Client, counts: list[int]) -> None:
    while True:
        msg = await member.recv(30)
        if msg["type"] == "presence":
            counts.append(msg["students"])


def stalled_student(server: Server, code: str) -> socket.socket:
    """A student that says hello and then never reads (a small receive buffer, so that what
    the server sends piles up on its side at once)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((server.host, server.port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        (f"GET /api/rooms/{code}/ws HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n"
         f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
         "Sec-WebSocket-Version: 13\r\n\r\n").encode()
    )  # fmt: skip
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    payload = json.dumps({"type": "hello", "role": "student"}).encode()
    mask = os.urandom(4)
    s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask
              + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))  # fmt: skip
    return s


# --- limits (the small server) ----------------------------------------------------------------


def test_past_max_rooms_a_new_room_is_refused_naming_the_setting(small: str) -> None:
    made = []
    try:
        for _ in range(3):
            status, headers, body = http("POST", small + "/api/rooms", {})
            if status != 201:
                break
            made.append(json.loads(body))
        assert len(made) == 2 and status == 503, body
        assert "max_rooms" in json.loads(body)["error"]["message"]
        assert headers["retry-after"]
        end_room(small, made.pop())
        status, _, body = http("POST", small + "/api/rooms", {})
        assert status == 201
        made.append(json.loads(body))
    finally:
        for room in made:
            end_room(small, room)


def test_past_max_students_per_room_a_student_is_refused_naming_it(small: str) -> None:
    async def go() -> None:
        room = create_room(small)
        a, _ = await Client.join(small, room), await Client.join(small, room)
        third = await Client.open(small, room["room"])
        await third.send({"type": "hello", "role": "student"})
        err = await third.recv()
        assert err["code"] == "full" and "max_students_per_room" in err["message"]
        assert err["retry_after"] > 0  # told when to try again: never refused for good
        assert await third.closed() == 1013
        teacher = await Client.join(small, room, "instructor")  # instructors are not counted
        assert (await teacher.expect("presence"))["students"] == 2
        await a.close()
        await asyncio.sleep(0.2)
        assert await Client.join(small, room)  # a place again
        end_room(small, room)

    run(go())


def test_the_rate_is_bounded_and_a_flood_is_disconnected(small: str) -> None:
    async def go() -> None:
        room = create_room(small)
        c = await Client.join(small, room)
        await c.expect("state")
        for _ in range(7):
            await c.send({"type": "ping"})
        got = [await c.recv() for _ in range(7)]
        kinds = [m["type"] for m in got]
        assert kinds.count("pong") in (5, 6) and "error" in kinds, kinds
        err = next(m for m in got if m["type"] == "error")
        assert err["code"] == "rate" and "room_student_messages_per_second (5)" in err["message"]
        await asyncio.sleep(0.5)
        await c.send({"type": "ping"})
        assert await c.recv() == {"type": "pong"}  # the bucket refilled: still connected
        for _ in range(30):
            await c.send({"type": "ping"})
        assert await c.closed() == 4429
        end_room(small, room)

    run(go())


def test_without_a_hello_in_time_the_socket_is_closed(small: str) -> None:
    async def go() -> None:
        room = create_room(small)
        c = await Client.open(small, room["room"])
        err = await c.recv(3)
        assert err["code"] == "hello" and "room_hello_seconds" in err["message"]
        assert await c.closed() == 4400
        end_room(small, room)

    run(go())


def test_an_idle_room_expires_its_members_are_told_and_its_page_is_a_404(small: str) -> None:
    async def go() -> None:
        room = create_room(small, STATE)
        student = await Client.join(small, room)
        assert (await student.expect("ended", timeout=4))["reason"] == "expired"
        assert await student.closed() == 1000
        status, _, body = http("GET", f"{small}/r/{room['room']}")
        assert status == 404 and "No class with this code" in body.decode()
        assert http("GET", f"{small}/api/rooms/{room['room']}")[0] == 404
        assert http("POST", small + "/api/rooms", {})[0] == 201  # it no longer counts

    run(go())


@pytest.mark.browser
def test_the_page_s_csp_lets_it_open_its_own_room_socket(browser: Any, base: str) -> None:
    from tests.browser_kit import wait_js

    room = create_room(base, STATE)
    context = browser.new_context()
    try:
        page = context.new_page()
        violations: list[str] = []
        page.on("console", lambda m: violations.extend([m.text] if "policy" in m.text else []))
        page.goto(f"{base}/r/{room['room']}")
        csp = page.evaluate("() => document.readyState") and http("GET", f"{base}/r/x")[1]
        assert "connect-src 'self'" in csp["content-security-policy"]
        page.evaluate(
            """code => { window.got = []; window.blocked = 0;
               document.addEventListener("securitypolicyviolation", () => window.blocked++);
               const ws = new WebSocket(`ws://${location.host}/api/rooms/${code}/ws`);
               ws.onopen = () => ws.send(JSON.stringify({type: "hello", role: "student"}));
               ws.onmessage = e => window.got.push(JSON.parse(e.data).type); }""",
            room["room"],
        )
        assert wait_js(page, "window.got.length >= 2")
        assert page.evaluate("() => window.got.slice(0, 2)") == ["welcome", "state"]
        assert page.evaluate("() => window.blocked") == 0 and not violations
    finally:
        context.close()
    end_room(base, room)
