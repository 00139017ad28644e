"""The bounds a room keeps against one client (issue 21), each on a real uvicorn: members, not
sockets, are counted; a member's sockets and an address's members are bounded, and a student
past a bound is told when to retry; undriven rooms end in minutes; unknown codes are bounded
per address; numbers no class uses are a protocol error and the socket stays; answers the
class must not see before the reveal stay on the instructor's side; keys are the server's
own; and the uvicorn bounds a container needs (frame size, open files, one trusted hop) are
the same in scripts/serve, the Dockerfile and docker-compose.yml, and hold.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
import yaml

from bench import load
from tests.room_client import Client, create_room, end_room, http, measured, run
from tests.room_deploy import Replica, compose_uvicorn_options
from tests.uvicorn_proc import Server, uvicorn_server

ROOT = Path(__file__).resolve().parent.parent
STATE = {"source": "a = x*y\nb = a + x", "values": {"x": 2, "y": 3}, "step": 0}
ASK = {"type": "ask", "id": "q1", "question": "x.grad after the next step?", "kind": "value",
       "answer": 4, "about": {"topic": "grad", "name": "x", "step": 0},
       "hidden": {"named": [{"value": 3, "name": "assign"}]}}  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """Small bounds: 3 members an address, 2 sockets a member, undriven rooms end after 1.5 s,
    5 unknown codes a minute."""
    env = {
        "GRADTRACE_ROOM_MEMBERS_PER_ADDRESS": "3",
        "GRADTRACE_ROOM_SOCKETS_PER_MEMBER": "2",
        "GRADTRACE_ROOM_ORPHAN_SECONDS": "1.5",
        "GRADTRACE_ROOM_CODE_MISSES_PER_MINUTE": "5",
        "GRADTRACE_ROOM_SECRET": "a test's secret",
    }
    with uvicorn_server(env) as s:
        yield s


async def driven(base: str, address: str = "127.0.0.20") -> tuple[dict[str, Any], Client]:
    room = create_room(base, STATE, address=address)
    teacher = await Client.join(base, room, "instructor")
    return room, teacher


def test_a_member_s_sockets_and_reconnects_count_once_and_a_rejoin_gets_its_answer(
    server: Server,
) -> None:
    base = server.url

    async def go() -> dict[str, Any]:
        room, teacher = await driven(base)
        await teacher.send(ASK)
        first = await Client.join(base, room, address="127.0.0.31")
        member = first.id
        second = await Client.join(base, room, member=member, address="127.0.0.31")
        assert second.id == member  # the same member, a second tab
        third = await Client.open(base, room["room"], address="127.0.0.31")
        await third.send({"type": "hello", "role": "student", "id": member})
        refused = await third.recv()
        code = await third.closed()
        assert refused["code"] == "full" and "room_sockets_per_member" in refused["message"]
        assert refused["retry_after"] > 0 and code == 1013
        await first.send({"type": "answer", "id": "q1", "value": 3, "ref": "a"})
        assert await first.expect("answered") == {"type": "answered", "id": "q1", "key": "3",
                                                  "ref": "a"}  # fmt: skip
        await second.send({"type": "answer", "id": "q1", "value": 4, "ref": 7})
        assert (await second.expect("answered"))["ref"] == 7
        await first.close()
        await second.close()
        for i in range(50):  # a phone on a bad line: connect, answer, drop, fifty times
            c = await Client.join(base, room, member=member, address="127.0.0.31")
            if i == 0:  # a rejoin is told its answer, so the page shows it as stored
                assert (await c.expect("ask"))["id"] == "q1"
                assert await c.expect("answered") == {"type": "answered", "id": "q1", "key": "4"}
            await c.send({"type": "answer", "id": "q1", "value": 4})
            await c.expect("answered")
            await c.close()
        tally: dict[str, Any] = {}
        while tally.get("total") != 1 or tally.get("counts") != {"4": 1}:
            tally = await teacher.expect("tally")
        await teacher.send({"type": "reveal", "id": "q1"})
        revealed = await teacher.expect("reveal")
        end_room(base, room)
        return {"tally": tally["counts"], "reveal_total": revealed["total"]}

    out = run(go(), timeout=60)
    measured("one member, 2 tabs and 50 reconnects", **out)
    assert out == {"tally": {"4": 1}, "reveal_total": 1}


def test_an_address_holds_its_share_of_a_room_and_the_next_one_is_told_to_retry(
    server: Server,
) -> None:
    base = server.url

    async def go() -> None:
        room, teacher = await driven(base)
        held = [await Client.join(base, room, address="127.0.0.41") for _ in range(3)]
        late = await Client.open(base, room["room"], address="127.0.0.41")
        await late.send({"type": "hello", "role": "student"})
        err = await late.recv()
        assert err["code"] == "full" and "room_members_per_address" in err["message"]
        assert err["retry_after"] > 0 and await late.closed() == 1013
        other = await Client.join(base, room, address="127.0.0.42")  # another address: in
        assert (await other.expect("state"))["seq"] == 0
        await held[0].close()
        await asyncio.sleep(0.2)
        again = await Client.join(base, room, address="127.0.0.41")  # a place again
        assert (await again.expect("state"))["seq"] == 0
        end_room(base, room)
        await teacher.close()

    run(go())


def test_a_room_nobody_drives_ends_in_minutes(server: Server) -> None:
    """room_orphan_seconds (1.5 s here; 300 by default): a room made and never driven ends;
    a driven one lives on; once its instructor leaves, it ends and its students are told."""
    base = server.url

    async def go() -> None:
        undriven = create_room(base, address="127.0.0.43")
        room, teacher = await driven(base)
        student = await Client.join(base, room, address="127.0.0.44")
        await asyncio.sleep(2.2)
        assert http("GET", f"{base}/api/rooms/{undriven['room']}", address="127.0.0.45")[0] == 404
        assert http("GET", f"{base}/api/rooms/{room['room']}")[0] == 200
        t = time.monotonic()
        await teacher.close()
        assert (await student.expect("ended", timeout=5))["reason"] == "expired"
        measured("an undriven room ends", after_s=round(time.monotonic() - t, 2), setting=1.5)

    run(go())


def test_unknown_codes_are_bounded_per_address(server: Server) -> None:
    base = server.url
    room = create_room(base, address="127.0.0.46")
    guesser = "127.0.0.47"
    guesses = ("AAAAAA", "BBBBBB", "CCCCCC", "DDDDDD", "EEEEEE", "FFFFFF")
    statuses = [http("GET", f"{base}/api/rooms/{code}", address=guesser)[0] for code in guesses]
    assert statuses == [404] * 5 + [429], statuses
    status, headers, body = http("GET", f"{base}/api/rooms/{room['room']}", address=guesser)
    assert status == 429 and int(headers["retry-after"]) >= 1  # a real code too: no hint
    assert "room_code_misses_per_minute" in json.loads(body)["error"]["message"]
    status, _, page = http("GET", f"{base}/r/{room['room']}", address=guesser)
    assert status == 429 and "Too many unknown codes" in page.decode()

    async def socket_refused() -> dict[str, Any]:
        c = await Client.open(base, room["room"], address=guesser)
        err = await c.recv()
        assert await c.closed() == 1013
        return err

    err = run(socket_refused())
    assert err["code"] == "busy" and err["retry_after"] > 0
    assert http("GET", f"{base}/api/rooms/{room['room']}", address="127.0.0.48")[0] == 200


def test_numbers_no_class_uses_are_refused_and_the_socket_stays(server: Server) -> None:
    base = server.url
    big = "9" * 400
    status, _, body = http(
        "POST", base + "/api/rooms", {"state": {"source": "x", "step": int(big)}},
        address="127.0.0.49",
    )  # fmt: skip
    assert status == 422 and "state.step" in json.loads(body)["error"]["message"], body

    async def go() -> list[dict[str, Any]]:
        room, teacher = await driven(base, "127.0.0.49")
        await teacher.send(ASK)
        s = await Client.join(base, room, address="127.0.0.49")
        got = []
        for text in ('{"type": "answer", "id": "q1", "value": ' + big + "}",
                     '{"type": "answer", "id": "q1", "value": 1e400}',
                     '{"type": "answer", "id": "q1", "value": "' + big + '"}'):  # fmt: skip
            await s.send(text)
            got.append(await s.expect("error"))
        await s.send({"type": "ping"})
        assert (await s.expect("pong"))["type"] == "pong"  # still open
        await teacher.send('{"type": "state", "state": {"step": ' + big + "}}")
        got.append(await teacher.expect("error"))
        await teacher.send({"type": "ping"})
        assert (await teacher.expect("pong"))["type"] == "pong"
        end_room(base, room)
        return got

    errors = run(go())
    assert [e["code"] for e in errors] == ["malformed"] * 4, errors
    assert "30 digits" in errors[0]["message"] and "30 digits" in errors[3]["message"]


def test_what_says_which_answers_are_wrong_waits_for_the_reveal(server: Server) -> None:
    base = server.url

    async def go() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        room, teacher = await driven(base, "127.0.0.50")
        s = await Client.join(base, room, address="127.0.0.50")
        await teacher.send(ASK)
        public, full = await s.expect("ask"), await teacher.expect("ask")
        await teacher.send({"type": "reveal", "id": "q1"})
        revealed = await s.expect("reveal")
        end_room(base, room)
        return public, full, revealed

    public, full, revealed = run(go())
    assert "hidden" not in public and "answer" not in public and "named" not in json.dumps(public)
    assert public["about"] == ASK["about"]
    assert full["hidden"] == ASK["hidden"] and full["answer"] == 4
    assert revealed["hidden"] == ASK["hidden"] and revealed["answer"] == 4


def test_a_key_drives_only_its_own_room_and_only_the_server_makes_keys(server: Server) -> None:
    base = server.url

    async def go() -> list[int]:
        a, b = create_room(base, address="127.0.0.51"), create_room(base, address="127.0.0.51")
        closes = []
        for code, key in ((a["room"], b["instructor_key"]), (a["room"], "A" * 32),
                          (a["room"], a["instructor_key"][:-2] + "AA")):  # fmt: skip
            c = await Client.open(base, code)
            await c.send({"type": "hello", "role": "instructor", "key": key})
            closes.append(await c.closed())
        # a room that never was cannot be made by a restore with a key of one's own
        c = await Client.open(base, "ZZZZZZ")
        await c.send({"type": "hello", "role": "instructor", "key": "B" * 32,
                      "restore": {"seq": 3, "state": STATE}})  # fmt: skip
        closes.append(await c.closed())
        # an ended room is not put back
        end_room(base, a)
        c = await Client.open(base, a["room"])
        await c.send({"type": "hello", "role": "instructor", "key": a["instructor_key"],
                      "restore": {"seq": 3, "state": STATE}})  # fmt: skip
        closes.append(await c.closed())
        end_room(base, b)
        return closes

    assert run(go()) == [4403, 4403, 4403, 4404, 4404]


def test_with_room_secret_a_restarted_process_takes_its_rooms_back() -> None:
    """Without Redis a room lives in the process; with room_secret set, the instructor's page
    puts it back after a restart (same code, key, view and question), and students rejoin."""
    env = {"GRADTRACE_ROOM_SECRET": "kept across restarts"}
    replica = Replica(load.free_port(), env, [])
    replica.start()
    try:
        room = create_room(replica.url, STATE)
        replica.stop()
        replica.start()

        async def go() -> tuple[dict[str, Any], dict[str, Any]]:
            restore = {"seq": 4, "state": {**STATE, "step": 2}, "revealed": False,
                       "question": {k: v for k, v in ASK.items() if k != "type"}}  # fmt: skip
            teacher = await Client.join(replica.url, room, "instructor", restore=restore)
            state = await teacher.expect("state")
            student = await Client.join(replica.url, room)
            asked = await student.expect("ask")
            await teacher.close()
            await student.close()
            return state, asked

        state, asked = run(go())
        assert state == {"type": "state", "seq": 5, "state": {**STATE, "step": 2}}
        assert asked["id"] == "q1" and "hidden" not in asked
    finally:
        replica.stop()


# --- the uvicorn bounds a container needs -----------------------------------------------------


def _options(args: list[str]) -> list[str]:
    """uvicorn's options in a command, less the address and workers (the launcher's)."""
    out, skip = [], False
    for a in args[args.index("app.main:app") + 1 :]:
        if skip:
            skip = False
        elif a in ("--host", "--port", "--workers"):
            skip = True
        elif a.startswith("--") and a.split("=")[0] not in ("--host", "--port", "--workers"):
            out.append(a)
    return out


def serve_options() -> list[str]:
    text = (ROOT / "scripts" / "serve").read_text().replace("\\\n", " ")
    line = next(ln for ln in text.splitlines() if "-m uvicorn app.main:app" in ln)
    return _options(shlex.split(line))


def dockerfile_options() -> list[str]:
    cmd = next(ln for ln in (ROOT / "Dockerfile").read_text().splitlines() if ln.startswith("CMD"))
    return _options(json.loads(cmd[3:]))


def test_the_same_uvicorn_bounds_in_scripts_serve_the_dockerfile_and_compose() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    raw_compose = _options(compose["services"]["app"]["command"])
    for name, options in (("scripts/serve", serve_options()), ("Dockerfile", dockerfile_options()),
                          ("docker-compose.yml", raw_compose)):  # fmt: skip
        for must in ("--ws-max-size=65536", "--ws-per-message-deflate=false", "--no-access-log",
                     "--proxy-headers"):  # fmt: skip
            assert must in options, (name, must, options)
        trusted = [a for a in options if a.startswith("--forwarded-allow-ips=")]
        assert len(trusted) == 1 and re.fullmatch(r"--forwarded-allow-ips=[\d.]+", trusted[0]), (
            name, trusted)  # fmt: skip
    # compose: the one address trusted is nginx's, and the files a replica may open
    assert "--forwarded-allow-ips=172.28.0.2" in raw_compose
    assert compose["services"]["proxy"]["networks"]["classroom"]["ipv4_address"] == "172.28.0.2"
    assert compose["services"]["app"]["ulimits"]["nofile"] == {"soft": 65536, "hard": 65536}
    assert "X-Forwarded-For $remote_addr;" in (ROOT / "deploy" / "nginx.conf").read_text()


def _limits(pid: int) -> tuple[int, int]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open-file limit")


def test_open_files_a_container_allows_hold_a_class_and_http_never_starves() -> None:
    """Under a container's 1024 open files that cannot be raised (soft = hard = 1024), room
    sockets stop at 1024 less room_files_reserve (told to retry, 1013) and pages still
    answer; where the hard limit allows, the app raises its own soft limit (open_files)."""
    env = {"GRADTRACE_MAX_STUDENTS_PER_ROOM": "2000"}  # a lecture hall, so files bind first
    replica = Replica(load.free_port(), env, serve_options(), open_files=(1024, 1024))
    replica.start()
    try:
        assert _limits(replica.pid) == (1024, 1024)
        room = create_room(replica.url, STATE)

        async def go() -> dict[str, Any]:
            held, refused = [], 0
            for i in range(820):  # five schools of 200 (room_members_per_address is 250)
                c = await Client.open(replica.url, room["room"], address=f"127.0.4.{i // 200}")
                try:  # refused at once, maybe before the hello is out: its error, then 1013
                    await c.send({"type": "hello", "role": "student"})
                    first = await c.recv()
                except websockets.ConnectionClosed as closed:
                    first = {"type": "closed", "code": closed.rcvd.code if closed.rcvd else 0}
                if first["type"] == "welcome":
                    held.append(c)
                    continue
                if first["type"] == "error":
                    assert first["code"] == "busy" and "open_files" in first["message"]
                    first = {"code": await c.closed()}
                assert first["code"] == 1013, first
                refused += 1
            page = http("GET", replica.url + "/?source=x*y")[0]
            info = http("GET", f"{replica.url}/api/rooms/{room['room']}")
            for c in held:
                await c.close()
            return {"held": len(held), "refused": refused, "page": page, "info": info[0],
                    "students": json.loads(info[2])["students"]}  # fmt: skip

        out = run(go(), timeout=120)
    finally:
        replica.stop()
    measured("1024 open files, 820 sockets", **out)
    assert out["held"] == 1024 - 256, out  # the open files less room_files_reserve
    assert out["refused"] == 820 - out["held"] and out["page"] == 200 and out["info"] == 200
    raised = Replica(load.free_port(), {}, serve_options(), open_files=(1024, 8192))
    raised.start()
    try:
        assert _limits(raised.pid) == (8192, 8192)  # open_files (65536), up to the hard limit
    finally:
        raised.stop()


def test_a_frame_past_ws_max_size_is_refused_before_it_is_read() -> None:
    """scripts/serve's options (the Dockerfile's and compose's too): 20 sockets sending
    15 MB frames are closed (1009) before the server holds the frames (uvicorn's default of
    16 MiB let 60 such sockets take +2.8 GB)."""
    replica = Replica(load.free_port(), {}, serve_options())
    replica.start()
    try:
        room = create_room(replica.url, STATE)
        before = load.rss_mb(replica.pid)

        async def one() -> int | None:
            c = await Client.open(replica.url, room["room"])
            await c.send({"type": "hello", "role": "student"})
            await c.recv()
            try:
                await c.conn.send("x" * 15_000_000)
                await c.recv(10)
            except websockets.ConnectionClosed as closed:
                return closed.rcvd.code if closed.rcvd else None
            except (OSError, TimeoutError):
                return None
            return 0

        async def go() -> list[int | None]:
            return list(await asyncio.gather(*(one() for _ in range(20))))

        codes = run(go(), timeout=120)
        after = load.rss_mb(replica.pid)
    finally:
        replica.stop()
    measured("20 sockets × 15 MB frames", closes=sorted(set(map(str, codes))),
             rss_before_mb=round(before), rss_after_mb=round(after))  # fmt: skip
    assert all(c == 1009 for c in codes), codes  # "message too big"
    assert after - before < 200, (before, after)


def test_compose_s_uvicorn_options_are_the_ones_the_deployment_tests_run() -> None:
    options = compose_uvicorn_options()
    assert "--ws-max-size=65536" in options and "--forwarded-allow-ips=127.0.0.1" in options
    with socket.socket() as s:  # loopback addresses other than 127.0.0.1 (the clients') bind
        s.bind(("127.0.0.66", 0))
