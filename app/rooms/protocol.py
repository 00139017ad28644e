"""The room socket's messages: the schema, and parsing and checking what a client sends.

Every message is one JSON object (a text frame) with a `type`. A message over
max_room_message_bytes, or one that is not such an object, is refused with `error`; so is a
number of more than MAX_DIGITS digits (the socket stays open, as for every refusal).

Client → server
    hello    first, within room_hello_seconds: {"type": "hello", "role": "student"} or
             {"type": "hello", "role": "instructor", "key": KEY}. A student's may carry "id":
             its member id (the welcome's, kept by the page in the tab), so that a reconnect,
             a failover or a rejoin is the same member, with the same answer. An instructor's
             may carry "restore": {"seq": N, "state": STATE, "question": ASK or null,
             "revealed": BOOL}, the room as that page holds it: if the room is gone because
             Redis lost it (a restart), it is put back with the same code, key and seq
             (never a room that was ended; the key must be the one the server made for it)
    state    instructor: {"type": "state", "state": STATE} (a `seq` sent with it is ignored)
    ask      instructor: {"type": "ask", "id": ID, "question": TEXT, "kind": "value"|"choice",
             "choices": [TEXT, ...] (kind "choice": 2–20 of them), "answer": VALUE (optional),
             "hidden": {...} (optional: kept from students until the reveal, such as which
             wrong answers a misconception explains), ...}: any further fields (say "step",
             "about") go to the students as they are. A new ask replaces the open question
             and its answers.
    reveal   instructor: {"type": "reveal", "id": ID}
    end      instructor: {"type": "end"}
    answer   student: {"type": "answer", "id": ID, "value": VALUE, "ref": REF (optional)};
             one per member, a later one replaces it, none after the reveal. REF (a short
             string or number) comes back in its `answered`, or in the `error` that refused it
    ping     anyone: {"type": "ping"} → {"type": "pong"}

Server → client
    welcome  after an accepted hello: {"type": "welcome", "room": CODE, "role": ROLE,
             "id": MEMBER_ID (the hello's, or a new random one), "expires_in": SECONDS,
             "limits": {"max_message_bytes": N, "messages_per_second": R, "burst": B}} (the
             limits of this socket's role: students send less than an instructor)
    state    {"type": "state", "seq": N, "state": STATE} to everyone, the instructor too; at
             once after welcome, the latest (seq 0 is the view the room was made with, maybe
             {}). seq grows by one per accepted state; a client never gets an older seq after
             a newer one.
    presence instructors: {"type": "presence", "students": N} (members, not sockets), on hello
             and when N changes
    ask      students: the ask without "answer" and "hidden"; instructors: with them and
             "answer_key"; sent on hello too while a question is open
    tally    instructors: {"type": "tally", "id": ID, "kind": KIND, "counts": {KEY: n, ...},
             "total": n}, live, at most 10 a second
    answered the member who answered, once the answer is stored: {"type": "answered", "id":
             ID, "key": KEY, "ref": REF}; on hello too, for the answer the member gave before
    reveal   everyone: the ask's fields (with "answer", "answer_key" and "hidden") and
             "counts", "total"
    ended    {"type": "ended", "reason": "ended"|"expired"}, then the socket closes (1000)
    error    {"type": "error", "code": CODE, "message": TEXT, "retry_after": SECONDS (when
             trying again later helps), "ref": REF (an answer's)}: the message was refused and
             changed nothing. Codes: malformed, too_large, rate, forbidden (a student's state,
             ask, reveal or end; an instructor's answer), closed (no such open question),
             hello, not_found, full, busy, unavailable (Redis could not store it: send it
             again), wrong_key, cross_site.
    pong

An answer's KEY is how answers are counted: for kind "value", the number rounded to 4
significant digits, written as JavaScript's Number() reads it ("4", "0.3333", "1.235e+20");
for kind "choice", the choice itself. Answers are counted per member id, so a member's
sockets, reconnects and re-sent answers count once.

Closing codes: 4400 no or bad hello, 4403 wrong key, 4404 no such room (or it ended), 4429 a
client that keeps sending past the rate, 4408 a client too slow to read what it is sent (its
queue of room_queue_messages filled, or one send took room_send_seconds); 1013 try again
later (the error before it says when: the room is full, this address or member holds its
share of it, the server holds as many sockets as its open files allow, too many unknown codes
from this address, or Redis cannot be reached); 1012 the instructor's page is to put the room
back (Redis lost it): reconnect with "restore"; 1008 a page of another site (its Origin).

STATE holds only these keys, each a string, number, boolean or null, with the meanings of the
page's query parameters: source, values, accumulate, order, step, fwd, lang, lesson, collapse,
present. `values` is an object of numbers and nested lists; one sent as an address writes it
("x=2,y=3") is read into that object, so members always get the object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.rooms.questions import Question, parse_ask, question_id
from app.rooms.wire import STATE_KEYS, ProtocolError, check_state, dumps, is_number, loads

__all__ = ["STATE_KEYS", "ProtocolError", "Question", "check_state", "dumps", "is_number",
           "loads", "parse_ask"]  # fmt: skip
ROLES = ("student", "instructor")
MEMBER_ID = re.compile(r"[A-Za-z0-9_-]{12,32}")  # codes.new_member_id(), or a page's own
REF_CHARS = 64  # an answer's ref, echoed
MAX_SEQ = 2**53  # a restored seq: one JavaScript still counts exactly


# --- what clients send, read ------------------------------------------------------------------


@dataclass(frozen=True)
class Restore:
    """The room as the instructor's page holds it, to put back what Redis lost."""

    seq: int  # the last the page saw
    state: dict[str, Any]
    question: Question | None
    revealed: bool

    @property
    def next_seq(self) -> int:
        """The seq the room comes back at: after the page's last, so that every member takes
        the view it holds (maybe newer than that seq's) as new."""
        return self.seq + 1


