"""One room socket, from its hello to its close: read, check, act; and write from its queue.

Before the socket is accepted, its Origin must be this site's (a page of another site cannot
open one from a visitor's browser: closed with 1008, which the browser sees as a refusal);
then the process must have an open file to spare for it (room_files_reserve), and its
address must not be one that has tried too many unknown codes; both refusals say when to
retry (1013).

Reading and writing are two tasks. A slow reader on the other end stalls only its own writer:
the hub never waits for it, and a member whose queue fills (or whose one send takes
room_send_seconds) is closed with 4408. Every message a client sends is bounded in size and in
rate (a token bucket: an instructor's room_messages_per_second, a student's
room_student_messages_per_second, each with its burst); one that is refused gets an `error`
and changes nothing, and a client that keeps sending past its rate (a burst's worth refused
in a row) is closed with 4429. An answer Redis could not store is refused as "unavailable"
with its ref: the page sends it again, and the socket stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from app.config import Settings
from app.rooms import codes
from app.rooms import protocol as p
from app.rooms.bounds import Misses, TokenBucket, address_of, same_site, socket_budget
from app.rooms.hub import Hub
from app.rooms.members import Member
from app.rooms.refusals import TRY_LATER, RoomError

log = logging.getLogger("gradtrace.rooms")
INSTRUCTOR_ONLY = ("state", "ask", "reveal", "end")


class Closing(Exception):
    """End the session with this close code (after an error message, maybe)."""

    def __init__(self, code: int, reason: str = "") -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


async def run_session(
    ws: WebSocket, hub: Hub, settings: Settings, code: str, misses: Misses
) -> None:
    """The whole life of one socket of room `code`."""
    if not same_site(ws.headers, settings):
        await ws.close(1008)  # before accepting: the browser is refused the upgrade (403)
        return
    await ws.accept()
    address = address_of(ws.client)
    budget = socket_budget(settings.room_files_reserve)
    if hub.sockets >= budget:
        await _refuse(ws, "busy", f"the server holds {hub.sockets} room sockets, as many as its "
                      "open files allow (open_files, room_files_reserve): try again", TRY_LATER,
                      retry_after=10.0)  # fmt: skip
        return
    hub.sockets += 1
    try:
        await _session(ws, hub, settings, code, misses, address)
    finally:
        hub.sockets -= 1


async def _session(
    ws: WebSocket, hub: Hub, settings: Settings, code: str, misses: Misses, address: str | None
) -> None:
    room = codes.normalize(code)
    try:
        wait = misses.blocked(address)
        if wait is not None:
            raise RoomError("busy", _misses_message(settings, wait), TRY_LATER, retry_after=wait)
        if room is None:
            misses.miss(address)
            raise RoomError("not_found", f"there is no room {code[:16]!r}", 4404)
        hello = await _hello(ws, settings)
        member = Member(hello.role, settings.room_queue_messages, hello.member_id, address)
        if hello.role == "instructor":
            await _instructor_may(hub, room, hello, address, misses)
        await hub.join(room, member)
    except RoomError as err:
        if err.code == "not_found":
            misses.miss(address)
        await _refuse(ws, err.code, err.message, err.close or 4400, err.retry_after)
        return
    except p.ProtocolError as err:
        await _refuse(ws, err.code, err.message, 4400)
        return
    except (WebSocketDisconnect, Closing):
        return
    except Exception:  # a bug: this socket fails, the server does not
        log.exception("rooms: joining %s failed", room)
        await _refuse(ws, "unavailable", "the room cannot be joined now; try again", TRY_LATER, 2.0)
        return
    await _connected(ws, hub, settings, room, member)


async def _instructor_may(
    hub: Hub, room: str, hello: p.Hello, address: str | None, misses: Misses
) -> None:
    """Whether the hello's key drives `room`; a room gone with a restore (Redis lost it) is
    put back first, if the key is one the server made for this code."""
    if await hub.key_matches(room, hello.key):
        return
    if await hub.view(room) is not None:
        raise RoomError("wrong_key", "that is not this room's instructor key", 4403)
    if hello.restore is None or not await hub.key_signed(room, hello.key):
        raise RoomError("not_found", f"there is no room {room}", 4404)
    await hub.create(hello.restore.state, address, (room, hello.key or "", hello.restore))
    log.info("rooms: %s put back by its instructor (seq %d)", room, hello.restore.seq)


def _misses_message(settings: Settings, wait: float) -> str:
    return (
        f"this address asked for more than {settings.room_code_misses_per_minute} unknown room "
        f"codes a minute (room_code_misses_per_minute): try again in {wait:g} s"
    )


async def _connected(
    ws: WebSocket, hub: Hub, settings: Settings, room: str, member: Member
) -> None:
    reader = asyncio.ensure_future(_read(ws, hub, settings, room, member))
    reader.set_name("read")
    writer = asyncio.ensure_future(_write(ws, member, settings.room_send_seconds))
    dropped = asyncio.ensure_future(member.dropped.wait())
    close: int | None = 1000
    try:
        done, _ = await asyncio.wait({reader, writer, dropped}, return_when="FIRST_COMPLETED")
        if dropped in done:
            close = 4408
        elif reader in done:
            close = _close_code(reader)
            if close is not None:  # say why before closing: what is queued goes out first
                member.finish(None, close)
                await asyncio.wait(
                    {writer, dropped},
                    timeout=settings.room_send_seconds,
                    return_when="FIRST_COMPLETED",
                )
        else:
            close = _close_code(writer)
            if close == 1000:
                close = member.close_code
    finally:
        for task in (reader, writer, dropped):
            task.cancel()
        await hub.leave(room, member)
    if close is not None:
        await _close(ws, close)


def _close_code(task: asyncio.Task[None]) -> int | None:
    """How to close after `task` ended: None when the client has gone already."""
    exc = None if task.cancelled() else task.exception()
    if exc is None:
        return 1000 if task.get_name() != "read" else None
    if isinstance(exc, Closing):
        return exc.code
    if isinstance(exc, WebSocketDisconnect | ConnectionError):
        return None
    log.error("rooms: a socket failed", exc_info=exc)
    return 1011


async def _hello(ws: WebSocket, settings: Settings) -> p.Hello:
    try:
        text = await asyncio.wait_for(_receive(ws), settings.room_hello_seconds)
    except TimeoutError:
        raise p.ProtocolError(
            "hello", f"no hello within room_hello_seconds ({settings.room_hello_seconds:g} s)"
        ) from None
    if text is None:
        raise Closing(1000)
    return p.parse_hello(p.loads(text, settings.max_room_message_bytes))


async def _receive(ws: WebSocket) -> str | None:
    """The next message's text (bytes read as UTF-8), or None once the client has gone."""
    msg = await ws.receive()
    if msg["type"] == "websocket.disconnect":
        return None
    if msg.get("text") is not None:
        return str(msg["text"])
    return bytes(msg.get("bytes") or b"").decode("utf-8", "replace")


