"""Rooms in Redis (GRADTRACE_REDIS_URL), so that an instructor and students connected to
different replicas are in the same room. With the `redis` client's asyncio API.

Its keys and scripts are app/rooms/redis_scripts.py's, its connection app/rooms/redis_link.py.
One pub/sub channel, gradtrace:bus, carries every room's messages, and each replica
subscribes to it once, at start: so joining never waits for a subscription, and a replica holds
one subscription whatever its rooms. A message is "CODE KIND BODY": T (a state:
"T<seq>|<message>"), A (a message to all), S (to students), I (to instructors), E (an event:
presence, tally, restored, ended:<reason>). Each change is one Lua script, so that it is
atomic: a state's seq, its storing and its PUBLISH happen together, and every replica sees
states in seq order.

Redis work is bounded (redis_link.py), and a failure is a RoomError("unavailable") that the
client is told to retry, never a closed class.

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

from app.config import Settings
from app.rooms import codes
from app.rooms import protocol as p
from app.rooms.hub import CODE_TRIES, Created, Hub, Latest, RoomView
from app.rooms.members import Local, Member
from app.rooms.redis_link import RedisLink
from app.rooms.redis_scripts import (
    BUS,
    ENDED_SECONDS,
    by_address,
    ended_key,
    of_address,
    refuse_answer,
    refuse_create,
    room_key,
)
from app.rooms.refusals import (
    PUT_BACK,
    TRY_LATER,
    RoomError,
    address_full,
    full_of_rooms,
    gone,
    room_full,
    unavailable,
)

log = logging.getLogger("gradtrace.rooms")


class RedisHub(Hub):
    """Rooms in Redis; the sockets here are told of their room's messages through the bus."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.link = RedisLink(settings)
        self.asked: dict[str, p.Question] = {}  # code -> its open question, as last read
        self._ready = asyncio.Event()
        self._subscribed = asyncio.Event()
        self._start_lock = asyncio.Lock()
        self._background_task: asyncio.Task[None] | None = None
        s = settings
        self.every = max(0.2, min(5.0, s.room_idle_seconds / 4, s.room_orphan_seconds / 4))
        self.stale = 3 * self.every + 1

    # --- start, the bus, the heartbeat ----------------------------------------------------------
    async def start(self) -> None:
        if self._ready.is_set():
            return
        async with self._start_lock:
            if self._ready.is_set():
                return
            async with self.link.reaching("classes"):
                await self.link.check_epoch()
                await self.link.load_secrets()
                if self._background_task is None:
                    await self.link.pubsub.subscribe(BUS)
                    self._background_task = self.spawn(self._background())
            try:
                await asyncio.wait_for(self._subscribed.wait(), self.settings.room_redis_seconds)
            except TimeoutError:
                raise unavailable("classes") from None
            self._ready.set()

    async def close(self) -> None:
        await super().close()
        await self.link.close()

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
                msg = await self.link.pubsub.get_message(timeout=1.0)
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
            if kind != "A":
                self.asked.pop(code, None)  # an ask: the question answers are checked against
            self.deliver(code, body, {"A": "all", "S": "students", "I": "instructors"}[kind])
        elif body in ("presence", "tally"):
            self.poke(code, body)
        elif body == "restored":
            self.spawn(self._beat_room(code))
        elif body.startswith("ended:"):
            self.asked.pop(code, None)
            self.end_here(code, body[6:])

    async def _resync(self) -> None:
        """After the bus was lost: the check for a Redis that lost its rooms, and every room
        here its latest state, its question and a reveal that were published meanwhile."""
        with contextlib.suppress(RoomError):
            await self._heartbeat()
            for code in list(self.local):
                await self._catch_up(code)

    async def _catch_up(self, code: str) -> None:
        found = await self.link.run("latest", code, "")
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
        async with self.link.reaching():
            await self.link.check_epoch()
            await self.link.load_secrets()
        for code in list(self.local):
            await self._beat_room(code)

    async def _beat_room(self, code: str) -> None:
        room = self.local.get(code)
        if room is None:
            return
        if not room.sockets:
            self.local.pop(code, None)
            self.asked.pop(code, None)
            return
        args: list[Any] = [self.stale, len(room.students())]
        for m in room.students():
            args += [m.id, of_address(code, m.address)]
        args += [m.sid for m in room.instructors()]
        try:
            alive = await self.link.run("heartbeat", code, *args)
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
        if room.lost is None and self.link.restoring():
            room.lost = now
            for m in room.instructors():
                m.finish(None, PUT_BACK)
        elif room.lost is None or now - room.lost > self.settings.room_restore_seconds:
            self.end_here(code, "expired")

    async def _missing(self, code: str, instructor: bool = False) -> RoomError:
        """The refusal for a room that is not in Redis: gone, or (Redis lost it) to be put
        back: an instructor reconnects to restore it, a student tries again soon."""
        with contextlib.suppress(RoomError):
            async with self.link.reaching():
                await self.link.check_epoch()
        if not self.link.restoring():
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
            made = await self.link.run(
                "create", code, codes.key_nonce(key), p.dumps(back.state), s.max_rooms,
                s.max_rooms_per_address, back.next_seq, q.id if q else "", q.to_json() if q else "",
                "1" if back.revealed else "0", "1",
                keys=(by_address(addr), ended_key(code)),
            )  # fmt: skip
            refuse_create(made, s, code)
            if made == 1:
                await self._announce_restored(code, back)
            return Created(code, key, ttl)
        for _ in range(CODE_TRIES):
            code = codes.new_code()
            key = codes.new_key(self.link.secrets[0], code)
            made = await self.link.run(
                "create", code, codes.key_nonce(key), p.dumps(state), s.max_rooms,
                s.max_rooms_per_address, 0, "", "", "0", "0",
                keys=(by_address(addr), ended_key(code)),
            )  # fmt: skip
            refuse_create(made, s, code)
            if made == 1:
                return Created(code, key, ttl)
        raise full_of_rooms(s.max_rooms)

    async def _announce_restored(self, code: str, back: p.Restore) -> None:
        """The room put back: its state and question to the sockets still open on every
        replica (their pages send their answers again), and each replica counts its members."""
        text = p.state_message(back.next_seq, p.dumps(back.state))
        pipe = self.link.redis.pipeline(transaction=False)
        pipe.publish(BUS, f"{code} T{back.next_seq}|{text}")
        if back.question is not None and not back.revealed:
            pipe.publish(BUS, f"{code} S{p.dumps(back.question.public())}")
            pipe.publish(BUS, f"{code} I{p.dumps(back.question.full())}")
        pipe.publish(BUS, f"{code} Erestored")
        async with self.link.reaching():
            await pipe.execute()

    async def view(self, code: str) -> RoomView | None:
        await self.start()
        async with self.link.reaching():
            seq, state = await self.link.redis.hmget(room_key(code), ["seq", "state"])
        if seq is None:
            return None
        return RoomView(code, await self.student_count(code), int(seq), json.loads(state))

    async def key_matches(self, code: str, key: str | None) -> bool:
        await self.start()
        async with self.link.reaching():
            nonce = await self.link.redis.hget(room_key(code), "nonce")
        return codes.key_matches(key, code, nonce, self.link.secrets)

    async def key_signed(self, code: str, key: str | None) -> bool:
        await self.start()
        if codes.key_signed(key, code, self.link.secrets):
            return True
        with contextlib.suppress(RoomError):
            async with self.link.reaching():
                await self.link.load_secrets()  # another replica's, shared since the last beat
        return codes.key_signed(key, code, self.link.secrets)

    async def end(self, code: str, reason: str = "ended") -> bool:
        await self.start()
        return bool(
            await self.link.run("end", code, reason, ENDED_SECONDS, keys=(ended_key(code),))
        )

    async def set_state(self, code: str, state: dict[str, Any]) -> int:
        seq = int(await self.link.run("state", code, p.dumps(state)))
        if seq < 0:
            raise await self._missing(code, instructor=True)
        return seq

    async def ask(self, code: str, q: p.Question) -> None:
        public, full = p.dumps(q.public()), p.dumps(q.full())
        done = await self.link.run("ask", code, q.id, full, public, full)
        if done < 0:
            raise await self._missing(code, instructor=True)

    async def answer(self, code: str, member: Member, qid: str, value: Any) -> str:
        q = await self._question(code, qid)
        key = q.key_of(value)
        done = await self.link.run("answer", code, qid, member.id, key)
        if done == -1:
            raise await self._missing(code, member.instructor)
        refuse_answer(done, code, qid)
        return key

    async def reveal(self, code: str, qid: str) -> None:
        out = await self.link.run("reveal", code, qid)
        if not isinstance(out, list):
            if out == -1:
                raise await self._missing(code, instructor=True)
            refuse_answer(out, code, qid)
        q = p.Question.from_json(out[0])
        msg = p.dumps(q.reveal(p.counts_of(out[1:])))
        async with self.link.reaching():
            await self.link.redis.publish(BUS, f"{code} A{msg}")

    async def student_count(self, code: str) -> int:
        return int(await self.link.run("count", code, self.stale))

    async def _question(self, code: str, qid: str) -> p.Question:
        """The open question, to check an answer against: kept per room once read (a class
        answering reads it once, not per answer; a new ask on the bus drops it). The ANSWER
        script still refuses an answer to a question that is no longer the open one."""
        known = self.asked.get(code)
        if known is not None and known.id == qid:
            return known
        async with self.link.reaching():
            text, open_id = await self.link.redis.hmget(room_key(code), ["question", "qid"])
        if text is None or open_id != qid:
            raise RoomError("closed", f"no open question {qid!r}")
        q = self.asked[code] = p.Question.from_json(text)
        return q

    async def _admit(self, code: str, member: Member) -> None:
        s = self.settings
        done = await self.link.run(
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
            await self.link.run(
                "leave", code, member.id if not member.instructor else member.sid, member.role,
                self.stale, "1" if still_here else "0", keys=(of_address(code, member.address),),
            )  # fmt: skip

    async def _latest(self, code: str, member: Member) -> Latest:
        found = await self.link.run("latest", code, member.id if not member.instructor else "")
        if not found:
            raise await self._missing(code, member.instructor)
        seq, state, question, revealed, mine = found
        q = p.Question.from_json(question) if question else None
        return Latest(int(seq), state, q, revealed == "1", mine or None)

    async def _tally(self, code: str) -> tuple[p.Question, dict[str, int]] | None:
        out = await self.link.run("tally", code)
        if not out:
            return None
        return p.Question.from_json(out[0]), p.counts_of(out[1:])
