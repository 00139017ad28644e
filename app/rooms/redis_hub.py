"""Rooms in Redis (GRADTRACE_REDIS_URL), so that an instructor and students connected to
different replicas are in the same room. With the `redis` client's asyncio API.

Per room CODE:
    gradtrace:room:CODE              hash: nonce (of its key), seq (HINCRBY), state, qid,
                                     question, revealed, active (last activity), orphan (when
                                     its last instructor left; absent while one is connected)
    gradtrace:room:CODE:students     sorted set: member id -> when a replica last saw it
    gradtrace:room:CODE:instructors  sorted set: instructor socket id -> the same
    gradtrace:room:CODE:answers:QID  hash: member id -> answer key (one hash per question)
    gradtrace:addr:CODE:ADDRESS      sorted set: the room's members from one client address
    gradtrace:ended:CODE             the nonce of an ended room's key (it is not put back)
and for all rooms:
    gradtrace:rooms                  sorted set: code -> last activity (counts max_rooms)
    gradtrace:by:ADDRESS             sorted set: the rooms an address made (max_rooms_per_address)
    gradtrace:epoch                  a random word: gone means Redis lost everything
    gradtrace:secrets                the secrets that sign instructor keys (app/rooms/codes.py)
A room's keys expire when it ends by itself: room_idle_seconds after its last activity, or
room_orphan_seconds after its last instructor left, whichever is first (each script sets the
TTL from `active` and `orphan`).

One pub/sub channel, gradtrace:bus, carries every room's messages, and each replica subscribes
to it once, at start: so joining never waits for a subscription, and a replica holds one
subscription whatever its rooms. A message is "CODE KIND BODY": T (a state:
"T<seq>|<message>"), A (a message to all), S (to students), I (to instructors), E (an event:
presence, tally, restored, ended:<reason>). Each change is one Lua script, so that it is
atomic: a state's seq, its storing and its PUBLISH happen together, and every replica sees
states in seq order.

Redis work is bounded: a pool of room_redis_connections that a command waits for (never an
error for want of a connection), every command within room_redis_seconds, and a failure is a
RoomError("unavailable") that the client is told to retry, never a closed class.

A replica refreshes its members' times every few seconds; one that has not been seen for
three of those no longer counts (a replica that died takes its members with it). If Redis
restarts empty (the epoch is gone), the replicas keep their sockets: each instructor's socket
is closed with 1012, its page reconnects with the room as it holds it ("restore"), and the
room is back with the same code, key and seq; the students' sockets, still open, get its state
and question again, and their pages send their answers again. A room still gone after
room_restore_seconds has expired.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError

from app.config import Settings
from app.rooms import codes
from app.rooms import protocol as p
from app.rooms.hub import (
    CODE_TRIES,
    PUT_BACK,
    TRY_LATER,
    Created,
    Hub,
    Latest,
    Local,
    Member,
    RoomError,
    RoomView,
    address_full,
    full_of_rooms,
    gone,
    room_full,
    too_many_rooms,
    unavailable,
    was_ended,
)

log = logging.getLogger("gradtrace.rooms")
PREFIX = "gradtrace:"
INDEX = PREFIX + "rooms"
BUS = PREFIX + "bus"
EPOCH = PREFIX + "epoch"
SECRETS = PREFIX + "secrets"
ENDED_SECONDS = 3600  # how long an ended room's key is kept from putting it back

# Every room script's first lines. KEYS: the room, the index, then the script's own. ARGV:
# code, idle seconds, orphan seconds, the bus, then the script's own.
_HEAD = """
local room = KEYS[1]
local students = room .. ':students'
local instructors = room .. ':instructors'
local code, idle, orphan, bus = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
-- the room ends idle seconds after its last activity, or orphan seconds after its last
-- instructor left, whichever is first: every key of it expires then
local function expire()
  local h = redis.call('HMGET', room, 'active', 'orphan', 'qid')
  local t = now()
  local left = tonumber(h[1] or t) + idle - t
  if h[2] then left = math.min(left, tonumber(h[2]) + orphan - t) end
  local ttl = math.max(1, math.floor(left + 0.5))
  for _, k in ipairs({room, students, instructors}) do redis.call('EXPIRE', k, ttl) end
  if h[3] then redis.call('EXPIRE', room .. ':answers:' .. h[3], ttl) end
  return ttl
end
local function touch()
  local t = now()
  redis.call('HSET', room, 'active', string.format('%.3f', t))
  redis.call('ZADD', KEYS[2], 'XX', t, code)
  return expire()
