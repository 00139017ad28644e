"""A class that faults do not end (issue 21), on the deployment as compose runs it: two real
replicas, a real Redis and real nginx with deploy/nginx.conf (tests/room_deploy.py). A replica
is killed mid-question and started again; Redis is paused (SIGSTOP) for 10 s, stalled while
other requests come, and restarted empty as compose runs it. The clients behave as the page
does (tests/room_client.PageStudent, PageTeacher): they keep their member id over reconnects,
send an answer again until it is stored, and the instructor's hello carries the room as its
page holds it, so that a room Redis lost is put back.

Each scenario prints what it measured (MEASURED …; pytest -s shows it).
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.nginx_proc import have_nginx
from tests.redis_proc import have_redis
from tests.room_client import PageStudent, PageTeacher, create_room, http, measured, run
from tests.room_deploy import Deployment, deployment

pytestmark = [
    pytest.mark.skipif(not have_nginx(), reason="nginx is not installed (Debian: nginx-light)"),
    pytest.mark.skipif(not have_redis(), reason="redis-server is not installed"),
]
STATE = {"source": "a = x*y\nb = a + x", "values": {"x": 2, "y": 3}, "step": 0}
TEACHER = "127.0.0.20"
NAT = "127.0.0.10"


@pytest.fixture(scope="module")
def deployed() -> Iterator[Deployment]:
    with deployment() as d:
        yield d


async def until(test: Any, timeout: float, what: str) -> float:
    """Wait until test() holds; the seconds it took."""
    t = time.monotonic()
    while not test():
        if time.monotonic() - t > timeout:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.05)
    return time.monotonic() - t


async def a_class(url: str, n: int, qid: str) -> tuple[PageTeacher, list[PageStudent]]:
    """An instructor, `n` students behind a NAT, a question open, and every answer stored:
    student i answers i % 3."""
    room = create_room(url, STATE, address=TEACHER)
    teacher = PageTeacher(url, room, address=TEACHER).start()
    await teacher.ask({"type": "ask", "id": qid, "question": "x.grad after the next step?",
                       "kind": "value", "answer": 4})  # fmt: skip
    students = [PageStudent(url, room["room"], address=NAT).start() for _ in range(n)]
    await until(lambda: all(s.question == qid for s in students), 30, "every student asked")
    for i, s in enumerate(students):
        s.answer(i % 3)
    await until(lambda: all(s.acked == s.value for s in students), 20, "every answer stored")
    await until(lambda: teacher.total == n, 10, f"the tally counts {n}")
    return teacher, students


async def done(teacher: PageTeacher, students: list[PageStudent]) -> None:
    for s in students:
        await s.stop()
    await teacher.stop()


def test_a_stalled_redis_never_holds_up_requests_that_are_not_about_a_room(
    deployed: Deployment,
) -> None:
    """Redis stopped (SIGSTOP) while 40 room requests and 8 unrelated ones come at once: the
    room requests wait in room_requests_in_flight places (4 a replica) or are answered 503 at
    once, so the unrelated ones find the slots they need."""
    url = deployed.url
    room = create_room(url, STATE, address=TEACHER)
    info = f"{url}/api/rooms/{room['room']}"
    svg = url + "/api/svg?" + urllib.parse.urlencode({"source": "x*y + x", "step": 1})
    assert http("GET", svg)[0] == 200  # drawn once: what follows asks the same (cheap) again
    deployed.redis.pause()
    try:

        def timed(url: str, address: str) -> tuple[int, float, str]:
            t = time.perf_counter()
            status, headers, _ = http("GET", url, address=address, timeout=30)
            return status, time.perf_counter() - t, headers.get("retry-after", "")

        with ThreadPoolExecutor(48) as pool:
            rooms = [pool.submit(timed, info, f"127.0.2.{i // 4 + 1}") for i in range(40)]
            time.sleep(0.2)  # the room requests first: they would hold the slots
            others = [pool.submit(timed, svg, f"127.0.3.{i // 4 + 1}") for i in range(8)]
            room_out = [f.result() for f in rooms]
            other_out = [f.result() for f in others]
    finally:
        deployed.redis.resume()
    statuses = sorted({s for s, _, _ in room_out})
    measured(
        "Redis stalled: 40 room requests and 8 unrelated",
        unrelated_statuses=sorted({s for s, _, _ in other_out}),
        unrelated_slowest_s=round(max(t for _, t, _ in other_out), 3),
        room_statuses=statuses,
        room_slowest_s=round(max(t for _, t, _ in room_out), 3),
    )
    assert all(s == 200 for s, _, _ in other_out), other_out
    assert max(t for _, t, _ in other_out) < 2.0, other_out
    assert statuses == [503], room_out  # the room's answers: 503, told when to retry
    assert all(int(r) >= 1 for _, _, r in room_out), room_out
    assert max(t for _, t, _ in room_out) < 6, room_out  # 2 × room_redis_seconds, and a margin
    assert http("GET", info)[0] == 200  # and after it, as before


def test_redis_paused_for_10_s_loses_no_answer_and_says_none_was_stored_till_it_was(
    deployed: Deployment,
) -> None:
    url = deployed.url

    async def go() -> dict[str, Any]:
        teacher, students = await a_class(url, 30, "pause")
        deployed.redis.pause()
        paused = time.monotonic()
        try:
            for i, s in enumerate(students):  # every student changes the answer meanwhile
                s.answer(10 + i % 4)
            await asyncio.sleep(5)
            shown_sent = sum(1 for s in students if s.acked is not None)
            await asyncio.sleep(max(0.0, 10 - (time.monotonic() - paused)))
        finally:
            deployed.redis.resume()
        took = await until(
            lambda: all(s.acked == s.value for s in students), 30, "every answer stored"
        )
        want = {str(10 + k): 30 // 4 + (k < 30 % 4) for k in range(4)}  # 8, 8, 7, 7
        await until(lambda: teacher.tally == want, 10, "the tally has every changed answer")
        out = {"shown_sent_while_paused": shown_sent, "stored_after_resume_s": round(took, 2),
               "tally": teacher.tally, "resends": sum(s.ref for s in students) - 60,
               "student_closes": sum(len(s.closes) for s in students),
               "teacher_closes": list(teacher.closes)}  # fmt: skip
        await done(teacher, students)
        return out

    out = run(go(), timeout=120)
    measured("Redis paused 10 s", **out)
    assert out["shown_sent_while_paused"] == 0, out  # never "Sent" for what was not stored
    assert out["student_closes"] == 0 and out["teacher_closes"] == [], out


def test_a_replica_killed_and_started_again_mid_question_counts_each_member_once(
    deployed: Deployment,
) -> None:
    url = deployed.url
    victim = deployed.replicas[1]

    async def go() -> dict[str, Any]:
        teacher, students = await a_class(url, 40, "kill")
        victim.kill()
        killed = time.monotonic()
        await asyncio.sleep(1.0)
        victim.start()  # on the same port: nginx sends to it again
        dropped = [s for s in students if s.closes]
        back = await until(lambda: all(s.welcomes == 1 + len(s.closes) for s in students), 30,
                           "every dropped student back")  # fmt: skip
        await until(lambda: all(s.acked == s.value for s in students), 20, "answers stored")
        seq = await teacher.step({**STATE, "step": 1})
        await until(lambda: all(seq in s.states for s in students), 10, "the next state")
        await asyncio.sleep(0.5)
        out = {"dropped_students": len(dropped), "teacher_dropped": len(teacher.closes),
               "all_back_s": round(time.monotonic() - killed, 2), "rejoin_s": round(back, 2),
               "tally_total": teacher.total, "members": len(students),
               "presence": teacher.students}  # fmt: skip
        await done(teacher, students)
        return out

    out = run(go(), timeout=120)
    measured("a replica killed mid-question", **out)
    assert out["dropped_students"] > 0, out  # the victim had some of the class
    assert out["tally_total"] == out["members"] == 40, out  # tally = members
    assert out["presence"] == 40, out


def test_redis_restarted_empty_mid_class_the_class_goes_on(deployed: Deployment) -> None:
    url = deployed.url

    async def go() -> dict[str, Any]:
        teacher, students = await a_class(url, 30, "restart")
        code = teacher.room["room"]
        await teacher.step({**STATE, "step": 1})
        deployed.redis.restart_empty()
        t = time.monotonic()
        seq = await teacher.step({**STATE, "step": 2}, timeout=20)
        await until(lambda: all(max(s.states) >= seq for s in students), 20, "the next state")
        on = time.monotonic() - t
        await until(lambda: teacher.total == 30, 20, "the answers sent again")
        answers = time.monotonic() - t
        status, _, body = http("GET", f"{url}/api/rooms/{code}")
        out = {"class_on_after_s": round(on, 2), "answers_back_after_s": round(answers, 2),
               "tally_total": teacher.total, "ended": [s.ended for s in students if s.ended],
               "student_closes": sum(len(s.closes) for s in students),
               "teacher_rejoined": teacher.lives - 1, "room_info": status,
               "restored_step": body.decode()}  # fmt: skip
        await done(teacher, students)
        return out

    out = run(go(), timeout=120)
    measured("Redis restarted empty", **{k: v for k, v in out.items() if k != "restored_step"})
    assert out["class_on_after_s"] < 10, out  # the class goes on within 10 s
    assert out["ended"] == [] and out["student_closes"] == 0, out  # nobody told "expired"
    assert out["tally_total"] == 30 and out["teacher_rejoined"] >= 1, out
    assert out["room_info"] == 200 and '"step":2' in out["restored_step"], out
