"""One room socket, from its hello to its close: read, check, act; and write from its queue.

Reading and writing are two tasks. A slow reader on the other end stalls only its own writer:
the hub never waits for it, and a member whose queue fills (or whose one send takes
room_send_seconds) is closed with 4408. Every message a client sends is bounded in size and in
rate (a token bucket: room_messages_per_second, bursts of room_message_burst); one that is
refused gets an `error` and changes nothing, and a client that keeps sending past its rate
(a burst's worth refused in a row) is closed with 4429.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from app.config import Settings
from app.rooms import codes
from app.rooms import protocol as p
from app.rooms.hub import Hub, Member, RoomError

log = logging.getLogger("gradtrace.rooms")
INSTRUCTOR_ONLY = ("state", "ask", "reveal", "end")


class TokenBucket:
    """`rate` tokens a second, at most `burst` saved up; a message takes one."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens, self.at = float(burst), time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Closing(Exception):
    """End the session with this close code (after an error message, maybe)."""

    def __init__(self, code: int, reason: str = "") -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


async def run_session(ws: WebSocket, hub: Hub, settings: Settings, code: str) -> None:
    """The whole life of one socket of room `code`."""
    await ws.accept()
    room = codes.normalize(code)
    try:
        if room is None:
            raise RoomError("not_found", f"there is no room {code[:16]!r}", 4404)
        hello = await _hello(ws, settings)
        if hello.role == "instructor" and not await hub.key_matches(room, hello.key):
            if await hub.view(room) is None:
                raise RoomError("not_found", f"there is no room {room}", 4404)
            raise RoomError("wrong_key", "that is not this room's instructor key", 4403)
        member = Member(hello.role, settings.room_queue_messages, hello.member_id)
        await hub.join(room, member)
    except RoomError as err:
        await _refuse(ws, err.code, err.message, err.close or 4400)
        return
    except p.ProtocolError as err:
        await _refuse(ws, err.code, err.message, 4400)
        return
    except (WebSocketDisconnect, Closing):
        return
    except Exception:  # Redis unreachable, say: this socket fails, the server does not
        log.exception("rooms: joining %s failed", room)
        await _refuse(ws, "unavailable", "the room cannot be reached now; try again", 1011)
        return
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
                member.finish(None)
                await asyncio.wait(
                    {writer, dropped},
                    timeout=settings.room_send_seconds,
                    return_when="FIRST_COMPLETED",
                )
        else:
            close = _close_code(writer)
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


async def _read(ws: WebSocket, hub: Hub, settings: Settings, room: str, member: Member) -> None:
    bucket = TokenBucket(settings.room_messages_per_second, settings.room_message_burst)
    refused = 0  # in a row: a burst's worth closes the socket
    while True:
        text = await _receive(ws)
        if text is None:
            return
        try:
            if not bucket.take():
                raise p.ProtocolError(
                    "rate",
                    f"more than room_messages_per_second ({settings.room_messages_per_second:g})"
                    f" messages a second (bursts of room_message_burst, "
                    f"{settings.room_message_burst}): this one was dropped",
                )
            msg = p.loads(text, settings.max_room_message_bytes)
            await _act(hub, room, member, msg)
            refused = 0
        except (p.ProtocolError, RoomError) as err:
            if isinstance(err, RoomError) and err.close is not None:
                member.send(p.error_message(err.code, err.message))
                raise Closing(err.close) from None
            member.send(p.error_message(err.code, err.message))
            refused += 1
            if refused >= settings.room_message_burst:
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
        member.send(p.dumps({"type": "answered", "id": qid, "key": key}))
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


async def _refuse(ws: WebSocket, code: str, message: str, close: int) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ws.send_text(p.error_message(code, message)), 2.0)
    await _close(ws, close)


async def _close(ws: WebSocket, code: int) -> None:
    if ws.application_state == WebSocketState.DISCONNECTED:
        return
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ws.close(code), 2.0)
