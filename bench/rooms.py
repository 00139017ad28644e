"""A class on loopback: one instructor, N students over 2 replicas sharing a real Redis, and the
instructor stepping. Measures, from the instructor's send to each student's receipt of that
state, the p50 and p99 (target: p99 ≤ 150 ms for 200 students), and the memory a connected
student costs the app processes (their RSS growth over the students connected, divided).

The second row is the same class beside a bot: one laptop (its own loopback address,
127.0.0.66) holding `--bot` sockets (250) in the room, each sending as fast as the welcome's
limits allow it (answers while a question is open, pings otherwise). The bot runs in a process
of its own (`python -m bench.rooms bot …`), so that its sending does not slow the students'
clients that measure. A question is open for the whole class: every student answers it once
(4) while the bot answers 7 and more, and at the end every student's answer must be counted
once, with `GET /api/rooms/CODE` answered 200 throughout.

    python -m bench.rooms                 # 200 students, 20 steps, then beside a 250-socket bot
    python -m bench.rooms --students 50 --steps 10 --bot 0

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
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

from bench import load
from bench.measure import median, ms, percentile

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
STEP_GAP = 0.25  # seconds between the instructor's steps (a brisk lecture; under the rate)
TARGET_P99 = 0.150
BOT_SOCKETS = 250
BOT_ADDRESS = "127.0.0.66"  # the bot's laptop: an address of its own (all of 127/8 is loopback)
STUDENT_ADDRESS = "127.0.0.1"
PROGRAM = {"source": "x1 = 2\nx2 = 0\nw1 = -3\nw2 = 1\nb = 6.8813735870195432\n"
           "n = x1*w1 + x2*w2 + b\no = tanh(n)", "values": {}}  # fmt: skip
QUESTION = {"type": "ask", "id": "bench-q", "question": "x.grad after the next step?",
            "kind": "value", "answer": 4}  # fmt: skip


def _ping(port: int) -> bool:
    try:
        with socket.create_connection((load.HOST, port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def redis_server(port: int | None = None) -> Iterator[str]:
    """A real redis-server on a free loopback port (or `port`), in a temporary directory,
    keeping nothing on disk: yields its URL (the tests use it too: tests/redis_proc.py)."""
    with redis_process(port) as (url, _):
        yield url


@contextlib.contextmanager
def redis_process(port: int | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """redis_server, and its process (a test pauses it, or kills it and starts another)."""
    port = port or load.free_port()
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
            yield f"redis://{load.HOST}:{port}/0", proc
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


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as err:
        return int(err.code)
    except OSError:
        return 0


# --- the bot -----------------------------------------------------------------------------------


async def _bot(ports: list[int], code: str, sockets: int, address: str) -> None:
    """`sockets` students from `address`, each sending at the rate its welcome allows (a
    little under it), until stdin closes; then one JSON line of what happened."""
    import websockets

    stats = {"connected": 0, "refused": 0, "sent": 0, "errors": 0, "closed": 0, "answered": 0}
    question: list[str] = []
    stop = asyncio.Event()

    async def one(i: int) -> None:
        url = f"ws://{load.HOST}:{ports[i % len(ports)]}/api/rooms/{code}/ws"
        try:
            c = await websockets.connect(url, local_addr=(address, 0), open_timeout=30,
                                         compression=None, max_size=None)  # fmt: skip
        except Exception:
            stats["refused"] += 1
            return
        await c.send(
            json.dumps({"type": "hello", "role": "student", "id": secrets.token_urlsafe(9)})
        )
        try:
            welcome = json.loads(await asyncio.wait_for(c.recv(), 30))
        except Exception:
            stats["refused"] += 1
            return
        if welcome.get("type") != "welcome":
            stats["refused"] += 1
            return
        stats["connected"] += 1
        rate = float(welcome.get("limits", {}).get("messages_per_second", 1.0)) * 0.95

        async def read() -> None:
            async for raw in c:
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind == "ask":
                    question[:] = [msg["id"]]
                elif kind == "error":
                    stats["errors"] += 1
                elif kind == "answered":
                    stats["answered"] += 1

        reader = asyncio.ensure_future(read())
        await asyncio.sleep(random.random() / rate)
        try:
            while not stop.is_set() and not reader.done():
                if question:
                    value = 7 + random.randrange(50)
                    await c.send(json.dumps({"type": "answer", "id": question[0], "value": value}))
                else:
                    await c.send('{"type":"ping"}')
                stats["sent"] += 1
                await asyncio.sleep(1 / rate)
        except websockets.ConnectionClosed:
            pass
        if reader.done():
            stats["closed"] += 1
        reader.cancel()
        await c.close()

    tasks = [asyncio.ensure_future(one(i)) for i in range(sockets)]
    loop = asyncio.get_running_loop()
    while sum(stats[k] for k in ("connected", "refused")) < sockets:
        await asyncio.sleep(0.05)
    started = time.monotonic()
    print(json.dumps({"ready": stats["connected"]}), flush=True)
    await loop.run_in_executor(None, sys.stdin.read)  # until the bench closes our stdin
    stop.set()
    took = time.monotonic() - started
    await asyncio.wait(tasks, timeout=5)
    print(json.dumps({**stats, "seconds": took, "per_second": stats["sent"] / max(took, 1e-9)}),
          flush=True)  # fmt: skip


@contextlib.contextmanager
def bot(
    ports: list[int], code: str, sockets: int, address: str = BOT_ADDRESS
) -> Iterator[dict[str, Any]]:
    """The bot in a process of its own, connected; on leaving, stopped, and what it did is put
    into the dict yielded."""
    args = [sys.executable, "-m", "bench.rooms", "bot", code, "--ports", ",".join(map(str, ports)),
            "--sockets", str(sockets), "--address", address]  # fmt: skip
    proc = subprocess.Popen(
        args, cwd=load.ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    out: dict[str, Any] = {}
    try:
        assert proc.stdout is not None and proc.stdin is not None
        out.update(json.loads(proc.stdout.readline() or "{}"))
        yield out
        proc.stdin.close()
        out.update(json.loads(proc.stdout.readline() or "{}"))
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=15)


# --- the class ----------------------------------------------------------------------------------


async def _class(
    ports: list[int], pids: list[int], students: int, steps: int, deflate: bool, bot_sockets: int
) -> dict[str, Any]:
    import websockets

    room = _create(ports[0])
    code, key = room["room"], room["instructor_key"]

    def url(port: int) -> str:
        return f"ws://{load.HOST}:{port}/api/rooms/{code}/ws"

    teacher = await websockets.connect(url(ports[0]))
    await teacher.send(json.dumps({"type": "hello", "role": "instructor", "key": key}))
    asking = bot_sockets > 0
    if asking:
        await teacher.send(json.dumps(QUESTION))
    with contextlib.ExitStack() as stack:
        botted = stack.enter_context(bot(ports, code, bot_sockets)) if bot_sockets else {}
        others = int(botted.get("ready", 0))  # the bot's members, in the count too
        out = await _students(
            ports, pids, teacher, url, students, steps, deflate, asking, code, others
        )
        stack.close()
    await teacher.close()
    return {**out, "bot": botted}


async def _students(
    ports: list[int], pids: list[int], teacher: Any, url: Any, students: int, steps: int,
    deflate: bool, asking: bool, code: str, others: int = 0,
) -> dict[str, Any]:  # fmt: skip
    import websockets

    rss_before = sum(load.rss_mb(pid) for pid in pids)
    got: list[dict[int, float]] = [{} for _ in range(students)]
    answered: list[bool] = [False] * students
    dropped: list[int] = []
    conns = []
    for i in range(students):
        c = await websockets.connect(
            url(ports[i % len(ports)]), open_timeout=30, compression="deflate" if deflate else None,
            local_addr=(STUDENT_ADDRESS, 0),
        )  # fmt: skip
        await c.send(
            json.dumps({"type": "hello", "role": "student", "id": secrets.token_urlsafe(9)})
        )
        conns.append(c)

    async def receive(i: int, c: Any) -> None:
        try:
            async for raw in c:
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind == "state":
                    got[i][msg["seq"]] = time.perf_counter()
                elif kind == "ask":
                    await c.send(json.dumps({"type": "answer", "id": msg["id"], "value": 4}))
                elif kind == "answered":
                    answered[i] = True
        except websockets.ConnectionClosed as closed:
            dropped.append(closed.rcvd.code if closed.rcvd else 1006)

    readers = [asyncio.ensure_future(receive(i, c)) for i, c in enumerate(conns)]
    seen, tally = 0, {}
    info = f"http://{load.HOST}:{ports[1 % len(ports)]}/api/rooms/{code}"
    statuses: list[int] = []
    sent: dict[int, float] = {}
    teacher_lost = ""
    rss_after = float("nan")
    try:
        deadline = time.monotonic() + 60
        while seen < students + others and time.monotonic() < deadline:  # every one counted
            msg = json.loads(await asyncio.wait_for(teacher.recv(), 60))
            if msg.get("type") == "presence":
                seen = msg["students"]
        await asyncio.sleep(1.0)
        rss_after = sum(load.rss_mb(pid) for pid in pids)
        for step in range(1, steps + 1):
            t = time.perf_counter()
            await teacher.send(json.dumps({"type": "state", "state": {**PROGRAM, "step": step}}))
            while True:  # the instructor's own copy says which seq the server gave it
                msg = json.loads(await asyncio.wait_for(teacher.recv(), 10))
                if msg.get("type") == "tally":
                    tally = msg["counts"]
                if msg.get("type") == "state":
                    sent[msg["seq"]] = t
                    break
            statuses.append(await asyncio.get_running_loop().run_in_executor(None, _status, info))
            await asyncio.sleep(STEP_GAP)
        await asyncio.sleep(1.0)
        if asking:  # the last tally, once every student's answer is in
            end = time.monotonic() + 10
            while time.monotonic() < end and tally.get("4", 0) < sum(answered):
                with contextlib.suppress(TimeoutError):
                    msg = json.loads(await asyncio.wait_for(teacher.recv(), 1))
                    if msg.get("type") == "tally":
                        tally = msg["counts"]
    except (websockets.ConnectionClosed, TimeoutError) as exc:  # the instructor was dropped
        teacher_lost = type(exc).__name__ + ": " + str(exc)[:120]
    latencies = [g[seq] - t for g in got for seq, t in sent.items() if seq in g]
    # per step: the first student's receipt, and the last one's (the fan-out's spread)
    first = [min((g[seq] for g in got if seq in g), default=t) - t for seq, t in sent.items()]
    last = [max((g[seq] for g in got if seq in g), default=t) - t for seq, t in sent.items()]
    missed = students * steps - len(latencies)
    for r in readers:
        r.cancel()
    await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)
    return {
        "students": students,
        "connected": seen - others,
        "steps": steps,
        "p50": median(latencies),
        "p99": percentile(latencies, 99),
        "max": max(latencies, default=float("nan")),
        "missed": missed,
        "dropped": len(dropped),
        "first_p50": median(first),
        "last_p50": median(last),
        "worst_step": max(last, default=float("nan")),
        "per_step_ms": [round(1000 * x, 1) for x in last],
        "rss_before_mb": rss_before,
        "rss_after_mb": rss_after,
        "kb_per_student": (rss_after - rss_before) * 1024 / max(1, seen - others),
        "room_info_not_200": sum(1 for s in statuses if s != 200),
        "instructor_lost": teacher_lost,
        "answered": sum(answered) if asking else None,
        "counted": tally.get("4", 0) if asking else None,
    }


def classroom(
    students: int = 200, steps: int = 20, deflate: bool = False, bot: int = 0
) -> dict[str, Any]:
    """The class on 2 replicas (one worker each) sharing one Redis; with `bot` > 0, the same
    again beside a bot of that many sockets (under "under_bot")."""
    if shutil.which(REDIS_SERVER) is None:
        return {"skipped": "redis-server is not installed"}
    out = _run(students, steps, deflate, 0)
    if bot:
        out["under_bot"] = _run(students, steps, deflate, bot)
    return out


def _run(students: int, steps: int, deflate: bool, bot_sockets: int) -> dict[str, Any]:
    with redis_server() as url, contextlib.ExitStack() as stack:
        env = {"GRADTRACE_REDIS_URL": url}
        replicas = [stack.enter_context(load.server(env=env)) for _ in range(2)]
        ports, pids = [p for p, _ in replicas], [pid for _, pid in replicas]
        out = asyncio.run(_class(ports, pids, students, steps, deflate, bot_sockets))
        return {**out, "deflate": deflate, "bot_sockets": bot_sockets}


def _met(r: dict[str, Any]) -> bool:
    ok = r["p99"] <= TARGET_P99 and not r["missed"] and r["connected"] == r["students"]
    if r.get("bot_sockets"):
        ok = ok and not r["dropped"] and not r["room_info_not_200"] and not r["instructor_lost"]
        ok = ok and r["counted"] == r["students"] == r["answered"]
    return bool(ok)


def rows(r: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """The lines of `python -m bench`'s table: the class, and the class beside the bot."""
    out = [row(r)]
    if "under_bot" in r:
        out.append(row(r["under_bot"]))
    return out


