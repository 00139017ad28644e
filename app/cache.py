"""Caching the way the web does: a program's answers are named by their address.

Everything the app answers about a program is a pure function of the request (the source, the
values, the options; `randn` is seeded) and of the app's version and settings. So:

- GET resources for a program (`/api/svg`, `/api/trace`) carry a long public `max-age` and an
  ETag made of the app's version and a hash of the request: browsers, proxies and CDNs answer
  repeats without reaching a worker, a conditional request (`If-None-Match`) costs a 304 and no
  work, and a new release has new ETags, so it still shows its fixes once `max-age` runs out.
- `AnswerCache`, a middleware in front of the load shedder, keeps each worker's latest answers
  whole (already compressed) in a bounded LRU and sends them again without routing, without a
  worker thread, a slot or the engine: the same program again costs a dictionary look-up.
- `views` keeps the page's views (engine run + drawing), so `/` and `/embed` for a program
  drawn lately are quick too.

Only successful answers are kept: an error can depend on the moment (a deadline, a busy
server), a success cannot.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def _version() -> str:
    try:
        return metadata.version("gradtrace")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0.0.0-dev"


APP_VERSION = _version()
# How long a browser, proxy or CDN may reuse an answer without asking again (seconds).
MAX_AGE = int(os.environ.get("GRADTRACE_CACHE_MAX_AGE", 86_400))
# The bounds of each worker's in-memory caches (answers; views get half the bytes).
MAX_ENTRIES = int(os.environ.get("GRADTRACE_CACHE_ENTRIES", 512))
MAX_BYTES = int(os.environ.get("GRADTRACE_CACHE_BYTES", 32 * 1024 * 1024))


class LRU:
    """A thread-safe least-recently-used map bounded by entry count and by total size."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        if size > self.max_bytes // 4 or self.max_entries <= 0:
            return  # one huge answer must not empty the cache
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._items[key] = (value, size)
            self.bytes += size
            while len(self._items) > self.max_entries or self.bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)


