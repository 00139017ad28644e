"""Caching the way the web does: a program's answers are named by their address.

Everything the app answers about a program is a pure function of the request (the source, the
values, the options; `randn` is seeded) and of the app's version and settings. So:

- GET resources for a program (`/api/svg`, `/api/trace`) carry a long public `max-age` and an
  ETag made of the app's version and a hash of the request: browsers, proxies and CDNs answer
  repeats without reaching a worker, a conditional request (`If-None-Match`) costs a 304 and no
  work, and a new release has new ETags, so it still shows its fixes once `max-age` runs out.
- `AnswerCache` (app/middleware/cache.py), in front of the load shedder, keeps each worker's
  latest answers whole (already compressed) in a bounded LRU and sends them again without
  routing, without a worker thread, a slot or the engine: the same program again costs a
  dictionary look-up.
- `views` keeps the page's views (engine run + drawing), so `/` and `/embed` for a program
  drawn lately are quick too.

Only successful answers are kept: an error can depend on the moment (a deadline, a busy
server), a success cannot.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from importlib import metadata
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from app.config import Settings, get_settings
from engine.limits import Limits


def _version() -> str:
    try:
        return metadata.version("gradtrace")
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0.0.0-dev"


APP_VERSION = _version()


class LRU:
    """A thread-safe least-recently-used map bounded by entry count and by total size."""

    def __init__(
        self,
        max_entries: int = Settings.cache_entries,
        max_bytes: int = Settings.cache_bytes,
    ) -> None:
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

    def bound(self, max_entries: int, max_bytes: int) -> None:
        """New bounds (the settings', once the app is made); dropping what no longer fits."""
        with self._lock:
            self.max_entries, self.max_bytes = max_entries, max_bytes
            while self._items and (len(self._items) > max_entries or self.bytes > max_bytes):
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped

    def __len__(self) -> int:
        return len(self._items)


answers = LRU()
views = LRU()


def configure(settings: Settings) -> None:
    """Bound the worker's caches as `settings` say (answers; views get half the bytes)."""
    answers.bound(settings.cache_entries, settings.cache_bytes)
    views.bound(max(settings.cache_entries // 4, 1), settings.cache_bytes // 2)


configure(Settings())  # the defaults, until the app is made with its settings (middleware/stack.py)


def clear() -> None:
    answers.clear()
    views.clear()


# --- names and validators --------------------------------------------------------------------


def fingerprint(*parts: Any, limits: Limits | None = None) -> str:
    """A stable hash of the request and of what else decides the answer (the version, the
    limits: the settings' own unless given)."""
    text = json.dumps(
        [APP_VERSION, repr(limits or get_settings().limits), *parts],
        sort_keys=True,
        separators=(",", ":"),
        default=repr,
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def get_key(path: str, query: Iterable[tuple[str, str]], limits: Limits | None = None) -> str:
    """What names a GET answer: its path and its query parameters, in any order."""
    return fingerprint(path, sorted(query), limits=limits)


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


def validators(etag: str, max_age: int) -> dict[str, str]:
    """The headers that let browsers, proxies and CDNs reuse an answer for `max_age` seconds."""
    return {"ETag": etag, "Cache-Control": f"public, max-age={max_age}"}


# --- what the routes call ---------------------------------------------------------------------

KEEP = "x-gradtrace-keep"  # a route's mark on a POST answer that may be kept; never sent


def cached_get(request: Request, settings: Settings, produce: Callable[[], Response]) -> Response:
    """A GET resource that its address names: 304 when the client holds it already, else
    `produce()`, which on success carries the ETag and a long public max-age."""
    key = get_key(request.url.path, request.query_params.multi_items(), settings.limits)
    etag = etag_for(key)
    fields = validators(etag, settings.cache_max_age)
    if matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=fields)
    response = produce()
    if response.status_code == 200:
        response.headers.update(fields)
    return response


def keep_if(response: Response, cacheable: bool) -> Response:
    """Mark a POST answer that AnswerCache may keep."""
    if cacheable and response.status_code == 200:
        response.headers[KEEP] = "1"
    return response


def cached_view(
    parts: Iterable[Any], limits: Limits, produce: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """A page view (engine run + drawing) from the worker's cache, or made and kept when it
    succeeded. The view is shared: callers read it and never change it."""
    key = fingerprint("view", *parts, limits=limits)
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
    counted as engine.tracing.cost counts them (each value and grad, and for each op its
    upstream grad and four numbers per input element), the drawing's text, and some structure
    per node."""
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
