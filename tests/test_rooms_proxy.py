"""docker-compose.yml's proxy, run for real: deploy/nginx.conf in a real nginx in front of two
real app replicas (uvicorn with the compose command's options) sharing a real redis-server.
Docker cannot run here, so the config is rendered for a bare machine: the same file with only
what must differ replaced, each replacement below, each required to match exactly once.

Everything goes through nginx: pages, images, the join link's host, a class's sockets spread
over both replicas (least_conn), five steps in seq order, presence, a question, the end."""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.nginx_proc import Nginx, have_nginx
from tests.redis_proc import have_redis
from tests.room_client import Client, create_room, end_room, http, run
from tests.room_deploy import Replica, compose_uvicorn_options
from tests.room_deploy import deployment as deployed

pytestmark = [
    pytest.mark.skipif(not have_nginx(), reason="nginx is not installed (Debian: nginx-light)"),
    pytest.mark.skipif(not have_redis(), reason="redis-server is not installed"),
]
ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "deploy" / "nginx.conf"
COMPOSE = ROOT / "docker-compose.yml"
STATE = {"source": "x*y + x", "values": {"x": 2, "y": 3}, "step": 0}
STUDENTS = 10


@pytest.fixture(scope="module")
def deployment() -> Iterator[tuple[Nginx, list[Replica]]]:
    """(nginx, [replica A, replica B]) sharing one Redis (tests/room_deploy.py)."""
    options = compose_uvicorn_options()
    assert "--proxy-headers" in options and "--forwarded-allow-ips=127.0.0.1" in options, options
    with deployed() as d:
        yield d.nginx, d.replicas


def test_nginx_takes_the_config_without_a_complaint(
    deployment: tuple[Nginx, list[Replica]],
) -> None:
    """`nginx -t` passed (or the fixture failed); neither it nor nginx's start warns, with a
    container's open-file limit (tests/nginx_proc._as_in_docker)."""
    nginx, _ = deployment
    fine = ("syntax is ok", "test is successful")
    assert [ln for ln in nginx.checked.splitlines() if not ln.endswith(fine)] == [], nginx.checked
    assert not re.search(r"\[(warn|error|crit|alert|emerg)\]", nginx.started), nginx.started


def test_pages_images_and_the_body_limit_come_through_the_proxy(
    deployment: tuple[Nginx, list[Replica]],
) -> None:
    nginx, (a, _) = deployment
    status, headers, body = http("GET", nginx.url + "/?source=x*y")
    assert status == 200 and headers["content-type"].startswith("text/html"), body[:300]
    assert http("GET", nginx.url + "/healthz")[0] == 200
    query = "/api/svg?" + urllib.parse.urlencode({"source": "tanh(x*w + b)", "step": 2})
    status, headers, svg = http("GET", nginx.url + query)
    assert status == 200 and headers["content-type"].startswith("image/svg+xml"), svg[:300]
    assert svg == http("GET", a.url + query)[2]  # byte for byte what a replica sends
    # client_max_body_size is the app's max_body_bytes (1 MiB): nginx refuses past it
    status, _, body = http("POST", nginx.url + "/api/rooms", {"state": {"source": "x" * 1_100_000}})
    assert status == 413 and b"<center>nginx" in body, body[:300]  # nginx's page, not the app's


def test_the_join_link_carries_the_host_and_scheme_the_client_used(
    deployment: tuple[Nginx, list[Replica]],
) -> None:
    """The QR code's link is made from the request's address: behind nginx that is the
    client's Host with its port (proxy_set_header Host $http_host) and nginx's scheme (a
    client's own X-Forwarded-Proto is replaced, not passed on to a replica that trusts it)."""
    nginx, _ = deployment
    room = create_room(nginx.url, STATE)
    code = room["room"]
    assert room["join_url"] == f"/r/{code}"
    for host, spoof in ((f"127.0.0.1:{nginx.port}", {}), ("class.example:8080", {}),
                        ("localhost:8080", {"X-Forwarded-Proto": "https"})):  # fmt: skip
        status, _, svg = http("GET", f"{nginx.url}/api/rooms/{code}/qr.svg",
                              headers={"Host": host, **spoof})  # fmt: skip
        assert status == 200, svg[:300]
        title = re.search(r"<title>(.*?)</title>", svg.decode()).group(1)  # type: ignore[union-attr]
        assert title == f"gradtrace {code}: http://{host}/r/{code}", (host, spoof, title)
    assert http("GET", f"{nginx.url}/r/{code}")[0] == 200
    assert end_room(nginx.url, room) == 200


