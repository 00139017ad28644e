"""A room socket's client for the tests (the `websockets` library, asyncio), and the HTTP calls
around a room (http.client: real requests to a real server).

Both may come from an address of their own: all of 127.0.0.0/8 is this machine's loopback, so
`address="127.0.0.66"` is another client's laptop to the server (and to nginx, which passes
its $remote_addr on)."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection


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
