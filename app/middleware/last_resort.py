"""`LastResort`, the outermost middleware: a bug is a 500 with the security headers, and the
connection stays open."""

from __future__ import annotations

from starlette.types import Message, Receive, Scope, Send

from app.errors import internal_error_response, log
from app.middleware.asgi import HTTPMiddleware


class LastResort(HTTPMiddleware):
    """An exception that nothing inside caught becomes the 500 of `internal_error_response`
    and goes no further. Starlette's own last resort sits outside every middleware, so its 500
    lacks the security headers, and it re-raises, after which uvicorn closes the keep-alive
    connection. Here the connection stays open (the answer is whole and the request is over)
    unless half an answer was sent already: then closing is the only way to tell the client
    it is broken."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            path = scope.get("path", "")
            log.exception("unhandled error on %s", path)
            if started:
                raise
            await internal_error_response(path)(scope, receive, send)
