"""`/healthz`, answered before routing: a probe says the event loop is free, so it should cost
the loop as little as it can."""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from app.middleware.asgi import HTTPMiddleware, send_whole


class Health(HTTPMiddleware):
    """`/healthz`, answered here without routing, a slot or a worker thread: a handful of GIL
    hand-overs while worker threads run programs, rather than the dozens a routed request
    takes."""

    BODY = b'{"status":"ok"}'
    HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"15")]

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] != "/healthz":
            await self.app(scope, receive, send)
            return
        await send_whole(send, 200, self.HEADERS, b"" if scope["method"] == "HEAD" else self.BODY)
