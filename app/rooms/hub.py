"""The hub: where rooms live and how a message reaches every member of one.

`Hub` is the interface and what both kinds share: the members connected to this process, each
with its own bounded queue (a send never waits on a slow socket: a member whose queue is full is
dropped), and presence and tally sent to the instructors here at most 10 times a second.
`MemoryHub` (app/rooms/memory_hub.py) keeps the rooms in this process (the default: one
process, nothing to install); `RedisHub` (app/rooms/redis_hub.py) keeps them in Redis, so that
replicas share them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from app.config import Settings
from app.rooms import codes
from app.rooms import protocol as p

REFRESH_SECONDS = 0.1  # presence and tally: at most 10 messages a second per room and process
CODE_TRIES = 20  # fresh codes tried before giving up (a collision in 7e8 codes is rare)


class RoomError(Exception):
    """A refusal a client is told about: an `error` with `code`, maybe closing with `close`."""

    def __init__(self, code: str, message: str, close: int | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.close = code, message, close


def gone(code: str) -> RoomError:
    return RoomError("not_found", f"there is no room {code} (it ended, or expired)", 4404)


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


class Member:
    """One socket in a room: what is to be sent to it waits in `queue` (None: close now)."""

    __slots__ = ("id", "role", "queue", "last_seq", "presence", "dropped", "closing")

    def __init__(self, role: str, queue_limit: int, member_id: str | None = None) -> None:
        self.id = member_id or codes.new_member_id()
        self.role = role
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(queue_limit)
        self.last_seq = -1  # the newest state sent: never an older one after it
        self.presence = -1  # the student count it was told last
        self.dropped = asyncio.Event()  # set when it could not keep up
        self.closing = False

    @property
    def instructor(self) -> bool:
        return self.role == "instructor"

    def send(self, text: str) -> None:
        if self.closing or self.dropped.is_set():
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.dropped.set()  # the session closes it (4408); nobody else waits

    def send_state(self, seq: int, text: str) -> None:
        if seq > self.last_seq:
            self.last_seq = seq
            self.send(text)

    def finish(self, text: str | None) -> None:
        """Send `text` (if any), then close."""
        if text is not None:
            self.send(text)
        self.closing = True
        try:
            self.queue.put_nowait(None)
        except asyncio.QueueFull:
            self.dropped.set()


@dataclass
class Coalesced:
    """A refresh asked for while one waits is the same refresh (at most 1 per interval)."""

    last: float = 0.0
    task: asyncio.Task[None] | None = None


@dataclass
class Local:
    """The members of one room connected to this process."""

    members: dict[str, Member] = field(default_factory=dict)
    refresh: dict[str, Coalesced] = field(default_factory=dict)

    def instructors(self) -> list[Member]:
        return [m for m in self.members.values() if m.instructor]

    def students(self) -> list[Member]:
        return [m for m in self.members.values() if not m.instructor]


class Hub(ABC):
    """Rooms and their members. Coroutines, on one event loop; none ever waits on a socket."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.local: dict[str, Local] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # --- the rooms (each backend's own) ---------------------------------------------------------
    @abstractmethod
    async def create(self, state: dict[str, Any]) -> Created:
        """A new room opening at `state`; RoomError("full") past max_rooms."""

    @abstractmethod
    async def view(self, code: str) -> RoomView | None: ...

    @abstractmethod
    async def key_matches(self, code: str, key: str | None) -> bool: ...

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
    async def _release(self, code: str, member: Member) -> None: ...

    @abstractmethod
    async def _latest(self, code: str) -> tuple[int, str, p.Question | None, bool]:
        """(seq, the state's JSON, the open question, revealed?) of a room that exists."""

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

    # --- members (shared) -----------------------------------------------------------------------
    async def join(self, code: str, member: Member) -> None:
        """Admit the member and queue what it needs at once: welcome, the latest state, the
        open question, and for an instructor the count and the tally."""
        await self.start()
        if member.id in self.local.get(code, Local()).members:
            member.id = codes.new_member_id()  # an id given back twice: the second is new
        await self._admit(code, member)
        s = self.settings
        welcome = {"type": "welcome", "room": code, "role": member.role, "id": member.id,
                   "expires_in": int(s.room_idle_seconds),
                   "limits": {"max_message_bytes": s.max_room_message_bytes,
                              "messages_per_second": s.room_messages_per_second,
                              "burst": s.room_message_burst}}  # fmt: skip
        member.send(p.dumps(welcome))
        self.local.setdefault(code, Local()).members[member.id] = member
        try:
            await self._listen(code)
            seq, state_json, question, revealed = await self._latest(code)
        except BaseException:
            await self.leave(code, member)
            raise
        member.send_state(seq, p.state_message(seq, state_json))
        if question is not None and not revealed:
            member.send(p.dumps(question.full() if member.instructor else question.public()))
        if member.instructor:
            member.presence = await self.student_count(code)
            member.send(p.presence_message(member.presence))
            if question is not None and not revealed:
                self.poke(code, "tally")
        else:
            await self._presence_changed(code)

    async def leave(self, code: str, member: Member) -> None:
        room = self.local.get(code)
        if room is None or room.members.pop(member.id, None) is None:
            return
        if not room.members:
            self._emptied(code)
        await self._release(code, member)
        if not member.instructor:
            await self._presence_changed(code)

    def _emptied(self, code: str) -> None:
        """No member of the room is connected here any more."""
        room = self.local.pop(code, None)
        for c in room.refresh.values() if room else ():
            if c.task is not None:
                c.task.cancel()

    async def _listen(self, code: str) -> None:  # noqa: B027 - a hook, as start
        """Be told of the room's messages from now on (RedisHub: subscribe)."""

    async def _presence_changed(self, code: str) -> None:
        self.poke(code, "presence")

    # --- delivery to the members here ---------------------------------------------------------
    def deliver(self, code: str, text: str, to: str = "all") -> None:
        room = self.local.get(code)
        if room is None:
            return
        for m in list(room.members.values()):
            if to == "all" or (to == "instructors") == m.instructor:
                m.send(text)

    def deliver_state(self, code: str, seq: int, text: str) -> None:
        room = self.local.get(code)
        for m in list(room.members.values()) if room else ():
            m.send_state(seq, text)

    def end_here(self, code: str, reason: str) -> None:
        room = self.local.pop(code, None)
        if room is None:
            return
        text = p.ended_message(reason)
        for m in room.members.values():
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


def full_of_rooms(limit: int) -> RoomError:
    return RoomError("full", f"the server has {limit} rooms open, its max_rooms: try later")


def room_full(limit: int) -> RoomError:
    return RoomError("full", f"the room has {limit} students, its max_students_per_room", 4429)