answers = LRU()
views = LRU(max_entries=max(MAX_ENTRIES // 4, 1), max_bytes=MAX_BYTES // 2)


def clear() -> None:
    answers.clear()
    views.clear()


# --- names and validators --------------------------------------------------------------------


def fingerprint(*parts: Any) -> str:
    """A stable hash of the request and of what else decides the answer (version, limits)."""
    from app.config import get_settings

    text = json.dumps(
        [APP_VERSION, repr(get_settings().limits), *parts],
        sort_keys=True,
        separators=(",", ":"),
        default=repr,
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def get_key(path: str, query: Iterable[tuple[str, str]]) -> str:
    """What names a GET answer: its path and its query parameters, in any order."""
    return fingerprint(path, sorted(query))


def etag_for(key: str) -> str:
    """A strong ETag: the app's version and the request's hash."""
    return f'"{APP_VERSION}-{key[:32]}"'


def matches(if_none_match: str | None, etag: str, exists: bool = False) -> bool:
    """Does an If-None-Match header name this ETag (weak comparison, as RFC 9110 asks)? `*`
    names any current representation (RFC 9110 13.1.2), so it matches only when the caller
    knows that the answer `exists` (a 200): a program that fails has none."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return exists
    tags = (t.strip().removeprefix("W/") for t in if_none_match.split(","))
    return etag in tags


def validators(etag: str) -> dict[str, str]:
    return {"ETag": etag, "Cache-Control": f"public, max-age={MAX_AGE}"}


# --- what the routes call ---------------------------------------------------------------------

# The answers AnswerCache keeps whole, by method and path; a POST is named by its body.
CACHED_ROUTES = {("GET", "/api/svg"), ("GET", "/api/trace"), ("POST", "/api/render")}
KEEP = "x-gradtrace-keep"  # a route's mark on a POST answer that may be kept; never sent
MAX_KEY_BODY = 64 * 1024  # a larger POST body is passed on uncached (SizeGuard judges it)


def cached_get(request: Request, produce: Callable[[], Response]) -> Response:
    """A GET resource that its address names: 304 when the client holds it already, else
    `produce()`, which on success carries the ETag and a long public max-age."""
    etag = etag_for(get_key(request.url.path, request.query_params.multi_items()))
    if matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=validators(etag))
    response = produce()
    if response.status_code == 200:
        response.headers.update(validators(etag))
    return response


def keep_if(response: Response, cacheable: bool) -> Response:
    """Mark a POST answer that AnswerCache may keep."""
    if cacheable and response.status_code == 200:
        response.headers[KEEP] = "1"
    return response


def cached_view(parts: Iterable[Any], produce: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A page view (engine run + drawing) from the worker's cache, or made and kept when it
    succeeded. The view is shared: callers read it and never change it."""
    key = fingerprint("view", *parts)
    hit: dict[str, Any] | None = views.get(key)
    if hit is not None:
        return hit
    view = produce()
    if cacheable_view(view):
        views.put(key, view, view_bytes(view))
    return view


def view_bytes(view: dict[str, Any]) -> int:
    """About the memory a view holds, from its trace's shapes (a walk over every number would
    cost as much as the answer): 36 bytes a number as CPython keeps it in a list (the float and
    its slot; within 10% of tracemalloc's count for a 128×128 trace), the trace's numbers
    counted as engine.tracing.cost counts them (each value and grad, and for each op its upstream grad
    and four numbers per input element), the drawing's text, and some structure per node."""
    trace = view.get("trace") or {}
    nodes = trace.get("nodes") or ()
    sizes = {n["id"]: math.prod(n["shape"]) for n in nodes}
    numbers = 0
    for n in nodes:
        numbers += 3 * sizes[n["id"]] + 4 * sum(sizes.get(i, 0) for i in n["inputs"])
    return 36 * numbers + len(view.get("svg") or "") + 1_000 * (len(nodes) + 1)


def cacheable_view(view: dict[str, Any]) -> bool:
    """A view that does not depend on the moment: no error, and no drawing that ran out of time
    or found the server busy."""
    if "error" in view:
        return False
    draw_error = view.get("draw_error")
    # Too many nodes, or a layout past its own budget (max_layout_seconds): the same next time.
    return draw_error is None or draw_error.get("code") in ("too_large", "layout_timeout")


# --- the middleware --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Kept:
    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes


class AnswerCache:
    """ASGI middleware: the answers of CACHED_ROUTES, kept whole (compressed or not, as they
    were sent) in the worker's LRU and sent again without routing, without a worker thread and
    without the engine. A GET whose If-None-Match names its ETag gets a 304 here. It sits inside
    the size guard and outside the load shedder (app/main.py): a request over a size limit is
    never looked up, and a kept answer never takes a slot."""

    def __init__(self, app: ASGIApp, store: LRU | None = None) -> None:
        self.app = app
        self.store = answers if store is None else store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["method"], scope["path"]) not in CACHED_ROUTES:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        gzip_ok = b"gzip" in headers.get(b"accept-encoding", b"")
        if scope["method"] == "GET":
            if len(scope.get("query_string", b"")) > MAX_KEY_BODY:
                await self.app(scope, receive, send)  # SizeGuard's to judge
                return
            query = parse_qsl(
                scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True
            )
            key = get_key(scope["path"], query)
            inm = headers.get(b"if-none-match")
            etag = etag_for(key)
            fields = [(k.lower().encode(), v.encode()) for k, v in validators(etag).items()]
            if inm is not None:
                star = inm.strip() == b"*"
                # `*` asks "is there an answer?": yes if one is kept (only 200s are) ...
                exists = star and any(self.store.get((key, z)) for z in (gzip_ok, not gzip_ok))
                if matches(inm.decode("latin-1"), etag, exists=exists):
                    await _send(send, 304, fields, b"")
                    return
                if star:  # ... else only once it is made, and it is a 200 (not an error)
                    await self._fill(scope, receive, send, (key, gzip_ok), not_modified=fields)
                    return
        else:
            body = await _read_body(receive, headers)
            if body is None:  # too large to name: the app (and its guards) see it all
                await self.app(scope, receive, send)
                return
            key = fingerprint(scope["path"], body.decode("utf-8", "replace"))
            receive = _replay(body, receive)
        slot = (key, gzip_ok)
        hit: Kept | None = self.store.get(slot)
        if hit is not None:
            await _send(send, hit.status, list(hit.headers), hit.body)
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
        mark = KEEP.encode()

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
                await _send(send, 304, not_modified, b"")
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


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` that first hands back the body already read."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _send(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    if status != 304 and not any(k.lower() == b"content-length" for k, _ in headers):
        headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
