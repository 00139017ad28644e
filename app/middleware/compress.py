"""Gzip for answers worth it, never on the event loop when it is real work.

The wire behaviour of Starlette's GZipMiddleware (Content-Encoding gzip for clients that accept
it, `Vary: Accept-Encoding` on every answer that could have been compressed, bodies under
`minimum_size` sent as they are), with one difference that matters under load: a body of
`thread_bytes` or more is compressed in a worker thread (zlib lets go of the GIL while it
works), so a multi-megabyte trace does not hold up `/healthz` and every other request while it
is compressed. Smaller bodies are compressed inline: a thread hop would cost more than they do.

The gzip stream has no timestamp, so the same answer compresses to the same bytes every time.
"""

from __future__ import annotations

import zlib

import anyio.to_thread
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.middleware.asgi import HTTPMiddleware

# Already compressed: gzip would only cost time. (SVG is text and compresses well.)
INCOMPRESSIBLE = ("image/png", "image/jpeg", "image/gif", "image/webp", "font/woff", "font/woff2")


class Compress(HTTPMiddleware):
    def __init__(
        self,
        app: ASGIApp,
        minimum_size: int = 1024,
        level: int = 6,
        thread_bytes: int = 64 * 1024,
    ) -> None:
        super().__init__(app)
        self.minimum_size = minimum_size
        self.level = level
        self.thread_bytes = thread_bytes

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        accepts = "gzip" in Headers(scope=scope).get("accept-encoding", "")
        await _Responder(self, accepts, send).run(scope, receive)


class _Responder:
    """One answer's compression: holds the start message until the first body part says how
    large the answer is, then compresses it whole (one part) or as a stream (several)."""

    def __init__(self, config: Compress, accepts: bool, send: Send) -> None:
        self.config = config
        self.accepts = accepts
        self.send = send
        self.start: Message | None = None
        self.passthrough = False  # sent as the app made it (already encoded, partial, …)
        self.started = False
        self.compressor: zlib._Compress | None = None

    async def run(self, scope: Scope, receive: Receive) -> None:
        await self.config.app(scope, receive, self.on_message)

    async def on_message(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            headers = Headers(raw=message.get("headers") or [])
            media = headers.get("content-type", "").partition(";")[0].strip().lower()
            self.passthrough = (
                "content-encoding" in headers
                or message["status"] in (204, 206, 304)
                or media.startswith(INCOMPRESSIBLE)
            )
            if self.passthrough:
                await self.send(message)
            else:
                self.start = {**message, "headers": list(message.get("headers") or [])}
            return
        if kind != "http.response.body" or self.passthrough:
            await self._flush_start()
            await self.send(message)
            return
        body: bytes = message.get("body", b"")
        more = bool(message.get("more_body", False))
        first = not self.started
        self.started = True
        if first and len(body) < self.config.minimum_size and not more:
            await self._flush_start()  # too small to be worth it: as the app made it
            await self.send(message)
            return
        if self.accepts:
            body = await self._compress(body, more)
        if first and self.start is not None:
            headers = MutableHeaders(raw=self.start["headers"])  # edits the list in place
            headers.add_vary_header("Accept-Encoding")  # the answer depends on it from here on
            if self.accepts:
                headers["Content-Encoding"] = "gzip"
                if more:
                    del headers["Content-Length"]  # a stream: its compressed length is unknown
                else:
                    headers["Content-Length"] = str(len(body))
        await self._flush_start()
        await self.send({**message, "body": body})

    async def _flush_start(self) -> None:
        if self.start is not None:
            start, self.start = self.start, None
            await self.send(start)

    async def _compress(self, body: bytes, more: bool) -> bytes:
        if len(body) >= self.config.thread_bytes:
            return await anyio.to_thread.run_sync(self._deflate, body, more)
        return self._deflate(body, more)

    def _deflate(self, body: bytes, more: bool) -> bytes:
        if self.compressor is None:
            # wbits 16 + 15: a gzip header (mtime 0) and trailer around the deflate stream.
            self.compressor = zlib.compressobj(
                self.config.level, zlib.DEFLATED, 16 + zlib.MAX_WBITS
            )
        out = self.compressor.compress(body)
        return out + self.compressor.flush(zlib.Z_SYNC_FLUSH if more else zlib.Z_FINISH)