@dataclass(frozen=True)
class Hello:
    role: str
    key: str | None
    member_id: str | None = None  # the member's id (kept in the tab): its answer stays its own
    restore: Restore | None = None


def parse_restore(raw: Any) -> Restore:
    if not isinstance(raw, dict):
        raise ProtocolError("hello", '"restore" is {"seq", "state", "question", "revealed"}')
    seq = raw.get("seq", 0)
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < MAX_SEQ:
        raise ProtocolError("hello", '"restore.seq" is a whole number from 0 to 2**53')
    state = check_state(raw.get("state") or {})
    question = raw.get("question")
    q = parse_ask({**question, "type": "ask"}) if isinstance(question, dict) else None
    return Restore(seq, state, q, bool(raw.get("revealed")) and q is not None)


def parse_hello(msg: dict[str, Any]) -> Hello:
    if msg.get("type") != "hello":
        raise ProtocolError("hello", 'the first message is {"type": "hello", "role": ...}')
    role = msg.get("role")
    if role not in ROLES:
        raise ProtocolError("hello", '"role" is "student" or "instructor"')
    key = msg.get("key")
    if role == "instructor" and not isinstance(key, str):
        raise ProtocolError("hello", "an instructor's hello carries the room's key")
    member_id = msg.get("id")
    if member_id is not None and not (
        isinstance(member_id, str) and MEMBER_ID.fullmatch(member_id)
    ):
        raise ProtocolError("hello", '"id" is a member id: 12–32 letters, digits, _ or -')
    restore = msg.get("restore")
    if restore is not None and role != "instructor":
        raise ProtocolError("hello", "only an instructor's hello restores the room")
    return Hello(
        role,
        key if isinstance(key, str) else None,
        member_id if role == "student" else None,
        parse_restore(restore) if restore is not None else None,
    )


def answer_ref(msg: dict[str, Any]) -> str | int | None:
    """The answer's `ref`, to echo (None when it has none, or none that can be echoed)."""
    ref = msg.get("ref")
    if isinstance(ref, str) and len(ref) <= REF_CHARS:
        return ref
    if isinstance(ref, int) and not isinstance(ref, bool) and abs(ref) < MAX_SEQ:
        return ref
    return None


def answer_parts(msg: dict[str, Any]) -> tuple[str, Any]:
    """An answer's question id and value (the value is checked against the question)."""
    if "value" not in msg:
        raise ProtocolError("malformed", 'an answer has a "value"')
    return question_id(msg), msg["value"]


def reveal_id(msg: dict[str, Any]) -> str:
    return question_id(msg)


# --- what the server sends --------------------------------------------------------------------


def state_message(seq: int, state_json: str) -> str:
    """The state message, from the stored state's JSON (the Redis script writes the same)."""
    return f'{{"type":"state","seq":{seq},"state":{state_json}}}'


def error_message(
    code: str, message: str, retry_after: float | None = None, ref: str | int | None = None
) -> str:
    out: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if retry_after is not None:
        out["retry_after"] = retry_after
    if ref is not None:
        out["ref"] = ref
    return dumps(out)


def answered_message(qid: str, key: str, ref: str | int | None = None) -> str:
    out: dict[str, Any] = {"type": "answered", "id": qid, "key": key}
    if ref is not None:
        out["ref"] = ref
    return dumps(out)


def presence_message(students: int) -> str:
    return dumps({"type": "presence", "students": students})


def ended_message(reason: str) -> str:
    return dumps({"type": "ended", "reason": reason})


def tally_message(q: Question, counts: dict[str, int]) -> str:
    ordered = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return dumps({"type": "tally", "id": q.id, "kind": q.kind, "counts": ordered,
                  "total": sum(counts.values())})  # fmt: skip


def counts_of(keys: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k in keys:
        out[k] = out.get(k, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))
