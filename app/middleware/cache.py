"""`AnswerCache`: the answers of the cached routes, sent again from the worker's memory.

What names an answer, and the store it is kept in, are app/cache.py's; this is the middleware
that looks answers up before routing and keeps the ones the app marks as keepable.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import cache
from app.config import Settings
from app.middleware.asgi import HTTPMiddleware, replay, send_whole

# The answers AnswerCache keeps whole, by method and path; a POST is named by its body.
CACHED_ROUTES = {("GET", "/api/svg"), ("GET", "/api/trace"), ("POST", "/api/render")}
MAX_KEY_BODY = 64 * 1024  # a larger POST body is passed on uncached (SizeGuard judges it)


@dataclass(frozen=True, slots=True)
class Kept:
    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes


class AnswerCache(HTTPMiddleware):
    """ASGI middleware: the answers of CACHED_ROUTES, kept whole (compressed or not, as they
    were sent) in the worker's LRU and sent again without routing, without a worker thread and
    without the engine. A GET whose If-None-Match names its ETag gets a 304 here. It sits inside
    the size guard and outside the load shedder (app/middleware/stack.py): a request over a
    size limit is never looked up, and a kept answer never takes a slot."""

    def __init__(
        self, app: ASGIApp, settings: Settings | None = None, store: cache.LRU | None = None
    ) -> None:
        super().__init__(app)
        self.settings = settings or Settings()
        self.store = cache.answers if store is None else store

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["method"], scope["path"]) not in CACHED_ROUTES:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        gzip_ok = b"gzip" in headers.get(b"accept-encoding", b"")
        limits = self.settings.limits
        if scope["method"] == "GET":
            if len(scope.get("query_string", b"")) > MAX_KEY_BODY:
                await self.app(scope, receive, send)  # SizeGuard's to judge
                return
            query = parse_qsl(
                scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True
            )
            key = cache.get_key(scope["path"], query, limits)
            inm = headers.get(b"if-none-match")
            etag = cache.etag_for(key)
            validators = cache.validators(etag, self.settings.cache_max_age)
            fields = [(k.lower().encode(), v.encode()) for k, v in validators.items()]
            if inm is not None:
                star = inm.strip() == b"*"
                # `*` asks "is there an answer?": yes if one is kept (only 200s are) ...
                exists = star and any(self.store.get((key, z)) for z in (gzip_ok, not gzip_ok))
                if cache.matches(inm.decode("latin-1"), etag, exists=exists):
                    await send_whole(send, 304, fields, b"")
                    return
                if star:  # ... else only once it is made, and it is a 200 (not an error)
                    await self._fill(scope, receive, send, (key, gzip_ok), not_modified=fields)
                    return
        else:
            body = await _read_body(receive, headers)
            if body is None:  # too large to name: the app (and its guards) see it all
                await self.app(scope, receive, send)
                return
            key = cache.fingerprint(scope["path"], body.decode("utf-8", "replace"), limits=limits)
            receive = replay(body, receive)
        slot = (key, gzip_ok)
        hit: Kept | None = self.store.get(slot)
        if hit is not None:
            await send_whole(send, hit.status, list(hit.headers), hit.body)
            return
        await self._fill(scope, receive, send, slot)

    async def _fill(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        slot: Hashable,
        not_modified: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        """Call the app, keeping its answer when it may be kept. With `not_modified` (the
        validators of a 304), the answer is held back: a 200 is sent as that 304, anything
        else as it came."""
        start: dict[str, Any] = {}
        chunks: list[bytes] = []
        held: list[Message] = []
        keep = scope["method"] == "GET"
        mark = cache.KEEP.encode()

        async def capture(message: Message) -> None:
            nonlocal keep
            if message["type"] == "http.response.start":
                fields = list(message.get("headers") or [])
                if any(k.lower() == mark for k, _ in fields):
                    keep = True
                    message = {
                        **message,
                        "headers": [(k, v) for k, v in fields if k.lower() != mark],
                    }
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            if not_modified is None:
                await send(message)
            else:
                held.append(message)

        await self.app(scope, receive, capture)
        if not_modified is not None:
            if start.get("status") == 200:
                await send_whole(send, 304, not_modified, b"")
            else:
                for message in held:
                    await send(message)
        if keep and start.get("status") == 200:
            body = b"".join(chunks)
            kept = Kept(200, tuple(start.get("headers") or ()), body)
            self.store.put(slot, kept, len(body) + 512)


async def _read_body(receive: Receive, headers: dict[bytes, bytes]) -> bytes | None:
    """The whole body if it is small enough to name an answer; None (nothing read) if not."""
    declared = headers.get(b"content-length")
    if declared is None or not declared.isdigit() or int(declared) > MAX_KEY_BODY:
        return None
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(parts)
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)
