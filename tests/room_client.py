"""A room socket's client for the tests (the `websockets` library, asyncio), and the HTTP calls
around a room (http.client: real requests to a real server).

Both may come from an address of their own: all of 127.0.0.0/8 is this machine's loopback, so
`address="127.0.0.66"` is another client's laptop to the server (and to nginx, which passes
its $remote_addr on)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection


def measured(name: str, **numbers: Any) -> None:
    """What a scenario measured, on stderr (pytest -s shows it): MEASURED name: {json}."""
    sys.stderr.write(f"\nMEASURED {name}: " + json.dumps(numbers, default=str) + "\n")


def run(coro: Any, timeout: float = 30) -> Any:
    """Run `coro` to its end (within `timeout`) on an event loop of its own, in a thread: the
    session's browser (Playwright's sync API) keeps a loop running in this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coro, timeout)).result()


def http(
    method: str,
    url: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    address: str | None = None,
    timeout: float = 10,
) -> tuple[int, dict[str, str], bytes]:
    """(status, headers with lower-case names, body) of one request (redirects followed),
    from `address` if given."""
    for _ in range(5):
        parts = urllib.parse.urlsplit(url)
        conn = HTTPConnection(
            parts.hostname or "127.0.0.1",
            parts.port or 80,
            timeout=timeout,
            source_address=(address, 0) if address else None,
        )
        data = None if body is None else json.dumps(body).encode()
        sent = dict(headers or {})
        if data is not None:
            sent.setdefault("content-type", "application/json")
        try:
            path = parts.path + ("?" + parts.query if parts.query else "")
            conn.request(method, path or "/", body=data, headers=sent)
            r = conn.getresponse()
            got = {k.lower(): v for k, v in r.getheaders()}
            out = r.read()
        finally:
            conn.close()
        if r.status in (301, 302, 303, 307, 308) and "location" in got:
            url = urllib.parse.urljoin(url, got["location"])
            method, body = ("GET", None) if r.status == 303 else (method, body)
            continue
        return r.status, got, out
    raise AssertionError(f"too many redirects from {url}")


def create_room(
    base: str, state: dict[str, Any] | None = None, address: str | None = None
) -> dict[str, Any]:
    status, _, body = http(
        "POST", base + "/api/rooms", {"state": state} if state else {}, address=address
    )
    assert status == 201, body
    return dict(json.loads(body))


def end_room(base: str, room: dict[str, Any]) -> int:
    key = {"X-Instructor-Key": room["instructor_key"]}
    return http("POST", f"{base}/api/rooms/{room['room']}/end", headers=key)[0]


