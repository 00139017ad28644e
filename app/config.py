"""Settings: the engine's limits and the app's own, overridable from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache

from engine.limits import Limits


@dataclass(frozen=True)
class Settings:
    limits: Limits = field(default_factory=lambda: Limits().with_env())
    # A request body larger than this is refused before it is read in full.
    max_body_bytes: int = int(os.environ.get("GRADTRACE_MAX_BODY_BYTES", 1024 * 1024))
    # The longest a query string may be (permalinks included).
    max_query_bytes: int = int(os.environ.get("GRADTRACE_MAX_QUERY_BYTES", 64 * 1024))
    # All request headers together (the server has read them by then; this stops the work).
    max_header_bytes: int = int(os.environ.get("GRADTRACE_MAX_HEADER_BYTES", 64 * 1024))
    # Requests at work at once in one worker; past that the server answers 503 + Retry-After.
    max_in_flight: int = int(os.environ.get("GRADTRACE_MAX_IN_FLIGHT", 16))
    # The time one request may take. The engine stops at it (413, naming this setting) and
    # Graphviz gets only what is left; work that cannot be stopped is answered 503 + Retry-After
    # a moment later while it runs on, still counted against max_in_flight.
    max_request_seconds: float = float(os.environ.get("GRADTRACE_MAX_REQUEST_SECONDS", 10.0))
    # The time a client has to send its whole request body, read before the request counts
    # against max_in_flight: a stalled upload costs a connection, never a slot (408 after it).
    body_read_seconds: float = float(os.environ.get("GRADTRACE_BODY_READ_SECONDS", 5.0))
    # Requests at work at once from one client address (uvicorn's scope["client"]: behind a
    # proxy, the client's only if uvicorn trusts the proxy, see app/guard.py). Under
    # max_in_flight, so that one client cannot take every slot; not far under it, since a
    # classroom behind one NAT is one address. 0: no bound.
    max_in_flight_per_client: int = int(os.environ.get("GRADTRACE_MAX_IN_FLIGHT_PER_CLIENT", 8))
    # Answers of at least gzip_min_bytes are compressed (level gzip_level) for clients that
    # accept gzip; from gzip_thread_bytes on, in a worker thread, so that the event loop, and
    # every other request with it, never waits on a multi-megabyte compression.
    gzip_min_bytes: int = int(os.environ.get("GRADTRACE_GZIP_MIN_BYTES", 1024))
    gzip_level: int = int(os.environ.get("GRADTRACE_GZIP_LEVEL", 6))
    gzip_thread_bytes: int = int(os.environ.get("GRADTRACE_GZIP_THREAD_BYTES", 64 * 1024))
    # How long a thread running Python may keep the GIL while another waits for it (CPython's
    # switch interval). The event loop needs the GIL a few times per request, so while worker
    # threads run programs each of those waits up to this long. CPython's own 5 ms: 1 ms cut
    # the saturated throughput of two workers by a third, and /healthz, answered without
    # routing (app/main.py, Health), stays under 100 ms beside three heavy clients without it.
    gil_switch_seconds: float = float(os.environ.get("GRADTRACE_GIL_SWITCH_SECONDS", 0.005))


@lru_cache
def get_settings() -> Settings:
    return Settings()
