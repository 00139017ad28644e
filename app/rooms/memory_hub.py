"""Rooms in this process's memory (the default): one process, uvicorn with one worker, serves
them all, and nothing needs installing."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

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


@dataclass
class Room:
    """A room of MemoryHub."""

    key: str
    state_json: str
    seq: int = 0
    active: float = field(default_factory=time.monotonic)
    question: p.Question | None = None
    revealed: bool = False
    answers: dict[str, str] = field(default_factory=dict)  # member id -> answer key


class MemoryHub(Hub):
    """Rooms in this process's memory: one process (uvicorn with one worker) serves them all.
    A room idle for room_idle_seconds is gone on the next look at it, and a sweep tells its
    members."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.rooms: dict[str, Room] = {}
        self._sweeper: asyncio.Task[None] | None = None

    def _room(self, code: str) -> Room | None:
        room = self.rooms.get(code)
        if room is not None and time.monotonic() - room.active > self.settings.room_idle_seconds:
            del self.rooms[code]
            self.end_here(code, "expired")
            return None
        return room

    def _live(self, code: str) -> Room:
        room = self._room(code)
        if room is None:
            raise gone(code)
        room.active = time.monotonic()
        return room

    async def start(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = self.spawn(self._sweep())

    async def _sweep(self) -> None:
        every = max(0.2, min(30.0, self.settings.room_idle_seconds / 4))
        while True:
            await asyncio.sleep(every)
            for code in list(self.rooms):
                self._room(code)

    async def create(self, state: dict[str, Any]) -> Created:
        for code in list(self.rooms):
            self._room(code)  # the expired ones do not count
        if len(self.rooms) >= self.settings.max_rooms:
            raise full_of_rooms(self.settings.max_rooms)
        for _ in range(CODE_TRIES):
            code = codes.new_code()
            if code not in self.rooms:
                break
        else:
            raise full_of_rooms(self.settings.max_rooms)
        key = codes.new_key()
        self.rooms[code] = Room(key, p.dumps(state))
        return Created(code, key, int(self.settings.room_idle_seconds))

    async def view(self, code: str) -> RoomView | None:
        room = self._room(code)
        if room is None:
            return None
        return RoomView(code, await self.student_count(code), room.seq, _loads(room.state_json))

    async def key_matches(self, code: str, key: str | None) -> bool:
        room = self._room(code)
        return room is not None and codes.key_matches(key, room.key)

    async def end(self, code: str, reason: str = "ended") -> bool:
        existed = self.rooms.pop(code, None) is not None
        self.end_here(code, reason)
        return existed

    async def set_state(self, code: str, state: dict[str, Any]) -> int:
        room = self._live(code)
        room.seq += 1
        room.state_json = p.dumps(state)
        self.deliver_state(code, room.seq, p.state_message(room.seq, room.state_json))
        return room.seq

    async def ask(self, code: str, q: p.Question) -> None:
        room = self._live(code)
        room.question, room.revealed, room.answers = q, False, {}
        self.deliver(code, p.dumps(q.public()), to="students")
        self.deliver(code, p.dumps(q.full()), to="instructors")
        self.poke(code, "tally")

    async def answer(self, code: str, member: Member, qid: str, value: Any) -> str:
        room = self._live(code)
        q = _open_question(room.question, room.revealed, qid)
        key = q.key_of(value)
        room.answers[member.id] = key
        self.poke(code, "tally")
        return key

    async def reveal(self, code: str, qid: str) -> None:
        room = self._live(code)
        q = _open_question(room.question, room.revealed, qid)
        room.revealed = True
        self.deliver(code, p.dumps(q.reveal(p.counts_of(list(room.answers.values())))))

    async def student_count(self, code: str) -> int:
        room = self.local.get(code)
        return len(room.students()) if room else 0

    async def _admit(self, code: str, member: Member) -> None:
        self._live(code)
        limit = self.settings.max_students_per_room
        if not member.instructor and await self.student_count(code) >= limit:
            raise room_full(limit)

    async def _release(self, code: str, member: Member) -> None:
        pass  # its answer still counts: a student whose phone slept has answered

    async def _latest(self, code: str) -> tuple[int, str, p.Question | None, bool]:
        room = self._live(code)
        return room.seq, room.state_json, room.question, room.revealed

    async def _tally(self, code: str) -> tuple[p.Question, dict[str, int]] | None:
        room = self._room(code)
        if room is None or room.question is None:
            return None
        return room.question, p.counts_of(list(room.answers.values()))


def _open_question(q: p.Question | None, revealed: bool, qid: str) -> p.Question:
    if q is None or q.id != qid:
        raise RoomError("closed", f"no open question {qid!r}")
    if revealed:
        raise RoomError("closed", f"question {qid!r} has been revealed: answers are closed")
    return q


def _loads(text: str) -> dict[str, Any]:
    out = json.loads(text)
    return out if isinstance(out, dict) else {}
