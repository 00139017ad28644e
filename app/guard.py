"""Size guards in front of the app: a body or query string over its limit is refused with 413
before it is read in full (so a 30 MB body costs 64 KB of reading, not 30 MB)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class SizeGuard:
    def __init__(self, app: ASGIApp, max_body_bytes: int, max_query_bytes: int) -> None:
        self.app = app
        self.max_body = max_body_bytes
        self.max_query = max_query_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if len(scope.get("query_string", b"")) > self.max_query:
            await refuse(send, f"the address's query is longer than {self.max_query:,} bytes "
                         "(max_query_bytes)", "max_query_bytes")
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            await refuse(send, f"the request body is larger than {self.max_body:,} bytes "
                         "(max_body_bytes)", "max_body_bytes")
            return
        # Without a declared length (chunked), read up to the limit and replay what was read.
        chunks: list[bytes] = []
        size = 0
        more = True
        while more and scope["method"] in ("POST", "PUT", "PATCH"):
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await refuse(send, f"the request body is larger than {self.max_body:,} bytes "
                             "(max_body_bytes)", "max_body_bytes")
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        if not chunks:
            await self.app(scope, receive, send)
            return
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def refuse(send: Send, message: str, limit: str) -> None:
    error: dict[str, Any] = {"message": message, "line": None, "column": None,
                             "code": "too_large", "limit": limit}
    payload = json.dumps({"error": error}).encode()
    await send({
        "type": "http.response.start",
        "status": 413,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close")],
    })
    await send({"type": "http.response.body", "body": payload})


class LoadShedder:
    """At most `max_in_flight` requests at work at once; past that, 503 with Retry-After at
    once, rather than a queue that grows until every answer is late. Cheap requests (static
    files, the health check) are never shed."""

    def __init__(self, app: ASGIApp, max_in_flight: int, retry_after: int = 1) -> None:
        self.app = app
        self.max_in_flight = max_in_flight
        self.retry_after = retry_after
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(("/static", "/healthz")):
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.max_in_flight:
            payload = json.dumps({"error": {
                "message": "the server is busy; try again in a moment",
                "line": None, "column": None, "code": "busy"}}).encode()
            await send({
                "type": "http.response.start",
                "status": 503,
                "headers": [(b"content-type", b"application/json"),
                            (b"retry-after", str(self.retry_after).encode()),
                            (b"content-length", str(len(payload)).encode())],
            })
            await send({"type": "http.response.body", "body": payload})
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