def row(r: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """One line of `python -m bench`'s table."""
    n, bot_sockets = r.get("students", 200), r.get("bot_sockets", 0)
    what = (
        f"classroom: 1 instructor, {n} students over 2 replicas and Redis, "
        f"{r.get('steps', 20)} steps"
    )
    target = "p99 ≤ 150 ms (send → each student's receipt); memory per student reported"
    if bot_sockets:
        what += f", beside a {bot_sockets}-socket bot sending at its allowed rate"
        target = (
            "p99 ≤ 150 ms, no state missed, nobody dropped, every student's answer counted once"
        )
    if "skipped" in r:
        return (what, target, r["skipped"], "—", "–")
    measured = (
        f"p50 {ms(r['p50'])} · p99 {ms(r['p99'])} · max {ms(r['max'])} · {r['missed']} missed · "
        f"{r['kb_per_student']:.0f} kB per connected student"
        f"{' (permessage-deflate)' if r.get('deflate') else ''} (RSS of both replicas "
        f"{r['rss_before_mb']:.0f} → {r['rss_after_mb']:.0f} MB)"
    )
    if bot_sockets:
        b = r.get("bot", {})
        measured = (
            f"p50 {ms(r['p50'])} · p99 {ms(r['p99'])} · max {ms(r['max'])} · "
            f"{r['missed']} of {n * r['steps']} states missed · {r['dropped']} students dropped · "
            f"{r['counted']} of {r['answered']} answers counted · GET /api/rooms/CODE not 200: "
            f"{r['room_info_not_200']} · bot: {b.get('connected', 0)} sockets in, "
            f"{b.get('per_second', 0):.0f} messages/s, {b.get('errors', 0)} refused"
        )
        if r.get("instructor_lost"):
            measured += f" · the instructor was dropped ({r['instructor_lost']})"
    return (what, target, measured, "—", "✅ met" if _met(r) else "❌ missed")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bot"]:
        p = argparse.ArgumentParser(prog="python -m bench.rooms bot")
        p.add_argument("code")
        p.add_argument("--ports", required=True)
        p.add_argument("--sockets", type=int, default=BOT_SOCKETS)
        p.add_argument("--address", default=BOT_ADDRESS)
        a = p.parse_args(argv[1:])
        asyncio.run(_bot([int(x) for x in a.ports.split(",")], a.code, a.sockets, a.address))
        return 0
    parser = argparse.ArgumentParser(prog="python -m bench.rooms", description=__doc__)
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--bot", type=int, default=BOT_SOCKETS, help="the bot's sockets (0: none)")
    parser.add_argument("--deflate", action="store_true", help="students offer permessage-deflate")
    args = parser.parse_args(argv)
    result = classroom(args.students, args.steps, args.deflate, args.bot)
    print(json.dumps(result, indent=1))
    for line in rows(result):
        print("| " + " | ".join(line) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