def _bucket(settings: Settings, member: Member) -> tuple[TokenBucket, str]:
    s = settings
    if member.instructor:
        rate, burst, names = s.room_messages_per_second, s.room_message_burst, ("", "")
    else:
        rate, burst = s.room_student_messages_per_second, s.room_student_message_burst
        names = ("student_", "student_")
    words = (
        f"more than room_{names[0]}messages_per_second ({rate:g}) messages a second (bursts "
        f"of room_{names[1]}message_burst, {burst}): this one was dropped"
    )
    return TokenBucket(rate, burst), words


async def _read(ws: WebSocket, hub: Hub, settings: Settings, room: str, member: Member) -> None:
    bucket, too_fast = _bucket(settings, member)
    refused = 0  # in a row: a burst's worth closes the socket
    while True:
        text = await _receive(ws)
        if text is None:
            return
        msg: dict[str, Any] | None = None
        try:
            if not bucket.take():
                raise p.ProtocolError("rate", too_fast)
            msg = p.loads(text, settings.max_room_message_bytes)
            await _act(hub, room, member, msg)
            refused = 0
        except (p.ProtocolError, RoomError) as err:
            ref = p.answer_ref(msg) if msg and msg.get("type") == "answer" else None
            retry = err.retry_after if isinstance(err, RoomError) else None
            member.send(p.error_message(err.code, err.message, retry, ref))
            if isinstance(err, RoomError) and err.close is not None and err.code != "unavailable":
                raise Closing(err.close) from None
            if isinstance(err, RoomError) and err.code == "unavailable":
                continue  # not the client's doing: it sends again
            refused += 1
            if refused >= bucket.burst:
                raise Closing(4429, "too many refused messages") from None


async def _act(hub: Hub, room: str, member: Member, msg: dict[str, Any]) -> None:
    kind = msg["type"]
    if kind in INSTRUCTOR_ONLY and not member.instructor:
        raise p.ProtocolError("forbidden", f"only the instructor sends {kind!r}: nothing changed")
    if kind == "state":
        await hub.set_state(room, p.check_state(msg.get("state")))
    elif kind == "ask":
        await hub.ask(room, p.parse_ask(msg))
    elif kind == "reveal":
        await hub.reveal(room, p.reveal_id(msg))
    elif kind == "end":
        await hub.end(room)
    elif kind == "answer":
        if member.instructor:
            raise p.ProtocolError("forbidden", "answers come from students")
        qid, value = p.answer_parts(msg)
        key = await hub.answer(room, member, qid, value)
        member.send(p.answered_message(qid, key, p.answer_ref(msg)))
    elif kind == "ping":
        member.send('{"type":"pong"}')
    elif kind == "hello":
        raise p.ProtocolError("malformed", "this socket has said hello already")
    else:
        raise p.ProtocolError("malformed", f"no message type {kind[:40]!r}")


async def _write(ws: WebSocket, member: Member, send_seconds: float) -> None:
    while True:
        text = await member.queue.get()
        if text is None:
            return
        try:
            async with asyncio.timeout(send_seconds):  # a timer, not a task per send
                await ws.send_text(text)
        except TimeoutError:
            raise Closing(4408, "too slow to read what it is sent") from None


async def _refuse(
    ws: WebSocket, code: str, message: str, close: int, retry_after: float | None = None
) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ws.send_text(p.error_message(code, message, retry_after)), 2.0)
    await _close(ws, close)


async def _close(ws: WebSocket, code: int) -> None:
    if ws.application_state == WebSocketState.DISCONNECTED:
        return
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ws.close(code), 2.0)