class Client:
    """One socket of a room: send JSON, receive JSON, with timeouts that fail a test."""

    def __init__(self, conn: ClientConnection) -> None:
        self.conn = conn

    @classmethod
    async def open(
        cls,
        base: str,
        code: str,
        address: str | None = None,
        origin: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Client:
        url = base.replace("http://", "ws://") + f"/api/rooms/{code}/ws"
        extra: dict[str, Any] = {}
        if address:
            extra["local_addr"] = (address, 0)
        return cls(
            await websockets.connect(
                url,
                max_size=None,
                open_timeout=10,
                origin=origin,  # type: ignore[arg-type]
                additional_headers=headers,
                compression=None,
                **extra,
            )
        )

    @classmethod
    async def join(
        cls,
        base: str,
        room: dict[str, Any],
        role: str = "student",
        member: str | None = None,
        address: str | None = None,
        restore: dict[str, Any] | None = None,
    ) -> Client:
        """Open a socket and say hello (with `member`, a member id, if given); the welcome is
        read, the rest is left to the test."""
        c = await cls.open(base, room["room"], address=address)
        hello: dict[str, Any] = {"type": "hello", "role": role}
        if role == "instructor":
            hello["key"] = room["instructor_key"]
        if member:
            hello["id"] = member
        if restore is not None:
            hello["restore"] = restore
        await c.send(hello)
        welcome = await c.recv()
        assert welcome["type"] == "welcome" and welcome["role"] == role, welcome
        c.id = welcome["id"]
        c.welcome = welcome
        return c

    welcome: dict[str, Any] = {}

    id: str = ""

    async def send(self, msg: Any) -> None:
        await self.conn.send(msg if isinstance(msg, str | bytes) else json.dumps(msg))

    async def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        return dict(json.loads(await asyncio.wait_for(self.conn.recv(), timeout)))

    async def expect(self, kind: str, timeout: float = 5.0) -> dict[str, Any]:
        """The next message of type `kind`, skipping others (presence, tally) on the way."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            msg = await self.recv(max(0.01, end - loop.time()))
            if msg["type"] == kind:
                return msg

    async def silent(self, seconds: float = 0.3) -> list[dict[str, Any]]:
        """Whatever arrives within `seconds` (a test asserts that it is nothing, or no such)."""
        out = []
        try:
            while True:
                out.append(await self.recv(seconds))
        except TimeoutError:
            return out

    async def closed(self, timeout: float = 5.0) -> int | None:
        """Read until the server closes; its close code."""
        try:
            while True:
                await asyncio.wait_for(self.conn.recv(), timeout)
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None

    async def close(self) -> None:
        await self.conn.close()


# --- clients that behave as the page does (static/js/room/) -----------------------------------

FINAL = {4400, 4403, 4404, 4429, 1008}  # close codes after which the page stops (socket.js)


class PageStudent:
    """A student as static/js/room/student.js behaves: one member id over every reconnect, the
    time each state arrived, and an answer sent with a ref, sent again until the server says it
    stored that one (after an "unavailable" error, a reconnect, the question sent again, or no
    word within RESEND_SECONDS). `acked` is the value the server last said it stored: what the
    page shows as "Sent"."""

    RESEND_SECONDS = 3.0

    def __init__(self, base: str, code: str, address: str | None = None) -> None:
        self.base, self.code, self.address = base, code, address
        self.member: str | None = None  # from the first welcome, then sent on every hello
        self.states: dict[int, float] = {}
        self.question: str | None = None
        self.value: Any = None
        self.acked: Any = None
        self.ref = 0
        self.closes: list[int] = []
        self.welcomes = 0
        self.ended: str | None = None
        self.conn: ClientConnection | None = None
        self._resend: asyncio.TimerHandle | None = None
        self.task: asyncio.Task[None] | None = None

    def start(self) -> PageStudent:
        self.task = asyncio.ensure_future(self.run())
        return self

    async def run(self) -> None:
        delay = 0.5
        while self.ended is None:
            try:
                c = await Client.open(self.base, self.code, address=self.address)
            except (OSError, websockets.InvalidHandshake, TimeoutError):
                await asyncio.sleep(delay)
                continue
            self.conn = c.conn
            hello: dict[str, Any] = {"type": "hello", "role": "student"}
            if self.member:
                hello["id"] = self.member
            retry = delay
            try:
                await c.send(hello)
                async for raw in c.conn:
                    retry = self._on(json.loads(raw)) or retry
            except websockets.ConnectionClosed:
                pass
            self.conn = None
            code = c.conn.close_code or 1006
            self.closes.append(code)
            if code in FINAL or self.ended is not None:
                self.ended = self.ended or f"closed {code}"
                return
            await asyncio.sleep(retry)

    def _on(self, msg: dict[str, Any]) -> float | None:
        kind = msg.get("type")
        if kind == "welcome":
            self.member = msg["id"]
            self.welcomes += 1
        elif kind == "state":
            self.states.setdefault(msg["seq"], time.perf_counter())
        elif kind == "ask":
            self.question = msg["id"]
            if self.value is not None:
                self._send_answer()  # the question again (a rejoin, a room put back)
        elif kind == "answered" and msg.get("id") == self.question:
            ref = msg.get("ref")
            if ref is not None and ref == self.ref:
                self.acked = self.value  # that send is stored
            elif ref is None and self.value is None:
                self.acked = msg["key"]  # stored before (a rejoin): the page shows it
        elif kind == "error":
            if msg.get("ref") is not None and msg["ref"] == self.ref:
                self._later(float(msg.get("retry_after") or 1.0))
            return float(msg["retry_after"]) if msg.get("retry_after") else None
        elif kind == "ended":
            self.ended = msg["reason"]
        return None

    def answer(self, value: Any) -> None:
        self.value = value
        self._send_answer()

    def _send_answer(self) -> None:
        self.ref += 1
        self.acked = None  # "Sending…" until the server says this one is stored
        if self.conn is not None and self.question is not None:
            msg = {"type": "answer", "id": self.question, "value": self.value, "ref": self.ref}
            asyncio.ensure_future(self._quiet_send(json.dumps(msg)))
        self._later(self.RESEND_SECONDS)

    def _later(self, seconds: float) -> None:
        if self._resend is not None:
            self._resend.cancel()
        self._resend = asyncio.get_running_loop().call_later(seconds, self._check)

    def _check(self) -> None:
        if self.value is not None and self.acked != self.value and self.ended is None:
            self._send_answer()

    async def _quiet_send(self, text: str) -> None:
        conn = self.conn
        if conn is not None:
            with contextlib.suppress(websockets.ConnectionClosed):
                await conn.send(text)

    async def stop(self) -> None:
        self.ended = self.ended or "stopped"
        if self._resend is not None:
            self._resend.cancel()
        if self.conn is not None:
            await self.conn.close()
        if self.task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.task, 5)


class PageTeacher:
    """An instructor as static/js/room/instructor.js behaves: it reconnects after any close
    that is not final, and every hello carries the room as the page holds it ("restore": its
    last seq, view and question), so that a room Redis lost is put back. `step(state)` sends
    a view and returns the seq the server gave it (from its own copy)."""

    def __init__(self, base: str, room: dict[str, Any], address: str | None = None) -> None:
        self.base, self.room, self.address = base, room, address
        self.seq = 0
        self.state: dict[str, Any] = {}
        self.question: dict[str, Any] | None = None
        self.revealed = False
        self.tally: dict[str, int] = {}
        self.total = 0
        self.students = 0
        self.closes: list[int] = []
        self.lives = 0  # welcomes: how many times it (re)joined
        self.conn: ClientConnection | None = None
        self.ended = False
        self._seqs: asyncio.Queue[int] = asyncio.Queue()
        self.live = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> PageTeacher:
        self.task = asyncio.ensure_future(self.run())
        return self

    def restore(self) -> dict[str, Any]:
        return {"seq": self.seq, "state": self.state, "question": self.question,
                "revealed": self.revealed}  # fmt: skip

    async def run(self) -> None:
        while not self.ended:
            try:
                c = await Client.open(self.base, self.room["room"], address=self.address)
            except (OSError, websockets.InvalidHandshake, TimeoutError):
                await asyncio.sleep(0.5)
                continue
            self.conn = c.conn
            hello = {"type": "hello", "role": "instructor", "key": self.room["instructor_key"],
                     "restore": self.restore()}  # fmt: skip
            retry = 0.5
            try:
                await c.send(hello)
                async for raw in c.conn:
                    msg = json.loads(raw)
                    kind = msg.get("type")
                    if kind == "welcome":
                        self.lives += 1
                        self.live.set()
                        if self.state:  # the page sends its whole view again on every join
                            await c.send({"type": "state", "state": self.state})
                    elif kind == "state":
                        self.seq = max(self.seq, msg["seq"])
                        self._seqs.put_nowait(msg["seq"])
                    elif kind in ("tally", "reveal"):
                        self.tally, self.total = msg["counts"], msg["total"]
                    elif kind == "presence":
                        self.students = msg["students"]
                    elif kind == "error" and msg.get("retry_after"):
                        retry = float(msg["retry_after"])
            except websockets.ConnectionClosed:
                pass
            self.conn = None
            self.live.clear()
            code = c.conn.close_code or 1006
            self.closes.append(code)
            if code in FINAL or code == 1000:
                self.ended = True
                return
            await asyncio.sleep(retry)

    async def send(self, msg: dict[str, Any]) -> None:
        await asyncio.wait_for(self.live.wait(), 20)
        assert self.conn is not None
        await self.conn.send(json.dumps(msg))

    async def step(self, state: dict[str, Any], timeout: float = 10) -> int:
        """Send the view; the seq the server gave it."""
        self.state = state
        while not self._seqs.empty():
            self._seqs.get_nowait()
        await self.send({"type": "state", "state": state})
        return await asyncio.wait_for(self._seqs.get(), timeout)

    async def ask(self, question: dict[str, Any]) -> None:
        self.question, self.revealed = {k: v for k, v in question.items() if k != "type"}, False
        await self.send({"type": "ask", **question})

    async def stop(self) -> None:
        self.ended = True
        if self.conn is not None:
            await self.conn.close()
        if self.task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.task, 5)
