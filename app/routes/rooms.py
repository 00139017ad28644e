"""The live classroom over HTTP and its socket (spec/classroom.md): make a room, look at it, its
QR code, end it; the student's page at /r/CODE; and WS /api/rooms/CODE/ws (app/rooms/session.py).

The hub (app/rooms/hub.py) is made on first use and kept on `app.state.rooms`, and closed when
the app shuts down (this router's lifespan).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Body, FastAPI, Header, Request, WebSocket
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from app.config import Settings, SettingsDep
from app.errors import SafeJSONResponse, error_body
from app.query import format_values, parse_lang
from app.rooms import codes
from app.rooms import protocol as p
from app.rooms.hub import Hub, RoomError
from app.rooms.memory_hub import MemoryHub
from app.rooms.qr import qr_svg
from app.rooms.session import run_session
from app.routes.pages import page_context, page_parts, strings, templates
from app.schemas import JSON_ERRORS, ErrorResponse


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    hub = getattr(app.state, "rooms", None)
    if hub is not None:
        await hub.close()


router = APIRouter(tags=["rooms"], lifespan=lifespan)
NO_STORE = {"Cache-Control": "no-store"}  # an answer with a key in it, or live counts
QR_CACHE = {"Cache-Control": "private, max-age=300"}


def make_hub(settings: Settings) -> Hub:
    """The hub the settings ask for: Redis when redis_url is set, else this process."""
    if settings.redis_url:
        from app.rooms.redis_hub import RedisHub  # imports redis only when it is used

        return RedisHub(settings)
    return MemoryHub(settings)


def hub_of(app: Any, settings: Settings) -> Hub:
    """The app's hub, made on first use (routes are coroutines on one loop: no race)."""
    hub = getattr(app.state, "rooms", None)
    if hub is None:
        hub = app.state.rooms = make_hub(settings)
    return hub


class RoomCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    state: dict[str, Any] | None = Field(
        default=None,
        description="The view the room opens at: source, values, accumulate, order, step, "
        "fwd, lang, lesson, collapse, present (the page's query parameters).",
    )


class RoomCreated(BaseModel):
    room: str = Field(description="The code: 6 characters, read aloud and typed on a phone.")
    join_url: str = Field(description="The students' page: /r/CODE.")
    instructor_key: str = Field(description="The secret that drives the room (hello, end).")
    expires_in: int = Field(description="Seconds the room lives without activity.")


class RoomInfo(BaseModel):
    room: str
    students: int
    state: dict[str, Any]


def _error(status: int, message: str, code: str, **headers: str) -> SafeJSONResponse:
    return SafeJSONResponse(
        error_body(message, code), status_code=status, headers={**NO_STORE, **headers}
    )


def _missing(code: str) -> SafeJSONResponse:
    return _error(404, f"there is no room {code[:16]!r} (it ended, or expired)", "not_found")


_404: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorResponse, "description": "No such room (it ended, or expired)."}
}


@router.post(
    "/api/rooms",
    status_code=201,
    response_model=RoomCreated,
    responses={**JSON_ERRORS, 503: {**JSON_ERRORS[503], "description": "max_rooms are open."}},
)
async def create_room(
    request: Request, settings: SettingsDep, body: Annotated[RoomCreate | None, Body()] = None
) -> Response:
    """Open a room at the view given (or none), for an instructor to drive."""
    state = body.state if body and body.state is not None else {}
    try:
        p.check_state(state)
        size = len(p.dumps(state).encode("utf-8"))
    except (p.ProtocolError, ValueError) as err:
        return _error(422, getattr(err, "message", "state is not JSON"), "malformed_request")
    if size > settings.max_room_message_bytes:
        return _error(
            413,
            f"the state is {size} bytes, over max_room_message_bytes "
            f"({settings.max_room_message_bytes})",
            "too_large",
        )
    try:
        made = await hub_of(request.app, settings).create(state)
    except RoomError as err:
        return _error(503, err.message, "busy", **{"Retry-After": "60"})
    body_out = RoomCreated(
        room=made.code,
        join_url=f"/r/{made.code}",
        instructor_key=made.key,
        expires_in=made.expires_in,
    )
    return SafeJSONResponse(body_out.model_dump(), status_code=201, headers=NO_STORE)


