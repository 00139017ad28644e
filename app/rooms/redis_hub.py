"""Rooms in Redis (GRADTRACE_REDIS_URL), so that an instructor and students connected to
different replicas are in the same room. With the `redis` client's asyncio API.

Per room CODE, every key expiring after room_idle_seconds without activity:
    gradtrace:room:CODE              hash: key, seq (HINCRBY), state, qid, question, revealed
    gradtrace:room:CODE:students     sorted set: member id -> when its process last saw it
    gradtrace:room:CODE:answers:QID  hash: member id -> answer key (one hash per question)
    gradtrace:rooms                  sorted set: code -> last activity (counts max_rooms)
and one pub/sub channel, gradtrace:chan:CODE, to which each process with members of the room
subscribes. What goes over it starts with one letter: T (a state: "T<seq>|<message>"), A (a
message to all), S (to students), I (to instructors), E (an event: presence, tally,
ended:<reason>). Each change is one Lua script, so that it is atomic: a state's seq, its
storing and its PUBLISH happen together, and every process sees states in seq order.

A process refreshes its students' times every few seconds; one that has not been seen for
three of those no longer counts (a replica that died takes its students with it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import redis.asyncio as aioredis

from app.config import Settings
from app.rooms import codes
from app.rooms import protocol as p
from app.rooms.hub import (
    CODE_TRIES,
    Created,
    Hub,
    Member,
    RoomError,
    RoomView,
    full_of_rooms,
    gone,
    room_full,
)

log = logging.getLogger("gradtrace.rooms")
PREFIX = "gradtrace:"
INDEX = PREFIX + "rooms"
CONTROL = PREFIX + "control"  # subscribed from the start, so the listener always has one

# Every script's first lines (put before each below): the room's key names, and `touch`,
# which keeps the room alive.
_HEAD = """
local room = KEYS[1]
local students = room .. ':students'
local function now() return tonumber(redis.call('TIME')[1]) end
local function touch(ttl)
  redis.call('EXPIRE', room, ttl)
  redis.call('EXPIRE', students, ttl)
  local q = redis.call('HGET', room, 'qid')
  if q then redis.call('EXPIRE', room .. ':answers:' .. q, ttl) end
  redis.call('ZADD', KEYS[2], 'XX', now(), ARGV[1])
end
"""
# KEYS: room, index. ARGV: code, ttl, then each script's own.
CREATE = """
local t = now()
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', t - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return -1 end
if redis.call('EXISTS', room) == 1 then return 0 end
redis.call('HSET', room, 'key', ARGV[3], 'seq', 0, 'state', ARGV[4], 'revealed', '0')
redis.call('EXPIRE', room, ARGV[2])
redis.call('ZADD', KEYS[2], t, ARGV[1])
return 1
"""
STATE = """
if redis.call('EXISTS', room) == 0 then return -1 end
local s = redis.call('HINCRBY', room, 'seq', 1)
redis.call('HSET', room, 'state', ARGV[4])
touch(ARGV[2])
redis.call('PUBLISH', ARGV[3],
  'T' .. s .. '|{"type":"state","seq":' .. s .. ',"state":' .. ARGV[4] .. '}')
return s
"""
# ARGV: code, ttl, channel, member, max students, stale seconds, role
JOIN = """
if redis.call('EXISTS', room) == 0 then return -1 end
if ARGV[7] == 'student' then
  local t = now()
  redis.call('ZREMRANGEBYSCORE', students, '-inf', t - tonumber(ARGV[6]))
  if redis.call('ZSCORE', students, ARGV[4]) == false
     and redis.call('ZCARD', students) >= tonumber(ARGV[5]) then return -2 end
  redis.call('ZADD', students, t, ARGV[4])
  redis.call('PUBLISH', ARGV[3], 'Epresence')
