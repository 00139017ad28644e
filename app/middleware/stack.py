"""The middleware around the app, in order, each given the settings once, when the app is made
(middleware has no dependencies to override)."""

from __future__ import annotations

from fastapi import FastAPI

from app import cache
from app.config import Settings
from app.middleware.cache import AnswerCache
from app.middleware.compress import Compress
from app.middleware.guard import LoadShedder, RequestDeadline, SizeGuard
from app.middleware.head import HeadAsGet
from app.middleware.health import Health
from app.middleware.last_resort import LastResort
from app.middleware.security import SecurityHeaders


def add_middleware(app: FastAPI, settings: Settings) -> None:
    """Middleware runs outside-in in the reverse order of adding. From the outside in:

    - LastResort: a bug is a 500 with the security headers, and the connection stays open;
    - SecurityHeaders: on every answer (even a 503, 413 or cached one);
    - Health: `/healthz`, inside SecurityHeaders so that the probe's answer carries them too;
    - HeadAsGet: a HEAD goes in as a GET (guarded, cached, counted as one), its body dropped;
    - SizeGuard: headers, query and body over their limits are refused before any other work,
      and the body is read whole (within body_read_seconds) before the request takes a slot;
    - AnswerCache: the same program again is answered from the worker's memory, already
      compressed, without a slot, routing, a worker thread or the engine (app/cache.py);
    - LoadShedder: max_in_flight, and max_in_flight_per_client;
    - Compress: gzip, counted as work (it is), big bodies in a worker thread;
    - RequestDeadline: the time bound per request.
    """
    cache.configure(settings)
    app.add_middleware(RequestDeadline, seconds=settings.max_request_seconds)
    app.add_middleware(
        Compress,
        minimum_size=settings.gzip_min_bytes,
        level=settings.gzip_level,
        thread_bytes=settings.gzip_thread_bytes,
    )
    app.add_middleware(
        LoadShedder,
        max_in_flight=settings.max_in_flight,
        max_per_client=settings.max_in_flight_per_client,
    )
    app.add_middleware(AnswerCache, settings=settings)
    app.add_middleware(
        SizeGuard,
        max_body_bytes=settings.max_body_bytes,
        max_query_bytes=settings.max_query_bytes,
        max_header_bytes=settings.max_header_bytes,
        body_read_seconds=settings.body_read_seconds,
    )
    app.add_middleware(HeadAsGet)
    app.add_middleware(Health)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(LastResort)
