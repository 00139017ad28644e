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
    # Requests at work at once in one worker; past that the server answers 503 + Retry-After.
    max_in_flight: int = int(os.environ.get("GRADTRACE_MAX_IN_FLIGHT", 16))
    max_query_bytes: int = int(os.environ.get("GRADTRACE_MAX_QUERY_BYTES", 64 * 1024))


@lru_cache
def get_settings() -> Settings:
    return Settings()
