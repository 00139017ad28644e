"""Timing helpers: medians and percentiles, and the app called in-process (server time)."""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def percentile(xs: Sequence[float], p: float) -> float:
    """The p-th percentile (0–100), nearest rank."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, round(p / 100 * len(s) + 0.5) - 1))
    return s[k]


def timed(f: Callable[[], Any], repeat: int, warmup: int = 1) -> list[float]:
    """Seconds for each of `repeat` calls of f (after `warmup` untimed ones), GC off inside."""
    for _ in range(warmup):
        f()
    out = []
    for _ in range(repeat):
        gc.disable()
        try:
            t = time.perf_counter()
            f()
            out.append(time.perf_counter() - t)
        finally:
            gc.enable()
    return out


def ms(seconds: float) -> str:
    if seconds != seconds:  # NaN
        return "–"
    if seconds < 0.001:
        return f"{seconds * 1e3:.2f} ms"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float  # server time: from the request's arrival to the last byte of the answer

    def json(self) -> Any:
        import gzip

        body = self.body
        if self.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        return json.loads(body)


class InProcess:
    """Call the ASGI app directly, as uvicorn would, and time it: the server's own time, with
    every middleware (gzip included) and the hop to the worker thread, without the network.

    The event loop runs in a thread of its own under one long-lived root task, as under
    uvicorn, so the worker threads that sync routes run in are reused between requests."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._stop: asyncio.Event | None = None

        async def forever() -> None:
            self._stop = asyncio.Event()
            ready.set()
            await self._stop.wait()

        self.thread = threading.Thread(
            target=lambda: self.loop.run_until_complete(forever()), daemon=True
        )
        self.thread.start()
        ready.wait()

    def close(self) -> None:
        assert self._stop is not None
        self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join()
        self.loop.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        coro = self._request(method, path, params, json_body, headers or {})
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def _request(
        self,
        method: str,
        path: str,
        params: dict[str, str] | None,
        json_body: Any,
        headers: dict[str, str],
    ) -> Answer:
        body = b"" if json_body is None else json.dumps(json_body).encode()
        raw_headers = [(b"host", b"bench"), (b"accept-encoding", b"gzip")]
        if json_body is not None:
            raw_headers += [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ]
        raw_headers += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": urllib.parse.urlencode(params or {}).encode(),
            "root_path": "",
            "headers": raw_headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 80),
            "state": {},
        }
        delivered = False
        finished = asyncio.Event()

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await finished.wait()  # the client goes once it has the whole answer
            return {"type": "http.disconnect"}

        status = 0
        out_headers: dict[str, str] = {}
        chunks: list[bytes] = []

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                out_headers.update(
                    {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
                )
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    finished.set()

        start = time.perf_counter()
        await self.app(scope, receive, send)
        return Answer(status, out_headers, b"".join(chunks), time.perf_counter() - start)