end
local function publish(kind, body) redis.call('PUBLISH', bus, code .. ' ' .. kind .. body) end
"""
# KEYS +: the address's rooms, the ended mark. ARGV +: nonce, state, max rooms, max per
# address, seq, qid or '', question or '', revealed, restoring.
CREATE = """
local t = now()
if redis.call('EXISTS', room) == 1 then return 0 end
if ARGV[13] == '1' and redis.call('GET', KEYS[4]) == ARGV[5] then return -3 end
for _, c in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  if redis.call('EXISTS', '{ROOM}' .. c) == 0 then redis.call('ZREM', KEYS[3], c) end
end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[8]) then return -2 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[7]) then
  for _, c in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    if redis.call('EXISTS', '{ROOM}' .. c) == 0 then redis.call('ZREM', KEYS[2], c) end
  end
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[7]) then return -1 end
end
local at = string.format('%.3f', t)
redis.call('HSET', room, 'nonce', ARGV[5], 'seq', ARGV[9], 'state', ARGV[6],
           'revealed', ARGV[12], 'active', at, 'orphan', at)
if ARGV[10] ~= '' then redis.call('HSET', room, 'qid', ARGV[10], 'question', ARGV[11]) end
redis.call('ZADD', KEYS[2], t, code)
redis.call('ZADD', KEYS[3], t, code)
redis.call('EXPIRE', KEYS[3], math.ceil(idle))
expire()
return 1
"""
STATE = """
if redis.call('EXISTS', room) == 0 then return -1 end
local s = redis.call('HINCRBY', room, 'seq', 1)
redis.call('HSET', room, 'state', ARGV[5])
touch()
publish('T', s .. '|{"type":"state","seq":' .. s .. ',"state":' .. ARGV[5] .. '}')
return s
"""
# KEYS +: the address's members. ARGV +: member id, role, max students, stale seconds, max
# members per address, socket id.
JOIN = """
if redis.call('EXISTS', room) == 0 then return -1 end
local t = now()
local stale = tonumber(ARGV[8])
if ARGV[6] == 'student' then
  redis.call('ZREMRANGEBYSCORE', students, '-inf', t - stale)
  if not redis.call('ZSCORE', students, ARGV[5]) then
    if redis.call('ZCARD', students) >= tonumber(ARGV[7]) then return -2 end
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', t - stale)
    if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[9]) then return -3 end
  end
  redis.call('ZADD', students, t, ARGV[5])
  redis.call('ZADD', KEYS[3], t, ARGV[5])
  redis.call('EXPIRE', KEYS[3], math.ceil(stale * 2))
  publish('E', 'presence')
else
  redis.call('ZADD', instructors, t, ARGV[10])
  redis.call('HDEL', room, 'orphan')
end
touch()
return 1
"""
# KEYS +: the address's members. ARGV +: member or socket id, role, stale seconds, still here.
LEAVE = """
if redis.call('EXISTS', room) == 0 then return 0 end
if ARGV[6] == 'student' then
  if ARGV[8] == '0' then
    redis.call('ZREM', students, ARGV[5])
    redis.call('ZREM', KEYS[3], ARGV[5])
  end
  publish('E', 'presence')
else
  redis.call('ZREM', instructors, ARGV[5])
  if redis.call('ZCOUNT', instructors, now() - tonumber(ARGV[7]), '+inf') == 0 then
    redis.call('HSET', room, 'orphan', string.format('%.3f', now()))
    expire()
  end
end
return 1
"""
# ARGV +: stale seconds, n, then n pairs (member id, its address's key), then instructor
# socket ids. 0: the room is gone.
HEARTBEAT = """
if redis.call('EXISTS', room) == 0 then return 0 end
local t = now()
local stale = tonumber(ARGV[5])
local i = 7
for _ = 1, tonumber(ARGV[6]) do
  redis.call('ZADD', students, t, ARGV[i])
  redis.call('ZADD', ARGV[i + 1], t, ARGV[i])
  redis.call('EXPIRE', ARGV[i + 1], math.ceil(stale * 2))
  i = i + 2
end
while i <= #ARGV do
  redis.call('ZADD', instructors, t, ARGV[i])
  i = i + 1
end
redis.call('ZREMRANGEBYSCORE', instructors, '-inf', t - stale)
if redis.call('ZCARD', instructors) == 0 and not redis.call('HGET', room, 'orphan') then
  redis.call('HSET', room, 'orphan', string.format('%.3f', t))
