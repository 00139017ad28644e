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


@lru_cache
def get_settings() -> Settings:
    return Settings()
