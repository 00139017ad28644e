"""A classroom on loopback: a real uvicorn, an open-loop load of new programs, and memory.

The client is a few lines of asyncio speaking HTTP/1.1 over keep-alive connections, so it
costs the two cores little. Open loop: request k is due at k/rate seconds whatever happened to
the earlier ones, and its latency counts from when it was due (a late server cannot hide its
queue by slowing the client down). Every target is on 127.0.0.1, every loop is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.measure import median, percentile

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
TIMEOUT = 10.0  # seconds for one request before it counts as an error


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(
    workers: int = 1,
    env: dict[str, str] | None = None,
    app: str = "app.main:app",
    extra: Sequence[str] = (),
) -> Iterator[tuple[int, int]]:
    """uvicorn serving `app` (app.main:app; the tests also serve tests.server_hooks:app) on a
    free loopback port, with `env` added to this environment and `extra` uvicorn options (such
    as docker-compose.yml's --proxy-headers): yields (port, pid). The one place the bench and
    the tests start a real server."""
    port = free_port()
    args = [sys.executable, "-m", "uvicorn", app, "--host", HOST, "--port", str(port)]
    args += ["--no-access-log", "--log-level", "warning", *extra]
    if workers > 1:
        args += ["--workers", str(workers)]
    # A file, not a pipe: a server that logs much would block on a full pipe nobody reads.
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below, after the server
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://{HOST}:{port}/healthz", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    err = log.read().decode("utf-8", "replace")[-2000:]
                    raise RuntimeError(f"uvicorn did not start: {err}") from None
                time.sleep(0.05)
        yield port, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def worker_pids(pid: int) -> list[int]:
    """The processes answering requests: the children of a multi-worker uvicorn (not its
    Graphviz helpers), or the process itself."""
    kids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and b"graphviz_helper.py" not in cmdline:
            kids.append(int(entry.name))
    return [k for k in kids if _is_python(k)] or [pid]


def _is_python(pid: int) -> bool:
    try:
        return b"python" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# --- the client ----------------------------------------------------------------------------------


def _closed_before_answer(exc: BaseException) -> bool:
    """The connection was gone before the answer's first byte (not a timeout)."""
    return isinstance(exc, ConnectionError | BrokenPipeError) and not isinstance(exc, TimeoutError)


class Client:
    """Keep-alive HTTP/1.1 connections to one port, opened as needed."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post_json(self, path: str, payload: Any) -> tuple[int, int]:
        body = json.dumps(payload).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Accept-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        return await self.send(head + body)

    async def send(self, request: bytes) -> tuple[int, int]:
        """(status, body bytes) of one request on an idle connection or a new one. As a
        browser does, a request on a kept-alive connection that the server had already closed
        (its keep-alive timeout) is sent again once on a new connection."""
        reused = bool(self.idle)
        conn = self.idle.pop() if reused else await asyncio.open_connection(HOST, self.port)
        reader, writer = conn
        try:
            writer.write(request)
            status, size, keep = await asyncio.wait_for(self._answer(reader), TIMEOUT)
        except (ConnectionError, OSError) as exc:
            writer.close()
            if reused and _closed_before_answer(exc):
                self.close()  # the other idle connections are as old
                return await self.send(request)
            raise
        except BaseException:
            writer.close()
            raise
        if keep:
            self.idle.append(conn)
        else:
            writer.close()
        return status, size

    @staticmethod
    async def _answer(reader: asyncio.StreamReader) -> tuple[int, int, bool]:
        status_line = await reader.readline()
        if not status_line:
            raise ConnectionError("closed")
        status = int(status_line.split()[1])
        length, chunked, keep = 0, False, True
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding" and "chunked" in value:
                chunked = True
            elif name == "connection" and value == "close":
                keep = False
        if not chunked:
            await reader.readexactly(length)
            return status, length, keep
        total = 0
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            total += size
            if size == 0:
                return status, total, keep

    def close(self) -> None:
        for _, writer in self.idle:
            writer.close()
        self.idle.clear()


async def open_loop(
    port: int, rate: float, seconds: float, make: Callable[[int], Any], start: int = 0
) -> dict[str, Any]:
    """`rate` requests a second for `seconds`, each due at its time whatever came before."""
    client = Client(port)
    latencies: list[float] = []
    errors: dict[str, int] = {}
    loop = asyncio.get_running_loop()
    t0 = loop.time() + 0.05
    n = int(rate * seconds)

    async def fire(k: int) -> None:
        due = t0 + k / rate
        try:
            status, _ = await client.post_json("/api/render", {"source": make(start + k)})
        except (TimeoutError, OSError, ConnectionError, ValueError) as exc:
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            return
        if status != 200:
            errors[str(status)] = errors.get(str(status), 0) + 1
            return
        latencies.append(loop.time() - due)

    tasks = []
    for k in range(n):
        delay = t0 + k / rate - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(fire(k)))
    await asyncio.gather(*tasks)
    took = loop.time() - t0
    client.close()
    done = len(latencies)
    return {
        "rate": rate,
        "sent": n,
        "ok": done,
        "errors": errors,
        "p50": median(latencies),
        "p99": percentile(latencies, 99),
        "max": max(latencies) if latencies else float("nan"),
        "throughput": done / took if took else 0.0,
    }


def sustains(result: dict[str, Any], p99: float = 0.100) -> bool:
    return (
        not result["errors"]
        and result["ok"] == result["sent"]
        and result["p99"] <= p99
        and result["throughput"] >= 0.95 * result["rate"]
    )


def warm(port: int, make: Callable[[int], Any], n: int = 40) -> None:
    """Start every worker (imports, the Graphviz helper) before anything is measured."""

    async def go() -> None:
        clients = [Client(port) for _ in range(4)]
        for i in range(0, n, 4):
            await asyncio.gather(
                *(
                    c.post_json("/api/render", {"source": make(10**7 + i + j)})
                    for j, c in enumerate(clients)
                )
            )
        for c in clients:
            c.close()

    asyncio.run(go())


def classroom(workers: int, quick: bool, make: Callable[[int], Any]) -> dict[str, Any]:
    """100 new programs a second (200 students, one every 2 s each); then rising rates until
    one is not sustained (p99 ≤ 100 ms, no errors, ≥ 95% answered); then the most answered in a
    second with 8 requests always in flight (closed loop)."""
    seconds = 3.0 if quick else 15.0
    step = 2.0 if quick else 5.0
    with server(workers) as (port, _):
        warm(port, make, 40 * workers)
        at_100 = asyncio.run(open_loop(port, 100, seconds, make, start=0))
        ladder = []
        best = 0.0
        rates = (50, 100, 150) if quick else (25, 50, 75, 100, 125, 150, 200, 250, 300, 400)
        for i, rate in enumerate(rates):
            result = asyncio.run(open_loop(port, rate, step, make, start=(i + 1) * 100_000))
            ladder.append(result)
            if not sustains(result):
                break
            best = rate
        saturated = asyncio.run(closed_loop(port, 8, step, make, start=10**6))
    return {
        "workers": workers,
        "at_100": at_100,
        "ladder": ladder,
        "sustained": best,
        "saturated": saturated,
    }


async def closed_loop(
    port: int, connections: int, seconds: float, make: Callable[[int], Any], start: int = 0
) -> float:
    """Answers a second with `connections` requests always in flight."""
    loop = asyncio.get_running_loop()
    stop = loop.time() + seconds
    done = 0
    counter = iter(range(start, start + 10**7))

    async def one() -> None:
        nonlocal done
        client = Client(port)
        while loop.time() < stop:
            status, _ = await client.post_json("/api/render", {"source": make(next(counter))})
            if status == 200:
                done += 1
            else:
                await asyncio.sleep(0.01)
        client.close()

    began = loop.time()
    await asyncio.gather(*(one() for _ in range(connections)))
    return done / (loop.time() - began)


def memory(quick: bool, make: Callable[[int], Any], big: list[str]) -> dict[str, Any]:
    """RSS of the worker over 10,000 new programs (4 connections, closed loop), then the most
    one request of the largest programs adds."""
    total = 1_000 if quick else 10_000
    with server(1) as (port, pid):
        warm(port, make)
        samples: list[tuple[int, float]] = [(0, rss_mb(pid))]

        async def go() -> None:
            clients = [Client(port) for _ in range(4)]
            sent = 0
            while sent < total:
                await asyncio.gather(
                    *(
                        c.post_json("/api/render", {"source": make(sent + j)})
                        for j, c in enumerate(clients)
                    )
                )
                sent += len(clients)
                if sent % (total // 10) == 0:
                    samples.append((sent, rss_mb(pid)))
            for c in clients:
                c.close()

        start = time.perf_counter()
        asyncio.run(go())
        took = time.perf_counter() - start
        before_big = rss_mb(pid)

        async def biggest() -> None:
            client = Client(port)
            for source in big:
                await client.post_json("/api/render", {"source": source})
            client.close()

        asyncio.run(biggest())
        after_big = rss_mb(pid)
    half = [mb for n, mb in samples if n >= total // 2]
    return {
        "requests": total,
        "seconds": took,
        "samples": samples,
        "growth_second_half": half[-1] - half[0] if len(half) > 1 else float("nan"),
        "growth_total": samples[-1][1] - samples[0][1],
        "big_request_growth": after_big - before_big,
    }
