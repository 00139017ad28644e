"""A real redis-server (Debian's) on a free 127.0.0.1 port, in a temporary directory, keeping
nothing on disk, for the tests of rooms shared across replicas: the bench's launcher
(bench.rooms.redis_server), so that tests and bench start Redis alike."""

from __future__ import annotations

import shutil

from bench.rooms import REDIS_SERVER, redis_server

__all__ = ["have_redis", "redis_server"]


def have_redis() -> bool:
    return shutil.which(REDIS_SERVER) is not None
