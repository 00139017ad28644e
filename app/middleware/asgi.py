"""The ASGI plumbing the middleware here shares: HTTP only, a body read ahead, a whole answer."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HTTPMiddleware:
    """A middleware that works on HTTP requests only: anything else (the lifespan, a
    websocket) goes to the app untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


def replay(body: bytes, receive: Receive) -> Receive:
    """`receive` that first hands back the body already read, whole, then reads on (for the
    disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def send_whole(
    send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes
) -> None:
    """An answer made here, in its two messages, with its length unless it is a 304."""
    if status != 304 and not any(k.lower() == b"content-length" for k, _ in headers):
        headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