def _tcp_states(ports: set[int]) -> Counter[str]:
    """Loopback TCP connections to or from `ports`, by state (the kernel's /proc/net/tcp:
    01 established, 06 time-wait)."""
    states: Counter[str] = Counter()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, remote, state = line.split()[1:4]
        if {int(local.split(":")[1], 16), int(remote.split(":")[1], 16)} & ports:
            states[state] += 1
    return states


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux's /proc/net/tcp")
def test_requests_reuse_keep_alive_connections_to_the_replicas(
    deployment: tuple[Nginx, list[Replica]],
) -> None:
    """upstream keepalive with no Connection header on a plain request: twenty requests through
    nginx open a connection or two to the replicas and leave them open, not twenty closed."""
    nginx, replicas = deployment
    ports = {r.port for r in replicas}
    before = _tcp_states(ports)
    for _ in range(20):
        assert http("GET", nginx.url + "/healthz")[0] == 200
    after = _tcp_states(ports)
    assert after["06"] - before["06"] < 5, (before, after)  # not one closed per request
    assert after["01"] >= 2, (before, after)  # idle, kept for the next (both ends listed)


def _ws_upstreams(nginx: Nginx, code: str, count: int) -> Counter[str]:
    """Which replica served each of the room's sockets, from nginx's access log (a socket's
    line is written when it closes: wait for all `count`)."""
    deadline = time.monotonic() + 5
    while True:
        lines = [ln for ln in nginx.access_log() if f" /api/rooms/{code}/ws " in ln]
        if len(lines) >= count or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert all(ln.startswith("101 GET ") for ln in lines), lines  # every one was upgraded
    assert len(lines) == count, lines
    return Counter(ln.rsplit("upstream=", 1)[1] for ln in lines)


def test_a_class_through_the_proxy_spreads_over_both_replicas_and_follows_in_order(
    deployment: tuple[Nginx, list[Replica]],
) -> None:
    nginx, replicas = deployment

    async def go() -> str:
        room = create_room(nginx.url, STATE)
        teacher = await Client.join(nginx.url, room, "instructor")
        assert (await teacher.expect("state"))["seq"] == 0
        students = []
        for _ in range(STUDENTS):
            students.append(await Client.join(nginx.url, room))
            assert await students[-1].recv() == {"type": "state", "seq": 0, "state": STATE}
        count = 0
        while count != STUDENTS:  # presence counts every student, whichever replica has it
            count = (await teacher.expect("presence"))["students"]
        info = json.loads(http("GET", f"{nginx.url}/api/rooms/{room['room']}")[2])
        assert info["students"] == STUDENTS
        for step in range(1, 6):
            await teacher.send({"type": "state", "state": {**STATE, "step": step}})
        for member in (teacher, *students):
            got = [await member.expect("state") for _ in range(5)]
            assert [(m["seq"], m["state"]["step"]) for m in got] == [(n, n) for n in range(1, 6)]
        await teacher.send({"type": "ask", "id": "q1", "question": "x.grad after step 2?",
                            "kind": "value", "answer": 4})  # fmt: skip
        for n, s in enumerate(students):
            asked = await s.expect("ask")
            assert asked["id"] == "q1" and "answer" not in asked
            await s.send({"type": "answer", "id": "q1", "value": 4 if n < 6 else 3})
            await s.expect("answered")
        want = {"4": 6, "3": 4}
        tally: dict[str, int] = {}
        while tally != want:
            tally = (await teacher.expect("tally"))["counts"]
        await teacher.send({"type": "reveal", "id": "q1"})
        for member in (teacher, *students):
            r = await member.expect("reveal")
            assert r["answer"] == 4 and r["counts"] == want and r["total"] == STUDENTS
        assert end_room(nginx.url, room) == 200
        for member in (teacher, *students):
            assert (await member.expect("ended"))["reason"] == "ended"
            assert await member.closed() == 1000
        assert http("GET", f"{nginx.url}/api/rooms/{room['room']}")[0] == 404
        return str(room["room"])

    code = run(go())
    served = _ws_upstreams(nginx, code, 1 + STUDENTS)
    ports = {f"127.0.0.1:{r.port}" for r in replicas}
    assert set(served) == ports, served
    # least_conn: held sockets spread by count, so neither replica has most of the class
    assert min(served.values()) >= (1 + STUDENTS) // 2 - 1, served
