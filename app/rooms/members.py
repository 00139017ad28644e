"""The sockets of a room in this process: a Member is one socket (its queue, what it was sent
last), Local the sockets of one room here, Coalesced a refresh that waits its turn."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from app.rooms import codes


class Member:
    """One socket in a room: what is to be sent to it waits in `queue` (None: close now, with
    `close_code`). `id` is the member's (a student's sockets share it); `sid` the socket's."""

    __slots__ = ("sid", "id", "role", "address", "queue", "last_seq", "presence", "dropped",
                 "closing", "close_code")  # fmt: skip

    def __init__(
        self,
        role: str,
        queue_limit: int,
        member_id: str | None = None,
        address: str | None = None,
    ) -> None:
        self.sid = codes.new_member_id()
        self.id = member_id or (self.sid if role == "instructor" else codes.new_member_id())
        self.role = role
        self.address = address or "-"
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(queue_limit)
        self.last_seq = -1  # the newest state sent: never an older one after it
        self.presence = -1  # the student count it was told last
        self.dropped = asyncio.Event()  # set when it could not keep up
        self.closing = False
        self.close_code = 1000

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

    def finish(self, text: str | None, close: int = 1000) -> None:
        """Send `text` (if any), then close with `close`."""
        if self.closing:
            return
        if text is not None:
            self.send(text)
        self.closing, self.close_code = True, close
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
    """The sockets of one room connected to this process, by socket id."""

    sockets: dict[str, Member] = field(default_factory=dict)
    refresh: dict[str, Coalesced] = field(default_factory=dict)
    lost: float | None = None  # RedisHub: when Redis was found to have lost the room

    def instructors(self) -> list[Member]:
        return [m for m in self.sockets.values() if m.instructor]

    def students(self) -> list[Member]:
        return [m for m in self.sockets.values() if not m.instructor]

    def of_member(self, member_id: str) -> list[Member]:
        return [m for m in self.sockets.values() if m.id == member_id]
