"""Settings: the engine's limits and the app's own, overridable from the environment.

One object, read from the environment once, when `get_settings` is first called (not at
import). Routes take it as a dependency (`SettingsDep`), so a test swaps it with
`app.dependency_overrides[get_settings] = ...`; the middleware, which has no dependencies,
is given the same object once, when the app is made (app/middleware/stack.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Annotated, Any

from fastapi import Depends

from engine.limits import Limits

ENV_PREFIX = "GRADTRACE_"  # each setting's variable is this and its name in capitals


@dataclass(frozen=True)
class Settings:
    limits: Limits = field(default_factory=Limits)
    # A request body larger than this is refused before it is read in full.
    max_body_bytes: int = 1024 * 1024
    # The longest a query string may be (permalinks included).
    max_query_bytes: int = 64 * 1024
    # All request headers together (the server has read them by then; this stops the work).
    max_header_bytes: int = 64 * 1024
    # Requests at work at once in one worker; past that the server answers 503 + Retry-After.
    max_in_flight: int = 16
    # The time one request may take. The engine stops at it (413, naming this setting) and
    # Graphviz gets only what is left; work that cannot be stopped is answered 503 + Retry-After
    # a moment later while it runs on, still counted against max_in_flight.
    max_request_seconds: float = 10.0
    # The time a client has to send its whole request body, read before the request counts
    # against max_in_flight: a stalled upload costs a connection, never a slot (408 after it).
    body_read_seconds: float = 5.0
    # Requests at work at once from one client address (uvicorn's scope["client"]: behind a
    # proxy, the client's only if uvicorn trusts the proxy, see app/middleware/guard.py). Under
    # max_in_flight, so that one client cannot take every slot; not far under it, since a
    # classroom behind one NAT is one address. 0: no bound.
    max_in_flight_per_client: int = 8
    # Answers of at least gzip_min_bytes are compressed (level gzip_level) for clients that
    # accept gzip; from gzip_thread_bytes on, in a worker thread, so that the event loop, and
    # every other request with it, never waits on a multi-megabyte compression.
    gzip_min_bytes: int = 1024
    # A trace is mostly repeated keys; level 6 costs a tenth of level 9 for nearly the same size.
    gzip_level: int = 6
    gzip_thread_bytes: int = 64 * 1024
    # How long a thread running Python may keep the GIL while another waits for it (CPython's
    # switch interval). The event loop needs the GIL a few times per request, so while worker
    # threads run programs each of those waits up to this long. CPython's own 5 ms: 1 ms cut
    # the saturated throughput of two workers by a third, and /healthz, answered without
    # routing (app/middleware/health.py), stays under 100 ms beside three heavy clients.
    gil_switch_seconds: float = 0.005
    # How long a browser, proxy or CDN may reuse an answer without asking again (seconds).
    cache_max_age: int = 86_400
    # The bounds of each worker's in-memory caches (answers; views get half the bytes).
    cache_entries: int = 512
    cache_bytes: int = 32 * 1024 * 1024
    # Rooms (the live classroom, app/rooms/): rooms open at once (in this process, or in Redis
    # when redis_url is set), and members (students, each a member id kept by their page's
    # tab, whatever its sockets) in one room.
    max_rooms: int = 1000
    max_students_per_room: int = 500
    # Rooms open at once that one client address made (429 past it): a school behind one NAT
    # runs a few classes at once, a script asking for a thousand gets this many, and each of
    # them ends room_orphan_seconds later unless an instructor connects.
    max_rooms_per_address: int = 20
    # Members of one room from one address: a class behind one NAT fits; one laptop's
    # sockets cannot fill the room. A late student past either bound is told when to retry.
    room_members_per_address: int = 250
    # Sockets of one member in one room on one replica (a reconnect while the old socket is
    # not yet known to be dead, a duplicated tab).
    room_sockets_per_member: int = 3
    # One socket message, JSON (uvicorn's --ws-max-size is the backstop before it is read).
    max_room_message_bytes: int = 16 * 1024
    # Messages an instructor's socket may send: this many a second on average, bursts of
    # room_message_burst (holding down PageDown). Past it: an error; a burst's worth refused
    # in a row closes the socket.
    room_messages_per_second: float = 30.0
    room_message_burst: int = 60
    # The same for a student's socket: a student answers, changes an answer, pings; a page
    # never sends more, and a bot of many sockets costs the server this much each.
    room_student_messages_per_second: float = 2.0
    room_student_message_burst: int = 10
    # A room with no message and nobody joining for this long ends (the spec's 2 hours).
    room_idle_seconds: float = 7200.0
    # A room with no instructor connected for this long ends (one made and never driven, or
    # left): minutes, so that rooms nobody drives never fill max_rooms.
    room_orphan_seconds: float = 300.0
    # Redis restarted empty: the members of a room it lost wait this long for the
    # instructor's page to put it back (same code, key and view) before they are told it
    # expired.
    room_restore_seconds: float = 30.0
    # Unknown room codes one address may ask for a minute (page, API or socket); past it every
    # lookup from it waits (429 or 1013, with when to retry), so codes cannot be guessed.
    room_code_misses_per_minute: int = 60
    # Pages of other sites that may open rooms and their sockets ("https://lms.example.edu,
    # ..."); the app's own origin always may, and a client that sends no Origin (not a
    # browser) too.
    room_allowed_origins: str = ""
    # Open files the app raises its soft limit to at start (at most the hard limit); room
    # sockets may use all of them but room_files_reserve, which HTTP and Redis keep.
    open_files: int = 65536
    room_files_reserve: int = 256
    # The time a new socket has to say hello.
    room_hello_seconds: float = 5.0
    # A socket too slow to read what it is sent is closed: when its queue holds this many
    # messages, or one send takes this long. It never holds up the others.
    room_queue_messages: int = 256
    room_send_seconds: float = 5.0
    # Redis for rooms shared by every replica (GRADTRACE_REDIS_URL, e.g. redis://redis:6379/0);
    # empty: rooms live in this process, so serve them with one worker.
    redis_url: str = ""
    # Connections to Redis per process: a command waits for a free one (never fails for want
    # of one), at most room_redis_seconds, which is also how long one command may take.
    room_redis_connections: int = 16
    room_redis_seconds: float = 2.0
    # Room requests (HTTP) waiting on Redis at once per process; past it, 503 at once, so that
    # a stalled Redis never takes the slots (max_in_flight) other requests need.
    room_requests_in_flight: int = 4
    # The secret that signs instructor keys (any text; the same on every replica). Empty:
    # the replicas make one and share it through Redis (without Redis: one per process).
    room_secret: str = ""

    def with_env(self) -> Settings:
        """These settings, and their limits, with any `GRADTRACE_…` environment overrides."""
        changes: dict[str, Any] = {}
        for f in fields(self):
            raw = os.environ.get(ENV_PREFIX + f.name.upper())
            if raw is not None and f.name != "limits":
                changes[f.name] = type(getattr(self, f.name))(raw)
        return replace(self, limits=self.limits.with_env(), **changes)


@lru_cache
def get_settings() -> Settings:
    """The settings of this process: the defaults with the environment's overrides."""
    return Settings().with_env()


SettingsDep = Annotated[Settings, Depends(get_settings)]
