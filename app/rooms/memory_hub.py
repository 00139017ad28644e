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
from app.rooms.hub import CODE_TRIES, Created, Hub, Latest, RoomView
from app.rooms.members import Member
from app.rooms.refusals import (
    RoomError,
    address_full,
    full_of_rooms,
    gone,
    room_full,
    too_many_rooms,
    was_ended,
)

ENDED_SECONDS = 3600.0  # how long an ended room's key is kept from putting it back


@dataclass
class Room:
    """A room of MemoryHub."""

    nonce: str
    state_json: str
    address: str
    seq: int = 0
    active: float = field(default_factory=time.monotonic)
    orphan: float | None = field(default_factory=time.monotonic)  # no instructor since
    question: p.Question | None = None
    revealed: bool = False
    answers: dict[str, str] = field(default_factory=dict)  # member id -> answer key


class MemoryHub(Hub):
    """Rooms in this process's memory: one process (uvicorn with one worker) serves them all.
    A room ends room_idle_seconds after its last activity, or room_orphan_seconds after its
    last instructor left (it is gone on the next look at it, and a sweep tells its members).
    Keys are signed with room_secret, or a secret of this process: with room_secret set, an
    instructor's page puts its room back after a restart of the process too."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.rooms: dict[str, Room] = {}
        self.ended: dict[str, tuple[str, float]] = {}  # code -> (nonce, until)
        self.secrets = [settings.room_secret or codes.new_secret()]
        self._sweeper: asyncio.Task[None] | None = None

    def _deadline(self, room: Room) -> float:
        s = self.settings
        end = room.active + s.room_idle_seconds
        if room.orphan is not None:
            end = min(end, room.orphan + s.room_orphan_seconds)
        return end

    def _room(self, code: str) -> Room | None:
        room = self.rooms.get(code)
        if room is not None and time.monotonic() >= self._deadline(room):
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
        s = self.settings
        every = max(0.2, min(30.0, min(s.room_idle_seconds, s.room_orphan_seconds) / 4))
        while True:
            await asyncio.sleep(every)
            for code in list(self.rooms):
                self._room(code)
            now = time.monotonic()
            for code, (_, until) in list(self.ended.items()):
                if until < now:
                    del self.ended[code]

    async def create(
        self,
        state: dict[str, Any],
        address: str | None,
        restore: tuple[str, str, p.Restore] | None = None,
    ) -> Created:
        s = self.settings
        for code in list(self.rooms):
            self._room(code)  # the expired ones do not count
        addr = address or "-"
        ended = self.ended.get(restore[0]) if restore is not None else None
        if restore is not None and ended is not None and ended[0] == codes.key_nonce(restore[1]):
            raise was_ended(restore[0])
        if sum(1 for r in self.rooms.values() if r.address == addr) >= s.max_rooms_per_address:
            raise too_many_rooms(s.max_rooms_per_address)
        if len(self.rooms) >= s.max_rooms:
            raise full_of_rooms(s.max_rooms)
        if restore is not None:
            code, key, back = restore
            if code in self.rooms:
                return Created(code, key, int(s.room_idle_seconds))
            room = Room(codes.key_nonce(key) or "", p.dumps(back.state), addr, back.next_seq)
            room.question, room.revealed = back.question, back.revealed
            self.rooms[code] = room
            return Created(code, key, int(s.room_idle_seconds))
        for _ in range(CODE_TRIES):
            code = codes.new_code()
            if code not in self.rooms:
                break
        else:
            raise full_of_rooms(s.max_rooms)
        key = codes.new_key(self.secrets[0], code)
        self.rooms[code] = Room(codes.key_nonce(key) or "", p.dumps(state), addr)
        return Created(code, key, int(s.room_idle_seconds))

    async def view(self, code: str) -> RoomView | None:
        room = self._room(code)
        if room is None:
            return None
        return RoomView(code, await self.student_count(code), room.seq, _loads(room.state_json))

    async def key_matches(self, code: str, key: str | None) -> bool:
        room = self._room(code)
        return room is not None and codes.key_matches(key, code, room.nonce, self.secrets)

    async def key_signed(self, code: str, key: str | None) -> bool:
        return codes.key_signed(key, code, self.secrets)

    async def end(self, code: str, reason: str = "ended") -> bool:
        room = self.rooms.pop(code, None)
        if room is not None:
            self.ended[code] = (room.nonce, time.monotonic() + ENDED_SECONDS)
        self.end_here(code, reason)
        return room is not None

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
        return len({m.id for m in room.students()}) if room else 0

    async def _admit(self, code: str, member: Member) -> None:
        room = self._live(code)
        s = self.settings
        if member.instructor:
            room.orphan = None
            return
        here = self.local.get(code)
        students = here.students() if here else []
        if any(m.id == member.id for m in students):
            return  # a member already counted: its second socket
        if len({m.id for m in students}) >= s.max_students_per_room:
            raise room_full(s.max_students_per_room)
        ids = {m.id for m in students if m.address == member.address}
        if len(ids) >= s.room_members_per_address:
            raise address_full(s.room_members_per_address)

    async def _release(self, code: str, member: Member, still_here: bool) -> None:
        # A student's answer still counts: a student whose phone slept has answered.
        room = self.rooms.get(code)
        here = self.local.get(code)
        if room is not None and member.instructor and not (here and here.instructors()):
            room.orphan = time.monotonic()

    async def _latest(self, code: str, member: Member) -> Latest:
        room = self._live(code)
        mine = None if room.question is None else room.answers.get(member.id)
        return Latest(room.seq, room.state_json, room.question, room.revealed, mine)

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