end
expire()
return 1
"""
COUNT = """
return redis.call('ZCOUNT', students, now() - tonumber(ARGV[5]), '+inf')
"""
# ARGV +: member id. {seq, state, question or false, revealed, the member's answer or false}
LATEST = """
local h = redis.call('HMGET', room, 'seq', 'state', 'question', 'revealed', 'qid')
if not h[1] then return false end
local mine = false
if h[5] then mine = redis.call('HGET', room .. ':answers:' .. h[5], ARGV[5]) end
return {h[1], h[2], h[3], h[4], mine}
"""
# {question, answer keys...}, or false
TALLY = """
local h = redis.call('HMGET', room, 'question', 'qid')
if not h[1] then return false end
local out = {h[1]}
for _, v in ipairs(redis.call('HVALS', room .. ':answers:' .. h[2])) do out[#out + 1] = v end
return out
"""
# ARGV +: qid, question json, message to students, message to instructors
ASK = """
if redis.call('EXISTS', room) == 0 then return -1 end
local old = redis.call('HGET', room, 'qid')
if old then redis.call('DEL', room .. ':answers:' .. old) end
redis.call('HSET', room, 'qid', ARGV[5], 'question', ARGV[6], 'revealed', '0')
touch()
publish('S', ARGV[7])
publish('I', ARGV[8])
publish('E', 'tally')
return 1
"""
# ARGV +: qid, member id, key
ANSWER = """
if redis.call('EXISTS', room) == 0 then return -1 end
if redis.call('HGET', room, 'qid') ~= ARGV[5] then return -2 end
if redis.call('HGET', room, 'revealed') == '1' then return -3 end
redis.call('HSET', room .. ':answers:' .. ARGV[5], ARGV[6], ARGV[7])
touch()
publish('E', 'tally')
return 1
"""
# ARGV +: qid. Returns {question json, answer keys...}, or a number when refused.
REVEAL = """
if redis.call('EXISTS', room) == 0 then return -1 end
if redis.call('HGET', room, 'qid') ~= ARGV[5] then return -2 end
if redis.call('HGET', room, 'revealed') == '1' then return -3 end
redis.call('HSET', room, 'revealed', '1')
touch()
local out = {redis.call('HGET', room, 'question')}
for _, v in ipairs(redis.call('HVALS', room .. ':answers:' .. ARGV[5])) do out[#out + 1] = v end
return out
"""
# KEYS +: the ended mark. ARGV +: reason, how long the mark stays
END = """
if redis.call('EXISTS', room) == 0 then return 0 end
local h = redis.call('HMGET', room, 'qid', 'nonce')
if h[1] then redis.call('DEL', room .. ':answers:' .. h[1]) end
redis.call('DEL', room, students, instructors)
redis.call('ZREM', KEYS[2], code)
redis.call('SET', KEYS[3], h[2] or '', 'EX', ARGV[6])
publish('E', 'ended:' .. ARGV[5])
return 1
"""
# KEYS: the secrets. ARGV: 'first' and a fresh secret (added only if there is none), or
# 'share' and the secrets this replica knows (all added). Returns them all.
SHARE_SECRETS = """
if ARGV[1] == 'share' or redis.call('SCARD', KEYS[1]) == 0 then
  for i = 2, #ARGV do redis.call('SADD', KEYS[1], ARGV[i]) end
end
return redis.call('SMEMBERS', KEYS[1])
"""
ROOM_SCRIPTS = {"create": CREATE, "state": STATE, "join": JOIN, "leave": LEAVE,
                "heartbeat": HEARTBEAT, "count": COUNT, "latest": LATEST, "tally": TALLY,
                "ask": ASK, "answer": ANSWER, "reveal": REVEAL, "end": END}  # fmt: skip


def room_key(code: str) -> str:
    return f"{PREFIX}room:{code}"


def by_address(address: str) -> str:
    return f"{PREFIX}by:{address}"


def of_address(code: str, address: str) -> str:
    return f"{PREFIX}addr:{code}:{address}"


def ended_key(code: str) -> str:
    return f"{PREFIX}ended:{code}"


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


class RedisHub(Hub):
    """Rooms in Redis; the sockets here are told of their room's messages through the bus."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
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
            name: self.redis.register_script((_HEAD + text).replace("{ROOM}", PREFIX + "room:"))
            for name, text in ROOM_SCRIPTS.items()
        }
        self.share_secrets = self.redis.register_script(SHARE_SECRETS)
        self.secrets: list[str] = [settings.room_secret] if settings.room_secret else []
        self.epoch: str | None = None
        self.restarted: float | None = None  # when this replica found Redis had lost all
        self._ready = asyncio.Event()
        self._subscribed = asyncio.Event()
        self._start_lock = asyncio.Lock()
        self._background_task: asyncio.Task[None] | None = None
        s = settings
        self.every = max(0.2, min(5.0, s.room_idle_seconds / 4, s.room_orphan_seconds / 4))
        self.stale = 3 * self.every + 1

    def _reaching(self, what: str = "the room") -> _Reaching:
        return _Reaching(self.settings.room_redis_seconds, what)

    def _args(self) -> list[Any]:
        s = self.settings
        return [s.room_idle_seconds, s.room_orphan_seconds, BUS]

    async def _run(self, name: str, code: str, *args: Any, keys: tuple[str, ...] = ()) -> Any:
        async with self._reaching():
            return await self.scripts[name](
                keys=[room_key(code), INDEX, *keys], args=[code, *self._args(), *args]
            )

    # --- start, the bus, the heartbeat ----------------------------------------------------------
    async def start(self) -> None:
        if self._ready.is_set():
            return
        async with self._start_lock:
            if self._ready.is_set():
                return
            async with self._reaching("classes"):
                await self._check_epoch()
                await self._load_secrets()
                if self._background_task is None:
                    await self.pubsub.subscribe(BUS)
                    self._background_task = self.spawn(self._background())
            try:
                await asyncio.wait_for(self._subscribed.wait(), self.settings.room_redis_seconds)
            except TimeoutError:
                raise unavailable("classes") from None
            self._ready.set()

    async def close(self) -> None:
        await super().close()
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.redis.aclose()

    async def _load_secrets(self) -> None:
        if self.settings.room_secret:
            return
        if self.secrets:
            found = await self.share_secrets(keys=[SECRETS], args=["share", *self.secrets])
        else:
            found = await self.share_secrets(keys=[SECRETS], args=["first", codes.new_secret()])
        known = set(self.secrets)
        self.secrets += sorted(set(found) - known)

    async def _check_epoch(self) -> None:
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

    def _restoring(self) -> bool:
        return (
            self.restarted is not None
            and time.monotonic() - self.restarted < self.settings.room_restore_seconds
        )

    async def _background(self) -> None:
        listen = asyncio.ensure_future(self._listener())
        try:
            while True:
                await asyncio.sleep(self.every)
                with contextlib.suppress(RoomError):  # logged; the next beat tries again
                    await self._heartbeat()
        finally:
            listen.cancel()

    async def _listener(self) -> None:
        """Read the bus for ever, handing each message to the sockets here. After a lost
        connection (Redis restarted, say), redis-py reconnects and subscribes again; what was
        published meanwhile is caught up (_resync)."""
        while True:
            try:
                msg = await self.pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis went away: it reconnects and resubscribes
                log.warning("rooms: reading Redis pub/sub failed (%s); retrying", exc)
                await asyncio.sleep(0.5)
                continue
            if msg is None:
                continue
            if msg["type"] == "subscribe":
                if self._subscribed.is_set():  # again: a new connection, maybe a new Redis
                    self.spawn(self._resync())
                self._subscribed.set()
            elif msg["type"] == "message":
                self._dispatch(msg["data"])

    def _dispatch(self, data: str) -> None:
        code, _, rest = data.partition(" ")
        kind, body = rest[:1], rest[1:]
        if code not in self.local:
            return
        if kind == "T":
            seq, _, text = body.partition("|")
            self.deliver_state(code, int(seq), text)
        elif kind in "ASI" and kind:
            self.deliver(code, body, {"A": "all", "S": "students", "I": "instructors"}[kind])
        elif body in ("presence", "tally"):
            self.poke(code, body)
        elif body == "restored":
            self.spawn(self._beat_room(code))
        elif body.startswith("ended:"):
            self.end_here(code, body[6:])

    async def _resync(self) -> None:
        """After the bus was lost: the check for a Redis that lost its rooms, and every room
        here its latest state, its question and a reveal that were published meanwhile."""
        with contextlib.suppress(RoomError):
            await self._heartbeat()
            for code in list(self.local):
                await self._catch_up(code)

    async def _catch_up(self, code: str) -> None:
        found = await self._run("latest", code, "")
        if not found:
            return
        seq, state, question, revealed, _ = found
        self.deliver_state(code, int(seq), p.state_message(int(seq), state))
        if question:
            q = p.Question.from_json(question)
            if revealed == "1":
                tally = await self._tally(code)
                if tally is not None:
                    self.deliver(code, p.dumps(q.reveal(tally[1])))
            else:
                self.deliver(code, p.dumps(q.public()), "students")
                self.deliver(code, p.dumps(q.full()), "instructors")

    async def _heartbeat(self) -> None:
        """Keep this replica's members counted, notice a Redis that lost its rooms, and find
        the rooms that have ended by themselves."""
        async with self._reaching():
            await self._check_epoch()
            await self._load_secrets()
        for code in list(self.local):
            await self._beat_room(code)

    async def _beat_room(self, code: str) -> None:
        room = self.local.get(code)
        if room is None:
            return
        if not room.sockets:
            self.local.pop(code, None)
            return
        args: list[Any] = [self.stale, len(room.students())]
        for m in room.students():
            args += [m.id, of_address(code, m.address)]
        args += [m.sid for m in room.instructors()]
        try:
            alive = await self._run("heartbeat", code, *args)
        except RoomError:
            return
        if alive:
            if room.lost is not None:
                room.lost = None
                self.poke(code, "presence")
            return
        self._gone_here(code, room)

    def _gone_here(self, code: str, room: Local) -> None:
        """The room is not in Redis. Ended by itself (an idle or undriven room) unless Redis
        lost it: then its instructors here are closed (their pages put it back) and its
        students wait, for room_restore_seconds at most."""
        now = time.monotonic()
        if room.lost is None and self._restoring():
            room.lost = now
            for m in room.instructors():
                m.finish(None, PUT_BACK)
        elif room.lost is None or now - room.lost > self.settings.room_restore_seconds:
            self.end_here(code, "expired")

    async def _missing(self, code: str, instructor: bool = False) -> RoomError:
        """The refusal for a room that is not in Redis: gone, or (Redis lost it) to be put
        back: an instructor reconnects to restore it, a student tries again soon."""
        with contextlib.suppress(RoomError):
            async with self._reaching():
                await self._check_epoch()
        if not self._restoring():
            return gone(code)
        if instructor:
            return RoomError("lost", f"room {code} is to be put back: reconnect", PUT_BACK)
        return RoomError(
            "unavailable", f"room {code} is being put back: try again", TRY_LATER, retry_after=2.0
        )

    # --- the rooms ------------------------------------------------------------------------------
    async def create(
        self,
        state: dict[str, Any],
        address: str | None,
        restore: tuple[str, str, p.Restore] | None = None,
    ) -> Created:
        await self.start()
        s = self.settings
        addr = address or "-"
        ttl = int(s.room_idle_seconds)
        if restore is not None:
            code, key, back = restore
            q = back.question
            made = await self._run(
                "create", code, codes.key_nonce(key), p.dumps(back.state), s.max_rooms,
                s.max_rooms_per_address, back.next_seq, q.id if q else "", q.to_json() if q else "",
                "1" if back.revealed else "0", "1",
                keys=(by_address(addr), ended_key(code)),
            )  # fmt: skip
            _created(made, s, code)
            if made == 1:
                await self._announce_restored(code, back)
            return Created(code, key, ttl)
        for _ in range(CODE_TRIES):
            code = codes.new_code()
            key = codes.new_key(self.secrets[0], code)
            made = await self._run(
                "create", code, codes.key_nonce(key), p.dumps(state), s.max_rooms,
                s.max_rooms_per_address, 0, "", "", "0", "0",
                keys=(by_address(addr), ended_key(code)),
            )  # fmt: skip
            _created(made, s, code)
            if made == 1:
                return Created(code, key, ttl)
        raise full_of_rooms(s.max_rooms)

    async def _announce_restored(self, code: str, back: p.Restore) -> None:
        """The room put back: its state and question to the sockets still open on every
        replica (their pages send their answers again), and each replica counts its members."""
        text = p.state_message(back.next_seq, p.dumps(back.state))
        pipe = self.redis.pipeline(transaction=False)
        pipe.publish(BUS, f"{code} T{back.next_seq}|{text}")
        if back.question is not None and not back.revealed:
            pipe.publish(BUS, f"{code} S{p.dumps(back.question.public())}")
            pipe.publish(BUS, f"{code} I{p.dumps(back.question.full())}")
        pipe.publish(BUS, f"{code} Erestored")
        async with self._reaching():
            await pipe.execute()

    async def view(self, code: str) -> RoomView | None:
        await self.start()
        async with self._reaching():
            seq, state = await self.redis.hmget(room_key(code), ["seq", "state"])
        if seq is None:
            return None
        return RoomView(code, await self.student_count(code), int(seq), json.loads(state))

    async def key_matches(self, code: str, key: str | None) -> bool:
        await self.start()
        async with self._reaching():
            nonce = await self.redis.hget(room_key(code), "nonce")
        return codes.key_matches(key, code, nonce, self.secrets)

    async def key_signed(self, code: str, key: str | None) -> bool:
        await self.start()
        if codes.key_signed(key, code, self.secrets):
            return True
        with contextlib.suppress(RoomError):
            async with self._reaching():
                await self._load_secrets()  # another replica's, shared since the last beat
        return codes.key_signed(key, code, self.secrets)

    async def end(self, code: str, reason: str = "ended") -> bool:
        await self.start()
        return bool(await self._run("end", code, reason, ENDED_SECONDS, keys=(ended_key(code),)))

    async def set_state(self, code: str, state: dict[str, Any]) -> int:
        seq = int(await self._run("state", code, p.dumps(state)))
        if seq < 0:
            raise await self._missing(code, instructor=True)
        return seq

    async def ask(self, code: str, q: p.Question) -> None:
        public, full = p.dumps(q.public()), p.dumps(q.full())
        done = await self._run("ask", code, q.id, full, public, full)
        if done < 0:
            raise await self._missing(code, instructor=True)

    async def answer(self, code: str, member: Member, qid: str, value: Any) -> str:
        q = await self._question(code, qid)
        key = q.key_of(value)
        done = await self._run("answer", code, qid, member.id, key)
        if done == -1:
            raise await self._missing(code, member.instructor)
        _check(done, code, qid)
        return key

    async def reveal(self, code: str, qid: str) -> None:
        out = await self._run("reveal", code, qid)
        if not isinstance(out, list):
            if out == -1:
                raise await self._missing(code, instructor=True)
            _check(out, code, qid)
        q = p.Question.from_json(out[0])
        msg = p.dumps(q.reveal(p.counts_of(out[1:])))
        async with self._reaching():
            await self.redis.publish(BUS, f"{code} A{msg}")

    async def student_count(self, code: str) -> int:
        return int(await self._run("count", code, self.stale))

    async def _question(self, code: str, qid: str) -> p.Question:
        async with self._reaching():
            text, open_id = await self.redis.hmget(room_key(code), ["question", "qid"])
        if text is None or open_id != qid:
            raise RoomError("closed", f"no open question {qid!r}")
        return p.Question.from_json(text)

    async def _admit(self, code: str, member: Member) -> None:
        s = self.settings
        done = await self._run(
            "join", code, member.id, member.role, s.max_students_per_room, self.stale,
            s.room_members_per_address, member.sid, keys=(of_address(code, member.address),),
        )  # fmt: skip
        if done == -1:
            raise await self._missing(code, member.instructor)
        if done == -2:
            raise room_full(s.max_students_per_room)
        if done == -3:
            raise address_full(s.room_members_per_address)

    async def _release(self, code: str, member: Member, still_here: bool) -> None:
        with contextlib.suppress(RoomError):
            await self._run(
                "leave", code, member.id if not member.instructor else member.sid, member.role,
                self.stale, "1" if still_here else "0", keys=(of_address(code, member.address),),
            )  # fmt: skip

    async def _latest(self, code: str, member: Member) -> Latest:
        found = await self._run("latest", code, member.id if not member.instructor else "")
        if not found:
            raise await self._missing(code, member.instructor)
        seq, state, question, revealed, mine = found
        q = p.Question.from_json(question) if question else None
        return Latest(int(seq), state, q, revealed == "1", mine or None)

    async def _tally(self, code: str) -> tuple[p.Question, dict[str, int]] | None:
        out = await self._run("tally", code)
        if not out:
            return None
        return p.Question.from_json(out[0]), p.counts_of(out[1:])


def _created(made: int, s: Settings, code: str) -> None:
    if made == -1:
        raise full_of_rooms(s.max_rooms)
    if made == -2:
        raise too_many_rooms(s.max_rooms_per_address)
    if made == -3:
        raise was_ended(code)


def _check(done: int, code: str, qid: str) -> None:
    if done == -1:
        raise gone(code)
    if done == -2:
        raise RoomError("closed", f"no open question {qid!r}")
    if done == -3:
        raise RoomError("closed", f"question {qid!r} has been revealed: answers are closed")
