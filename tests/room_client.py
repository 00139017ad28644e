"""A room socket's client for the tests (the `websockets` library, asyncio), and the HTTP calls
around a room (urllib: real requests to a real server)."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection


def run(coro: Any, timeout: float = 30) -> Any:
    """Run `coro` to its end (within `timeout`) on an event loop of its own, in a thread: the
    session's browser (Playwright's sync API) keeps a loop running in this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coro, timeout)).result()


def http(
    method: str, url: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """(status, headers with lower-case names, body) of one request."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        req.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def create_room(base: str, state: dict[str, Any] | None = None) -> dict[str, Any]:
    status, _, body = http("POST", base + "/api/rooms", {"state": state} if state else {})
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
    async def open(cls, base: str, code: str) -> Client:
        url = base.replace("http://", "ws://") + f"/api/rooms/{code}/ws"
        return cls(await websockets.connect(url, max_size=None, open_timeout=10))

    @classmethod
    async def join(cls, base: str, room: dict[str, Any], role: str = "student") -> Client:
        """Open a socket and say hello; the welcome is read, the rest is left to the test."""
        c = await cls.open(base, room["room"])
        hello = {"type": "hello", "role": role}
        if role == "instructor":
            hello["key"] = room["instructor_key"]
        await c.send(hello)
        welcome = await c.recv()
        assert welcome["type"] == "welcome" and welcome["role"] == role, welcome
        c.id = welcome["id"]
        return c

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