end
touch(ARGV[2])
return 1
"""
# ARGV: code, stale seconds, then the member ids seen here. 0: the room is gone.
HEARTBEAT = """
if redis.call('EXISTS', room) == 0 then return 0 end
local t = now()
for i = 3, #ARGV do redis.call('ZADD', students, t, ARGV[i]) end
local ttl = redis.call('TTL', room)
if ttl > 0 then redis.call('EXPIRE', students, ttl) end
return 1
"""
COUNT = """
return redis.call('ZCOUNT', students, now() - tonumber(ARGV[2]), '+inf')
"""
# ARGV: code, ttl, channel, qid, question json, message to students, message to instructors
ASK = """
if redis.call('EXISTS', room) == 0 then return -1 end
local old = redis.call('HGET', room, 'qid')
if old then redis.call('DEL', room .. ':answers:' .. old) end
redis.call('HSET', room, 'qid', ARGV[4], 'question', ARGV[5], 'revealed', '0')
touch(ARGV[2])
redis.call('PUBLISH', ARGV[3], 'S' .. ARGV[6])
redis.call('PUBLISH', ARGV[3], 'I' .. ARGV[7])
redis.call('PUBLISH', ARGV[3], 'Etally')
return 1
"""
# ARGV: code, ttl, channel, qid, member, key
ANSWER = """
if redis.call('EXISTS', room) == 0 then return -1 end
if redis.call('HGET', room, 'qid') ~= ARGV[4] then return -2 end
if redis.call('HGET', room, 'revealed') == '1' then return -3 end
redis.call('HSET', room .. ':answers:' .. ARGV[4], ARGV[5], ARGV[6])
touch(ARGV[2])
redis.call('PUBLISH', ARGV[3], 'Etally')
return 1
"""
# ARGV: code, ttl, qid. Returns {question json, answer keys...}, or a number when refused.
REVEAL = """
if redis.call('EXISTS', room) == 0 then return -1 end
if redis.call('HGET', room, 'qid') ~= ARGV[3] then return -2 end
if redis.call('HGET', room, 'revealed') == '1' then return -3 end
redis.call('HSET', room, 'revealed', '1')
touch(ARGV[2])
local out = {redis.call('HGET', room, 'question')}
for _, v in ipairs(redis.call('HVALS', room .. ':answers:' .. ARGV[3])) do out[#out + 1] = v end
return out
"""
# ARGV: code, channel, reason
END = """
if redis.call('EXISTS', room) == 0 then return 0 end
local q = redis.call('HGET', room, 'qid')
if q then redis.call('DEL', room .. ':answers:' .. q) end
redis.call('DEL', room, students)
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], 'Eended:' .. ARGV[3])
return 1
"""


def room_key(code: str) -> str:
    return f"{PREFIX}room:{code}"


def channel(code: str) -> str:
    return f"{PREFIX}chan:{code}"


class RedisHub(Hub):
    """Rooms in Redis; members here are told of their room's messages through pub/sub."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        # decode_responses: every answer is str (Any: the client's hints say bytes | str).
        self.redis: Any = aioredis.Redis.from_url(
            settings.redis_url, decode_responses=True, health_check_interval=30
        )
        self.pubsub = self.redis.pubsub()
        self.scripts = {
            name: self.redis.register_script(_HEAD + text)
            for name, text in (("create", CREATE), ("state", STATE), ("join", JOIN),
                               ("heartbeat", HEARTBEAT), ("count", COUNT), ("ask", ASK),
                               ("answer", ANSWER), ("reveal", REVEAL), ("end", END))
        }  # fmt: skip
        self.subscribed: dict[str, asyncio.Event] = {}
        self._started: asyncio.Task[None] | None = None
        self.every = max(0.2, min(5.0, settings.room_idle_seconds / 4))  # heartbeat, sweep
        self.stale = 3 * self.every + 1

    @property
    def ttl(self) -> int:
        return max(1, round(self.settings.room_idle_seconds))

    async def _run(self, name: str, code: str, *args: Any) -> Any:
        return await self.scripts[name](keys=[room_key(code), INDEX], args=[code, *args])

    async def start(self) -> None:
        if self._started is None:
            self._started = self.spawn(self._background())
            await self.pubsub.subscribe(CONTROL)

    async def close(self) -> None:
        await super().close()
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.redis.aclose()

    async def _background(self) -> None:
        listen = asyncio.ensure_future(self._listener())
        try:
            while True:
                await asyncio.sleep(self.every)
                await self._heartbeat()
        finally:
            listen.cancel()

    async def _listener(self) -> None:
        """Read the subscribed channels for ever, handing each message to the members here."""
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
            name = msg.get("channel") or ""
            if msg["type"] == "subscribe" and name in self.subscribed:
                self.subscribed[name].set()
            elif msg["type"] == "message" and name.startswith(PREFIX + "chan:"):
                self._dispatch(name[len(PREFIX) + 5 :], msg["data"])

    def _dispatch(self, code: str, data: str) -> None:
        kind, body = data[:1], data[1:]
        if kind == "T":
            seq, _, text = body.partition("|")
            self.deliver_state(code, int(seq), text)
        elif kind in "ASI":
            self.deliver(code, body, {"A": "all", "S": "students", "I": "instructors"}[kind])
        elif body in ("presence", "tally"):
            self.poke(code, body)
        elif body.startswith("ended:"):
            self.end_here(code, body[6:])

    def _emptied(self, code: str) -> None:
        """Keep listening a while (the next heartbeat unsubscribes): a phone that reconnects
        comes straight back."""

    def end_here(self, code: str, reason: str) -> None:
        super().end_here(code, reason)
        if self.subscribed.pop(channel(code), None) is not None:
            self.spawn(self._unsubscribe(code))

    async def _unsubscribe(self, code: str) -> None:
        with contextlib.suppress(Exception):
            await self.pubsub.unsubscribe(channel(code))

    async def _listen(self, code: str) -> None:
        name = channel(code)
        event = self.subscribed.get(name)
        if event is None:
            event = self.subscribed[name] = asyncio.Event()
            await self.pubsub.subscribe(name)
        # Only once Redis has the subscription is the latest state read: none is missed.
        await asyncio.wait_for(event.wait(), timeout=5.0)

    async def _heartbeat(self) -> None:
        """Keep this process's students counted, and find the rooms that have expired."""
        for code in list(self.local):
            room = self.local.get(code)
            if room is None:
                continue
            if not room.members:  # nobody here any more: stop listening to it
                self.local.pop(code, None)
                if self.subscribed.pop(channel(code), None) is not None:
                    await self._unsubscribe(code)
                continue
            try:
                ids = [m.id for m in room.students()]
                alive = await self._run("heartbeat", code, self.stale, *ids)
            except Exception as exc:
                log.warning("rooms: heartbeat failed (%s)", exc)
                continue
            if not alive:
                self.end_here(code, "expired")

    # --- the rooms ------------------------------------------------------------------------------
    async def create(self, state: dict[str, Any]) -> Created:
        key = codes.new_key()
        for _ in range(CODE_TRIES):
            code = codes.new_code()
            made = await self._run(
                "create", code, self.ttl, key, p.dumps(state), self.settings.max_rooms
            )
            if made == -1:
                raise full_of_rooms(self.settings.max_rooms)
            if made == 1:
                return Created(code, key, self.ttl)
        raise full_of_rooms(self.settings.max_rooms)

    async def view(self, code: str) -> RoomView | None:
        seq, state = await self.redis.hmget(room_key(code), ["seq", "state"])
        if seq is None:
            return None
        return RoomView(code, await self.student_count(code), int(seq), json.loads(state))

    async def key_matches(self, code: str, key: str | None) -> bool:
        return codes.key_matches(key, await self.redis.hget(room_key(code), "key"))

    async def end(self, code: str, reason: str = "ended") -> bool:
        return bool(await self._run("end", code, channel(code), reason))

    async def set_state(self, code: str, state: dict[str, Any]) -> int:
        seq = int(await self._run("state", code, self.ttl, channel(code), p.dumps(state)))
        if seq < 0:
            raise gone(code)
        return seq

    async def ask(self, code: str, q: p.Question) -> None:
        public, full = p.dumps(q.public()), p.dumps(q.full())
        done = await self._run("ask", code, self.ttl, channel(code), q.id, full, public, full)
        if done < 0:
            raise gone(code)

    async def answer(self, code: str, member: Member, qid: str, value: Any) -> str:
        q = await self._question(code, qid)
        key = q.key_of(value)
        done = await self._run("answer", code, self.ttl, channel(code), qid, member.id, key)
        _check(done, code, qid)
        return key

    async def reveal(self, code: str, qid: str) -> None:
        out = await self._run("reveal", code, self.ttl, qid)
        if not isinstance(out, list):
            _check(out, code, qid)
        q = p.Question.from_json(out[0])
        msg = p.dumps(q.reveal(p.counts_of(out[1:])))
        await self.redis.publish(channel(code), "A" + msg)

    async def student_count(self, code: str) -> int:
        return int(await self._run("count", code, self.stale))

    async def _question(self, code: str, qid: str) -> p.Question:
        text, open_id = await self.redis.hmget(room_key(code), ["question", "qid"])
        if text is None or open_id != qid:
            raise RoomError("closed", f"no open question {qid!r}")
        return p.Question.from_json(text)

    async def _admit(self, code: str, member: Member) -> None:
        limit = self.settings.max_students_per_room
        done = await self._run(
            "join", code, self.ttl, channel(code), member.id, limit, self.stale, member.role
        )
        if done == -1:
            raise gone(code)
        if done == -2:
            raise room_full(limit)

    async def _release(self, code: str, member: Member) -> None:
        if member.instructor:
            return
        with contextlib.suppress(Exception):
            await self.redis.zrem(room_key(code) + ":students", member.id)
            await self.redis.publish(channel(code), "Epresence")

    async def _latest(self, code: str) -> tuple[int, str, p.Question | None, bool]:
        seq, state, question, revealed = await self.redis.hmget(
            room_key(code), ["seq", "state", "question", "revealed"]
        )
        if seq is None:
            raise gone(code)
        q = p.Question.from_json(question) if question else None
        return int(seq), state, q, revealed == "1"

    async def _tally(self, code: str) -> tuple[p.Question, dict[str, int]] | None:
        text, qid = await self.redis.hmget(room_key(code), ["question", "qid"])
        if text is None:
            return None
        keys = await self.redis.hvals(f"{room_key(code)}:answers:{qid}")
        return p.Question.from_json(text), p.counts_of(keys)


def _check(done: int, code: str, qid: str) -> None:
    if done == -1:
        raise gone(code)
    if done == -2:
        raise RoomError("closed", f"no open question {qid!r}")
    if done == -3:
        raise RoomError("closed", f"question {qid!r} has been revealed: answers are closed")
