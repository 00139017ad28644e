"""A class on loopback: one instructor, N students over 2 replicas sharing a real Redis, and the
instructor stepping. Measures, from the instructor's send to each student's receipt of that
state, the p50 and p99 (target: p99 ≤ 150 ms for 200 students), and the memory a connected
student costs the app processes (their RSS growth over the students connected, divided).

    python -m bench.rooms                 # 200 students, 20 steps
    python -m bench.rooms --students 50 --steps 10

The students are `websockets` clients in this process, half on each replica. They offer no
permessage-deflate, as the replicas of docker-compose.yml accept none (--ws-per-message-deflate
false: a state is a few hundred bytes, and compressing it for each socket cost the replicas
3–5× the CPU and 45 kB a student); `--deflate` measures with it. Every process shares the
machine's cores, the clients included, so the numbers are an upper bound of what the server
alone adds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

from bench import load
from bench.measure import median, ms, percentile

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
STEP_GAP = 0.25  # seconds between the instructor's steps (a brisk lecture; under the rate)
TARGET_P99 = 0.150
PROGRAM = {"source": "x1 = 2\nx2 = 0\nw1 = -3\nw2 = 1\nb = 6.8813735870195432\n"
           "n = x1*w1 + x2*w2 + b\no = tanh(n)", "values": {}}  # fmt: skip


def _ping(port: int) -> bool:
    try:
        with socket.create_connection((load.HOST, port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A real redis-server on a free loopback port, in a temporary directory, keeping nothing
    on disk: yields its URL (the tests use it too: tests/redis_proc.py)."""
    port = load.free_port()
    with tempfile.TemporaryDirectory() as tmp:
        args = [REDIS_SERVER, "--port", str(port), "--bind", load.HOST, "--save", "",
                "--appendonly", "no", "--dir", tmp, "--loglevel", "warning"]  # fmt: skip
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while not _ping(port):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start (exit {proc.poll()})")
                time.sleep(0.02)
            yield f"redis://{load.HOST}:{port}/0"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _create(port: int) -> dict[str, Any]:
    req = urllib.request.Request(
        f"http://{load.HOST}:{port}/api/rooms",
        data=json.dumps({"state": PROGRAM}).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return dict(json.loads(r.read()))


async def _class(
    ports: list[int], pids: list[int], students: int, steps: int, deflate: bool
) -> dict[str, Any]:
    import websockets

    room = _create(ports[0])
    code, key = room["room"], room["instructor_key"]

    def url(port: int) -> str:
        return f"ws://{load.HOST}:{port}/api/rooms/{code}/ws"

    teacher = await websockets.connect(url(ports[0]))
    await teacher.send(json.dumps({"type": "hello", "role": "instructor", "key": key}))
    rss_before = sum(load.rss_mb(pid) for pid in pids)
    got: list[dict[int, float]] = [{} for _ in range(students)]
    conns = []
    for i in range(students):
        c = await websockets.connect(
            url(ports[i % len(ports)]), open_timeout=30, compression="deflate" if deflate else None
        )
        await c.send('{"type":"hello","role":"student"}')
        conns.append(c)

    async def receive(i: int, c: Any) -> None:
        async for raw in c:
            msg = json.loads(raw)
            if msg.get("type") == "state":
                got[i][msg["seq"]] = time.perf_counter()

    readers = [asyncio.ensure_future(receive(i, c)) for i, c in enumerate(conns)]
    seen = 0
    deadline = time.monotonic() + 60
    while seen < students and time.monotonic() < deadline:  # every student counted
        msg = json.loads(await asyncio.wait_for(teacher.recv(), 60))
        if msg.get("type") == "presence":
            seen = msg["students"]
    await asyncio.sleep(1.0)
    rss_after = sum(load.rss_mb(pid) for pid in pids)
    sent: dict[int, float] = {}
    for step in range(1, steps + 1):
        t = time.perf_counter()
        await teacher.send(json.dumps({"type": "state", "state": {**PROGRAM, "step": step}}))
        while True:  # the instructor's own copy says which seq the server gave it
            msg = json.loads(await asyncio.wait_for(teacher.recv(), 10))
            if msg.get("type") == "state":
                sent[msg["seq"]] = t
                break
        await asyncio.sleep(STEP_GAP)
    await asyncio.sleep(1.0)
    latencies = [g[seq] - t for g in got for seq, t in sent.items() if seq in g]
    # per step: the first student's receipt, and the last one's (the fan-out's spread)
    first = [min(g[seq] for g in got if seq in g) - t for seq, t in sent.items()]
    last = [max(g[seq] for g in got if seq in g) - t for seq, t in sent.items()]
    missed = students * steps - len(latencies)
    for r in readers:
        r.cancel()
    await asyncio.gather(*(c.close() for c in conns), teacher.close(), return_exceptions=True)
    return {
        "students": students,
        "connected": seen,
        "steps": steps,
        "p50": median(latencies),
        "p99": percentile(latencies, 99),
        "max": max(latencies, default=float("nan")),
        "missed": missed,
        "first_p50": median(first),
        "last_p50": median(last),
        "worst_step": max(last, default=float("nan")),
        "rss_before_mb": rss_before,
        "rss_after_mb": rss_after,
        "kb_per_student": (rss_after - rss_before) * 1024 / max(1, seen),
    }


def classroom(students: int = 200, steps: int = 20, deflate: bool = False) -> dict[str, Any]:
    """The bench's `rooms` row: 2 replicas (one worker each) sharing one Redis."""
    if shutil.which(REDIS_SERVER) is None:
        return {"skipped": "redis-server is not installed"}
    with redis_server() as url, contextlib.ExitStack() as stack:
        env = {"GRADTRACE_REDIS_URL": url}
        replicas = [stack.enter_context(load.server(env=env)) for _ in range(2)]
        ports, pids = [p for p, _ in replicas], [pid for _, pid in replicas]
        out = asyncio.run(_class(ports, pids, students, steps, deflate))
        return {**out, "deflate": deflate}


def row(r: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """The line of `python -m bench`'s table."""
    what = (
        f"classroom: 1 instructor, {r.get('students', 200)} students over 2 replicas and Redis, "
        f"{r.get('steps', 20)} steps"
    )
    target = "p99 ≤ 150 ms (send → each student's receipt); memory per student reported"
    if "skipped" in r:
        return (what, target, r["skipped"], "—", "–")
    measured = (
        f"p50 {ms(r['p50'])} · p99 {ms(r['p99'])} · max {ms(r['max'])} · {r['missed']} missed · "
        f"{r['kb_per_student']:.0f} kB per connected student"
        f"{' (permessage-deflate)' if r.get('deflate') else ''} (RSS of both replicas "
        f"{r['rss_before_mb']:.0f} → {r['rss_after_mb']:.0f} MB)"
    )
    ok = r["p99"] <= TARGET_P99 and not r["missed"] and r["connected"] == r["students"]
    return (what, target, measured, "—", "✅ met" if ok else "❌ missed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rooms", description=__doc__)
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--deflate", action="store_true", help="students offer permessage-deflate")
    args = parser.parse_args(argv)
    result = classroom(args.students, args.steps, args.deflate)
    print(json.dumps(result, indent=1))
    print("| " + " | ".join(row(result)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
