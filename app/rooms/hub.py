"""The hub: where rooms live and how a message reaches every member of one.

`Hub` is the interface and what both kinds share: the sockets connected to this process, each
with its own bounded queue (a send never waits on a slow socket: one whose queue is full is
dropped), and presence and tally sent to the instructors here at most 10 times a second.
`MemoryHub` (app/rooms/memory_hub.py) keeps the rooms in this process (the default: one
process, nothing to install); `RedisHub` (app/rooms/redis_hub.py) keeps them in Redis, so that
replicas share them.

A member is a student's member id (the page keeps it in its tab), not a socket: its sockets
(a reconnect, a second tab, a failover to another replica) are one member with one answer.
Students per room, members per address and sockets per member are bounded; a student refused
for one of them is told when to try again (close 1013), never refused for good while the room
has a place.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from app.config import Settings
from app.rooms import protocol as p
from app.rooms.members import Coalesced, Local, Member
from app.rooms.refusals import RETRY_SECONDS, TRY_LATER, RoomError, unavailable

REFRESH_SECONDS = 0.1  # presence and tally: at most 10 messages a second per room and process
CODE_TRIES = 20  # fresh codes tried before giving up (a collision in 7e8 codes is rare)


@dataclass(frozen=True)
class Created:
    code: str
    key: str
    expires_in: int


@dataclass(frozen=True)
class RoomView:
    code: str
    students: int
    seq: int
    state: dict[str, Any]


@dataclass(frozen=True)
class Latest:
    """What a socket that joins is sent at once."""

    seq: int
    state_json: str
    question: p.Question | None
    revealed: bool
    answer_key: str | None  # the member's answer to the open question, if it has one


class Hub(ABC):
    """Rooms and their members. Coroutines, on one event loop; none ever waits on a socket."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.local: dict[str, Local] = {}
        self.sockets = 0  # room sockets open in this process (the session counts them)
        self._tasks: set[asyncio.Task[None]] = set()
        self._http = asyncio.Semaphore(max(1, settings.room_requests_in_flight))

    # --- the rooms (each backend's own) ---------------------------------------------------------
    @abstractmethod
    async def create(
        self,
        state: dict[str, Any],
        address: str | None,
        restore: tuple[str, str, p.Restore] | None = None,
    ) -> Created:
        """A new room opening at `state`, made from `address`; or with `restore` (code, key,
        the room as the instructor's page holds it), that room put back. RoomError past
        max_rooms or max_rooms_per_address, or when a restored room was ended."""

    @abstractmethod
    async def view(self, code: str) -> RoomView | None: ...

    @abstractmethod
    async def key_matches(self, code: str, key: str | None) -> bool: ...

    @abstractmethod
    async def key_signed(self, code: str, key: str | None) -> bool:
        """Whether the server made `key` for `code` (the room may be gone)."""

    @abstractmethod
    async def end(self, code: str, reason: str = "ended") -> bool:
        """End the room: its members get `ended` and are closed. False if there was none."""

    @abstractmethod
    async def set_state(self, code: str, state: dict[str, Any]) -> int:
        """Store the view as the latest, send it to every member; its seq."""

    @abstractmethod
    async def ask(self, code: str, q: p.Question) -> None: ...

    @abstractmethod
    async def answer(self, code: str, member: Member, qid: str, value: Any) -> str:
        """Record (or replace) the member's answer; its key. RoomError("closed") if the
        question is not the open one, or has been revealed."""

    @abstractmethod
    async def reveal(self, code: str, qid: str) -> None: ...

    @abstractmethod
    async def student_count(self, code: str) -> int: ...

    @abstractmethod
    async def _admit(self, code: str, member: Member) -> None:
        """Count the member in (RoomError: no room, or full)."""

    @abstractmethod
    async def _release(self, code: str, member: Member, still_here: bool) -> None:
        """The socket left; `still_here`: the member has another socket in this process."""

    @abstractmethod
    async def _latest(self, code: str, member: Member) -> Latest:
        """What the joining socket is sent, of a room that exists."""

    @abstractmethod
    async def _tally(self, code: str) -> tuple[p.Question, dict[str, int]] | None: ...

    async def start(self) -> None:  # noqa: B027 - a hook: a backend may have nothing to start
        """Start what runs in the background (called on first use)."""

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    def spawn(self, coro: Awaitable[None]) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @contextlib.asynccontextmanager
    async def http_slot(self) -> AsyncIterator[None]:
        """A place for one room request (HTTP) that waits on the rooms' store, for at most
        twice room_redis_seconds in all; none free: RoomError("busy") at once
        (room_requests_in_flight), never a wait in line."""
        if self._http.locked():
            raise RoomError(
                "busy",
                f"{self.settings.room_requests_in_flight} room requests are waiting on the "
                "rooms' store, as many as wait at once (room_requests_in_flight); try again",
                retry_after=2.0,
            )
        async with self._http:
            try:
                async with asyncio.timeout(2 * self.settings.room_redis_seconds):
                    yield
            except TimeoutError:
                raise unavailable() from None

    # --- members (shared) -----------------------------------------------------------------------
    def _welcome(self, code: str, member: Member) -> str:
        s = self.settings
        rate, burst = (
            (s.room_messages_per_second, s.room_message_burst)
            if member.instructor
            else (s.room_student_messages_per_second, s.room_student_message_burst)
        )
        return p.dumps({"type": "welcome", "room": code, "role": member.role, "id": member.id,
                        "expires_in": int(s.room_idle_seconds),
                        "limits": {"max_message_bytes": s.max_room_message_bytes,
                                   "messages_per_second": rate, "burst": burst}})  # fmt: skip

    async def join(self, code: str, member: Member) -> None:
        """Admit the member and queue what it needs at once: welcome, the latest state, the
        open question (and the member's answer to it), and for an instructor the count and
        the tally."""
        await self.start()
        here = self.local.get(code)
        limit = self.settings.room_sockets_per_member
        if not member.instructor and here and len(here.of_member(member.id)) >= limit:
            raise RoomError(
                "full",
                f"this member has {limit} sockets in the room here, its "
                "room_sockets_per_member: close one, or try again",
                TRY_LATER,
                retry_after=RETRY_SECONDS,
            )
        await self._admit(code, member)
        member.send(self._welcome(code, member))
        room = self.local.setdefault(code, Local())
        room.sockets[member.sid] = member
        room.lost = None
        try:
            latest = await self._latest(code, member)
        except BaseException:
            await self.leave(code, member)
            raise
        member.send_state(latest.seq, p.state_message(latest.seq, latest.state_json))
        q = latest.question
        if q is not None and not latest.revealed:
            member.send(p.dumps(q.full() if member.instructor else q.public()))
            if latest.answer_key is not None:
                member.send(p.answered_message(q.id, latest.answer_key))
        if member.instructor:
            member.presence = await self.student_count(code)
            member.send(p.presence_message(member.presence))
            if q is not None and not latest.revealed:
                self.poke(code, "tally")
        else:
            await self._presence_changed(code)

    async def leave(self, code: str, member: Member) -> None:
        room = self.local.get(code)
        if room is None or room.sockets.pop(member.sid, None) is None:
            return
        still_here = bool(room.of_member(member.id))
        if not room.sockets:
            self._emptied(code)
        await self._release(code, member, still_here)
        if not member.instructor:
            await self._presence_changed(code)

    def _emptied(self, code: str) -> None:
        """No socket of the room is connected here any more."""
        room = self.local.pop(code, None)
        for c in room.refresh.values() if room else ():
            if c.task is not None:
                c.task.cancel()

    async def _presence_changed(self, code: str) -> None:
        self.poke(code, "presence")

    # --- delivery to the members here ---------------------------------------------------------
    def deliver(self, code: str, text: str, to: str = "all") -> None:
        room = self.local.get(code)
        if room is None:
            return
        for m in list(room.sockets.values()):
            if to == "all" or (to == "instructors") == m.instructor:
                m.send(text)

    def deliver_state(self, code: str, seq: int, text: str) -> None:
        room = self.local.get(code)
        for m in list(room.sockets.values()) if room else ():
            m.send_state(seq, text)

    def end_here(self, code: str, reason: str) -> None:
        room = self.local.pop(code, None)
        if room is None:
            return
        text = p.ended_message(reason)
        for m in room.sockets.values():
            m.finish(text)
        for c in room.refresh.values():
            if c.task is not None:
                c.task.cancel()

    def poke(self, code: str, what: str) -> None:
        """Refresh `what` ("presence" or "tally") for the instructors here, soon: at once if
        the last one was REFRESH_SECONDS ago, else then (one refresh for every poke between)."""
        room = self.local.get(code)
        if room is None or not room.instructors():
            return
        c = room.refresh.setdefault(what, Coalesced())
        if c.task is not None and not c.task.done():
            return
        refresh = self._refresh_presence if what == "presence" else self._refresh_tally
        c.task = self.spawn(self._coalesced(c, code, refresh))

    async def _coalesced(
        self, c: Coalesced, code: str, refresh: Callable[[str], Awaitable[None]]
    ) -> None:
        wait = c.last + REFRESH_SECONDS - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        c.task = None  # a poke from here on asks for the next refresh
        c.last = time.monotonic()
        with contextlib.suppress(RoomError):  # the store is away: the next poke tries again
            await refresh(code)

    async def _refresh_presence(self, code: str) -> None:
        room = self.local.get(code)
        if room is None:
            return
        n = await self.student_count(code)
        for m in room.instructors():
            if m.presence != n:
                m.presence = n
                m.send(p.presence_message(n))

    async def _refresh_tally(self, code: str) -> None:
        found = await self._tally(code)
        if found is not None:
            self.deliver(code, p.tally_message(*found), to="instructors")
