"""What bounds a room's clients before any room is looked at: the Origin a browser sends, the
client's address, the unknown codes one address may try, a token bucket, and the open files
a process has for room sockets.

A class behind one school NAT is one address, so nothing here bounds an address to less than
a class: an address may hold room_members_per_address members of one room (a class fits),
and it is refused only for what no class does (many unknown codes a minute). Per member and
per socket bounds are the hubs' and the session's.
"""

from __future__ import annotations

import resource
import time
from collections import OrderedDict
from collections.abc import Mapping
from urllib.parse import urlsplit

from app.config import Settings

DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443"}
TRACKED_ADDRESSES = 10_000  # addresses remembered for their misses (the oldest forgotten)


class TokenBucket:
    """`rate` tokens a second, at most `burst` saved up; a message (or a miss) takes one."""

    __slots__ = ("rate", "burst", "tokens", "at")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens, self.at = float(burst), time.monotonic()

    def _fill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now

    def take(self) -> bool:
        self._fill()
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def empty(self) -> bool:
        self._fill()
        return self.tokens < 1

    def wait(self) -> float:
        """Seconds until a token is there."""
        self._fill()
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate if self.rate else 60.0


def _netloc(scheme: str, netloc: str) -> str:
    netloc = netloc.lower()
    default = DEFAULT_PORTS.get(scheme)
    return netloc[: -len(default) - 1] if default and netloc.endswith(":" + default) else netloc


def same_site(headers: Mapping[str, str], settings: Settings) -> bool:
    """Whether a request may act on rooms by its Origin: none (not a browser: a script, a
    test, curl), this server's own (the Origin's host and port are the request's Host, as the
    client sent it: through nginx too, which passes $http_host), or one of
    room_allowed_origins. A page of another site is refused, so that it cannot open rooms or
    sockets from its visitors' browsers."""
    origin = headers.get("origin")
    if origin is None:
        return True
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False  # "null" (a sandboxed frame, a file:) included
    host = headers.get("host", "")
    if _netloc(parts.scheme, parts.netloc) == _netloc(parts.scheme, host):
        return True
    allowed = {o.strip().rstrip("/").lower() for o in settings.room_allowed_origins.split(",")}
    return origin.strip().rstrip("/").lower() in allowed - {""}


class Misses:
    """Unknown room codes asked for, per client address, in this process: a bucket of
    room_code_misses_per_minute that refills at that rate. An address whose bucket is empty
    is refused every lookup (a known code too, so that a guesser learns nothing) until it
    refills: guessing one of 7e8 codes at a miss a second takes years, while a class that
    mistypes its code now and then never notices."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self.buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def _bucket(self, address: str) -> TokenBucket:
        bucket = self.buckets.pop(address, None)
        if bucket is None:
            bucket = TokenBucket(self.per_minute / 60.0, self.per_minute)
            while len(self.buckets) >= TRACKED_ADDRESSES:
                self.buckets.popitem(last=False)
        self.buckets[address] = bucket
        return bucket

    def blocked(self, address: str | None) -> float | None:
        """Seconds to wait, if `address` may look up no code now; else None."""
        if not self.per_minute or address is None or address not in self.buckets:
            return None
        bucket = self._bucket(address)
        return round(bucket.wait() + 0.5, 1) if bucket.empty() else None

    def miss(self, address: str | None) -> None:
        if self.per_minute and address is not None:
            self._bucket(address).take()


def raise_open_files(target: int) -> int:
    """Raise this process's soft limit of open files to `target` (at most the hard limit; a
    container's soft limit is 1024, and every room socket is one file); the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = target if hard == resource.RLIM_INFINITY else min(target, hard)
    if want > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return soft


def socket_budget(reserve: int) -> int:
    """Room sockets this process may hold: its open files less `reserve` (HTTP, Redis, the
    Graphviz helpers, the files the app reads), so that a full class never stops the rest."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = 1 << 20 if soft == resource.RLIM_INFINITY else soft
    return max(0, limit - reserve)


def address_of(client: tuple[str, int] | None | object) -> str | None:
    """The client's address as uvicorn gives it (scope["client"]: behind nginx, the one nginx
    set, since uvicorn trusts that one hop only)."""
    host = getattr(client, "host", None)
    if host is None and isinstance(client, tuple) and client:
        host = client[0]
    return str(host) if host else None
