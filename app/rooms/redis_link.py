"""A replica's link to Redis: a bounded pool that a command waits for (never an error for want
of a connection), the rooms' scripts, every call within room_redis_seconds in all (the pool's
wait and one retry included), a failure turned into a refusal the client is told to retry; and
what Redis holds for all rooms: its epoch (gone or new: it lost everything, a restart) and the
secrets that sign instructor keys, which the replicas share there."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError

from app.config import Settings
from app.rooms import codes
from app.rooms.redis_scripts import (
    BUS,
    EPOCH,
    HEAD,
    INDEX,
    PREFIX,
    ROOM_SCRIPTS,
    SECRETS,
    SHARE_SECRETS,
    room_key,
)
from app.rooms.refusals import unavailable

log = logging.getLogger("gradtrace.rooms")


class _Reaching:
    """Redis failing (down, stalled, no connection free in time) is a RoomError
    ("unavailable") the client is told to retry; and whatever is inside takes at most
    `seconds` (room_redis_seconds) in all, the pool's wait and a retry included."""

    def __init__(self, seconds: float, what: str) -> None:
        self.what = what
        self.timeout = asyncio.timeout(seconds)

    async def __aenter__(self) -> None:
        await self.timeout.__aenter__()

    async def __aexit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        try:
            await self.timeout.__aexit__(kind, exc, tb)
        except TimeoutError:
            exc = TimeoutError("longer than room_redis_seconds")
        if isinstance(exc, RedisError | TimeoutError):
            log.warning("rooms: Redis failed (%s: %s)", type(exc).__name__, exc)
            raise unavailable(self.what) from None
        return False


class RedisLink:
    """The connection, the scripts, the epoch and the secrets of one replica."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        wait = settings.room_redis_seconds
        pool = aioredis.BlockingConnectionPool.from_url(
            settings.redis_url,
            max_connections=max(2, settings.room_redis_connections),
            timeout=wait,  # for a free connection
            socket_timeout=wait,
            socket_connect_timeout=wait,
            decode_responses=True,  # every answer is str (Any: the hints say bytes | str)
            health_check_interval=30,
            retry=Retry(ExponentialBackoff(cap=0.2, base=0.05), 1),  # once: a reconnect
        )
        self.redis: Any = aioredis.Redis(connection_pool=pool)
        self.pubsub = self.redis.pubsub()
        self.scripts = {
            name: self.redis.register_script((HEAD + text).replace("{ROOM}", PREFIX + "room:"))
            for name, text in ROOM_SCRIPTS.items()
        }
        self.share_secrets = self.redis.register_script(SHARE_SECRETS)
        self.secrets: list[str] = [settings.room_secret] if settings.room_secret else []
        self.epoch: str | None = None
        self.restarted: float | None = None  # when this replica found Redis had lost all

    def reaching(self, what: str = "the room") -> _Reaching:
        return _Reaching(self.settings.room_redis_seconds, what)

    async def run(self, name: str, code: str, *args: Any, keys: tuple[str, ...] = ()) -> Any:
        """A room script: KEYS the room, the index, `keys`; ARGV the code, the idle and orphan
        seconds, the bus, `args`."""
        s = self.settings
        async with self.reaching():
            return await self.scripts[name](
                keys=[room_key(code), INDEX, *keys],
                args=[code, s.room_idle_seconds, s.room_orphan_seconds, BUS, *args],
            )

    async def load_secrets(self) -> None:
        """The secrets every replica knows, ours added (the first replica's made if none)."""
        if self.settings.room_secret:
            return
        if self.secrets:
            found = await self.share_secrets(keys=[SECRETS], args=["share", *self.secrets])
        else:
            found = await self.share_secrets(keys=[SECRETS], args=["first", codes.new_secret()])
        known = set(self.secrets)
        self.secrets += sorted(set(found) - known)

    async def check_epoch(self) -> None:
        """Redis lost everything (restarted empty, or flushed) when its epoch is gone or new:
        then the rooms it had are to be put back, not expired."""
        seen = await self.redis.get(EPOCH)
        if seen is not None and seen == self.epoch:
            return
        if self.epoch is not None:
            log.warning("rooms: Redis lost its rooms (a restart?); waiting for them to be put back")
            self.restarted = time.monotonic()
        if seen is None:
            await self.redis.set(EPOCH, codes.new_secret()[:16], nx=True)
            seen = await self.redis.get(EPOCH)
        self.epoch = seen

    def restoring(self) -> bool:
        """Whether Redis lost its rooms within room_restore_seconds."""
        return (
            self.restarted is not None
            and time.monotonic() - self.restarted < self.settings.room_restore_seconds
        )

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.redis.aclose()
