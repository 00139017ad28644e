"""Guards in front of the app, outermost first:

- `SizeGuard`: headers over their limit are refused with 431, a query string or body over its
  limit with 413 before it is read in full (so a 30 MB body costs 1 MB of reading, not 30 MB);
  a body must arrive whole within `body_read_seconds` (else 408). It reads the body before the
  request counts as in flight, so a stalled upload costs a connection, never a slot.
- `LoadShedder`: at most `max_in_flight` requests at work, and at most
  `max_in_flight_per_client` from one client address; past either, 503 + Retry-After at once.
- `RequestDeadline`: each request gets `max_request_seconds`. The engine checks the deadline as
  it works and Graphviz gets only what is left of it; if the answer has still not started a
  moment after the deadline, the client gets 503 + Retry-After while the work runs to its end
  (a worker thread cannot be stopped from outside), still counted as in flight.

app/middleware/stack.py puts the answer cache between the first and the second: a request
refused for its size is never looked up, and a cached answer never takes a slot.

Their answers are the error object of spec/api.md, or for `/api/svg` a picture of it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import error_response, keyed_body
from app.middleware.asgi import HTTPMiddleware, replay
from app.query import parse_lang
from engine.limits import deadline

log = logging.getLogger("gradtrace")

CHEAP = ("/static", "/healthz")  # never shed nor timed: they do no work


async def answer(
    scope: Scope, send: Send, status: int, body: dict[str, Any], headers: dict[str, str]
) -> None:
    """Send a whole error answer from a middleware (without calling the app)."""
    response = error_response(scope.get("path", ""), status, body, headers)

    async def no_body() -> Message:
        return {"type": "http.disconnect"}

    await response(scope, no_body, send)


class SizeGuard(HTTPMiddleware):
    def __init__(
        self,
        app: ASGIApp,
        max_body_bytes: int,
        max_query_bytes: int,
        max_header_bytes: int = 64 * 1024,
        body_read_seconds: float = 5.0,
    ) -> None:
        super().__init__(app)
        self.max_body, self.max_query = max_body_bytes, max_query_bytes
        self.max_headers = max_header_bytes
        self.body_seconds = body_read_seconds
        self.stalled = 0  # uploads answered 408 so far (for tests and logs)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if len(scope.get("query_string", b"")) > self.max_query:
            await refuse(scope, send, "max_query_bytes", self.max_query)
            return
        headers = scope.get("headers", [])
        if sum(len(k) + len(v) + 4 for k, v in headers) > self.max_headers:
            await answer(
                scope,
                send,
                431,
                limit_body(scope, "max_header_bytes", "too_large", max=self.max_headers),
                {"connection": "close"},
            )
            return
        declared = dict(headers).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            await refuse(scope, send, "max_body_bytes", self.max_body)
            return
        if scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        # The whole body, read here, before anything inside counts the request as in flight;
        # chunked bodies (no declared length) are cut off as soon as they pass the limit.
        try:
            body = await asyncio.wait_for(self._read(receive), self.body_seconds or None)
        except TooLarge:
            await refuse(scope, send, "max_body_bytes", self.max_body)
            return
        except TimeoutError:
            self.stalled += 1
            await answer(
                scope,
                send,
                408,
                limit_body(scope, "body_read_seconds", "timeout", max=self.body_seconds),
                # The rest of the body may still come: the connection cannot carry another
                # request.
                {"connection": "close"},
            )
            return
        if body is None:
            return  # the client went away mid-body: nobody is left to answer
        await self.app(scope, replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body; None if the client disconnected first. Raises TooLarge as soon as
        it passes max_body_bytes."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                raise TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


class TooLarge(Exception):
    """A body past max_body_bytes (SizeGuard's own signal, never raised out of it)."""


def limit_body(scope: Scope, limit: str, code: str, **params: Any) -> dict[str, Any]:
    """The error object of the setting `limit`: its one message (msg_limit_<setting>), in the
    language the address asks for (`?lang=`), English by default."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    lang = parse_lang((query.get("lang") or [None])[0])
    return keyed_body("limit_" + limit, code, lang, limit=limit, **params)


async def refuse(scope: Scope, send: Send, limit: str, most: int) -> None:
    # `connection: close`: the rest of an oversized body is never read, so the connection
    # cannot carry another request.
    body = limit_body(scope, limit, "too_large", max=most)
    await answer(scope, send, 413, body, {"connection": "close"})


class LoadShedder(HTTPMiddleware):
    """At most `max_in_flight` requests at work at once, and at most `max_per_client` of them
    from one client address (0: no such bound); past either, 503 with Retry-After at once,
    rather than a queue that grows until every answer is late. Cheap requests (static files,
    the health check) are never shed.

    The address is uvicorn's `scope["client"]`. This app reads no forwarded-for header (any
    client could write one); uvicorn puts the one from X-Forwarded-For there only when the
    connection comes from a proxy it trusts (`--forwarded-allow-ips`, by default 127.0.0.1),
    so behind a proxy that is not trusted every request counts as the proxy's. A request with
    no address (a Unix socket) is held to max_in_flight alone."""

    def __init__(
        self, app: ASGIApp, max_in_flight: int, retry_after: int = 1, max_per_client: int = 0
    ) -> None:
        super().__init__(app)
        self.max_in_flight, self.max_per_client = max_in_flight, max_per_client
        self.retry_after = retry_after
        self.in_flight = 0
        self.by_client: dict[str | None, int] = {}  # only addresses with work in flight
        self.shed = 0  # answers refused so far (for tests and logs)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("path", "").startswith(CHEAP):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        who = str(client[0]) if client else None
        theirs = self.by_client.get(who, 0)
        refusal = self._refusal(who, theirs)
        if refusal is not None:
            self.shed += 1
            await answer(scope, send, 503, refusal, {"retry-after": str(self.retry_after)})
            return
        self.in_flight += 1
        self.by_client[who] = theirs + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
            left = self.by_client[who] - 1
            if left:
                self.by_client[who] = left
            else:
                del self.by_client[who]

    def _refusal(self, who: str | None, theirs: int) -> dict[str, Any] | None:
        """The error body of a request past a bound, or None if it may start."""
        if self.max_per_client and who is not None and theirs >= self.max_per_client:
            return keyed_body(
                "limit_max_in_flight_per_client", "busy", limit="max_in_flight_per_client",
                n=theirs, max=self.max_per_client,
            )  # fmt: skip
        if self.in_flight >= self.max_in_flight:
            return keyed_body(
                "limit_max_in_flight", "busy", limit="max_in_flight",
                n=self.in_flight, max=self.max_in_flight,
            )  # fmt: skip
        return None


class RequestDeadline(HTTPMiddleware):
    """Each request gets `seconds` (max_request_seconds): the engine stops at the deadline by
    itself (413, naming the setting); work that does not stop within `grace` seconds more is
    answered 503 + Retry-After, and this middleware returns only once that work has ended, so
    the load shedder outside still counts it."""

    def __init__(
        self, app: ASGIApp, seconds: float, grace: float = 1.0, retry_after: int = 2
    ) -> None:
        super().__init__(app)
        self.seconds, self.grace = seconds, grace  # the bound, and the backstop's wait past it
        self.retry_after = retry_after
        self.timed_out = 0  # answers given by the backstop so far

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if path.startswith(CHEAP) or not self.seconds:
            await self.app(scope, receive, send)
            return
        started = False
        answered = False

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if answered:
                return  # the backstop has answered; the late answer goes nowhere
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        # The task copies the context here, deadline included; so do the worker threads the
        # routes run in.
        with deadline(self.seconds):
            work = asyncio.ensure_future(self.app(scope, receive, guarded_send))
        try:
            done, _ = await asyncio.wait({work}, timeout=self.seconds + self.grace)
        except asyncio.CancelledError:
            work.cancel()
            raise
        if done:
            work.result()  # re-raise what the app raised, as if it had been called directly
            return
        if not started:
            answered = True
            self.timed_out += 1
            log.warning("%s ran past max_request_seconds (%g s); answered 503", path, self.seconds)
            await answer(
                scope,
                send,
                503,
                limit_body(scope, "max_request_seconds", "timeout", max=self.seconds),
                {"retry-after": str(self.retry_after), "connection": "close"},
            )
        try:
            await work
        except Exception:
            log.exception("%s failed after its deadline", path)