@router.get("/api/rooms/{code}", response_model=RoomInfo, responses={**_404, **JSON_ERRORS})
async def get_room(code: str, request: Request, settings: SettingsDep) -> Response:
    """How many students are in the room, and the view they follow (never its key)."""
    room = codes.normalize(code)
    view = await hub_of(request.app, settings).view(room) if room else None
    if view is None:
        return _missing(code)
    info = RoomInfo(room=view.code, students=view.students, state=view.state)
    return SafeJSONResponse(info.model_dump(), headers=NO_STORE)


@router.get(
    "/api/rooms/{code}/qr.svg",
    response_class=Response,
    responses={
        200: {"content": {"image/svg+xml": {"schema": {"type": "string"}}}},
        **_404,
        **JSON_ERRORS,
    },
)
async def room_qr(code: str, request: Request, settings: SettingsDep) -> Response:
    """The join link (absolute, from this request's address) as a QR code."""
    room = codes.normalize(code)
    if room is None or await hub_of(request.app, settings).view(room) is None:
        return _missing(code)
    url = str(request.base_url).rstrip("/") + f"/r/{room}"
    svg = qr_svg(url, f"gradtrace {room}: {url}")
    return Response(svg, media_type="image/svg+xml", headers=QR_CACHE)


@router.post(
    "/api/rooms/{code}/end",
    responses={
        403: {"model": ErrorResponse, "description": "No key, or not this room's key."},
        **_404,
        **JSON_ERRORS,
    },
)
async def end_room(
    code: str,
    request: Request,
    settings: SettingsDep,
    key: Annotated[str | None, Header(alias="X-Instructor-Key")] = None,
) -> Response:
    """End the room: every member gets `ended` and is closed. Needs the instructor's key."""
    hub = hub_of(request.app, settings)
    room = codes.normalize(code)
    if room is None or await hub.view(room) is None:
        return _missing(code)
    if not await hub.key_matches(room, key):
        return _error(403, "the X-Instructor-Key header is not this room's key", "wrong_key")
    await hub.end(room)
    return SafeJSONResponse({"room": room, "ended": True}, headers=NO_STORE)


@router.websocket("/api/rooms/{code}/ws")
async def room_socket(websocket: WebSocket, code: str, settings: SettingsDep) -> None:
    """The room's socket: the protocol is app/rooms/protocol.py's."""
    await run_session(websocket, hub_of(websocket.app, settings), settings, code)


# --- the students' page ----------------------------------------------------------------------


def room_params(state: dict[str, Any], lang: str | None) -> dict[str, str]:
    """The page's query parameters that show the room's view (`present` stays the
    instructor's: a phone is no projector); `lang` from the student's own address wins."""
    out: dict[str, str] = {}
    for name, value in state.items():
        if name == "present" or value is None:
            continue
        if name == "values" and isinstance(value, dict):
            out[name] = format_values(value)
        elif isinstance(value, bool):
            out[name] = "1" if value else "0"
        else:
            out[name] = str(value)
    if lang:
        out["lang"] = lang
    return out


@router.get("/r", response_class=HTMLResponse, include_in_schema=False)
async def join_by_code(code: str = "", lang: str = "") -> Response:
    """The join form's answer (?code=…): to the room's page."""
    room = codes.normalize(code) or "-"
    there = f"/r/{room}" + ("?lang=zh" if parse_lang(lang) == "zh" else "")
    return RedirectResponse(there, status_code=303)


@router.get(
    "/r/{code}",
    response_class=HTMLResponse,
    responses={404: {"description": "No such room: a page that says so.",
                     "content": {"text/html": {"schema": {"type": "string"}}}}},
)  # fmt: skip
async def room_page(code: str, request: Request, settings: SettingsDep) -> Response:
    """The page, joined to the room as a student, opening at the room's current view."""
    room = codes.normalize(code)
    view = await hub_of(request.app, settings).view(room) if room else None
    lang = request.query_params.get("lang")
    if view is None or room is None:
        t = strings()[parse_lang(lang)]
        context = {"t": t, "lang": parse_lang(lang), "state_json": "{}", "code": code[:16]}
        return templates.TemplateResponse(
            request=request, name="room_missing.html", context=context, status_code=404
        )
    params = room_params(view.state, lang)

    def render() -> dict[str, Any]:  # runs the program: in a worker thread, off the loop
        return page_context(page_parts(params, settings, embed=False))

    context = {**await run_in_threadpool(render), "room_code": room}
    return templates.TemplateResponse(request=request, name="index.html", context=context)
