"""The live classroom over HTTP and its socket (spec/classroom.md): make a room, look at it, its
QR code, end it; the student's page at /r/CODE; and WS /api/rooms/CODE/ws (app/rooms/session.py).

The hub (app/rooms/hub.py) is made on first use and kept on `app.state.rooms`, and closed when
the app shuts down (this router's lifespan, which also raises the process's open files to
open_files at start: every room socket is one).

Making or ending a room from a page of another site is refused by its Origin (403), as its
socket is. A room is made per client address up to max_rooms_per_address (429). Looking up
codes counts the unknown ones per address (room_code_misses_per_minute: 429 past it). Every
route that waits on the rooms' store (Redis) holds one of room_requests_in_flight places and
answers 503 at once when none is free, so a stalled Redis never holds the slots every other
request needs; Redis failing is a 503 with Retry-After, never a 500.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, FastAPI, Header, Request, WebSocket
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from app.config import Settings, SettingsDep, get_settings
from app.errors import SafeJSONResponse, error_body
from app.query import format_values, parse_lang
from app.rooms import codes
from app.rooms import protocol as p
from app.rooms.bounds import Misses, address_of, raise_open_files, same_site
from app.rooms.hub import Hub, RoomView
from app.rooms.memory_hub import MemoryHub
from app.rooms.qr import qr_svg
from app.rooms.refusals import RoomError
from app.rooms.session import run_session
from app.routes.pages import page_context, page_parts, strings, templates
from app.schemas import JSON_ERRORS, ErrorResponse

T = TypeVar("T")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    raise_open_files(get_settings().open_files)
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


def misses_of(app: Any, settings: Settings) -> Misses:
    """The unknown codes asked for per address, in this process."""
    misses = getattr(app.state, "room_misses", None)
    if misses is None:
        misses = app.state.room_misses = Misses(settings.room_code_misses_per_minute)
    return misses


async def _store(hub: Hub, work: Callable[[], Awaitable[T]]) -> T:
    """`work` in one of the room_requests_in_flight places (RoomError "busy" when none)."""
    async with hub.http_slot():
        return await work()


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


def _refused(err: RoomError) -> SafeJSONResponse:
    """A RoomError as an answer: its status, with Retry-After when waiting helps."""
    headers = {"Retry-After": str(max(1, round(err.retry_after)))} if err.retry_after else {}
    return _error(err.status, err.message, err.code, **headers)


def _cross_site() -> SafeJSONResponse:
    return _error(
        403,
        "a page of another site may not act on this server's rooms (its Origin is not this "
        "site's, nor one of room_allowed_origins)",
        "cross_site",
    )


async def _find(
    request: Request, settings: SettingsDep, code: str
) -> tuple[RoomView | None, Response | None]:
    """The room a route names, or the answer to give instead: 429 for an address that asked
    for too many unknown codes (whatever this one is), 503 when the store cannot say."""
    misses = misses_of(request.app, settings)
    address = address_of(request.client)
    wait = misses.blocked(address)
    if wait is not None:
        message = (
            f"this address asked for more than {settings.room_code_misses_per_minute} unknown "
            f"room codes a minute (room_code_misses_per_minute): try again in {wait:g} s"
        )
        return None, _error(429, message, "busy", **{"Retry-After": str(max(1, round(wait)))})
    room = codes.normalize(code)
    if room is None:
        misses.miss(address)
        return None, None
    hub = hub_of(request.app, settings)
    try:
        view = await _store(hub, lambda: hub.view(room))
    except RoomError as err:
        return None, _refused(err)
    if view is None:
        misses.miss(address)
    return view, None


def _missing(code: str) -> SafeJSONResponse:
    return _error(404, f"there is no room {code[:16]!r} (it ended, or expired)", "not_found")


_404: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorResponse, "description": "No such room (it ended, or expired)."},
    429: {
        "model": ErrorResponse,
        "description": "This address asked for more than room_code_misses_per_minute unknown "
        "codes (Retry-After says when to ask again).",
    },
}


@router.post(
    "/api/rooms",
    status_code=201,
    response_model=RoomCreated,
    responses={
        **JSON_ERRORS,
        403: {"model": ErrorResponse, "description": "A page of another site (its Origin)."},
        429: {"model": ErrorResponse, "description": "This address has max_rooms_per_address."},
        503: {**JSON_ERRORS[503], "description": "max_rooms are open, or Redis is away."},
    },
)
async def create_room(
    request: Request, settings: SettingsDep, body: Annotated[RoomCreate | None, Body()] = None
) -> Response:
    """Open a room at the view given (or none), for an instructor to drive."""
    if not same_site(request.headers, settings):
        return _cross_site()
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
    hub = hub_of(request.app, settings)
    try:
        made = await _store(hub, lambda: hub.create(state, address_of(request.client)))
    except RoomError as err:
        return _refused(err)
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
    view, refused = await _find(request, settings, code)
    if refused is not None:
        return refused
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
    view, refused = await _find(request, settings, code)
    if refused is not None:
        return refused
    if view is None:
        return _missing(code)
    url = str(request.base_url).rstrip("/") + f"/r/{view.code}"
    svg = qr_svg(url, f"gradtrace {view.code}: {url}")
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
    if not same_site(request.headers, settings):
        return _cross_site()
    view, refused = await _find(request, settings, code)
    if refused is not None:
        return refused
    if view is None:
        return _missing(code)
    hub = hub_of(request.app, settings)

    async def end() -> bool:
        if not await hub.key_matches(view.code, key):
            return False
        await hub.end(view.code)
        return True

    try:
        if not await _store(hub, end):
            return _error(403, "the X-Instructor-Key header is not this room's key", "wrong_key")
    except RoomError as err:
        return _refused(err)
    return SafeJSONResponse({"room": view.code, "ended": True}, headers=NO_STORE)


@router.websocket("/api/rooms/{code}/ws")
async def room_socket(websocket: WebSocket, code: str, settings: SettingsDep) -> None:
    """The room's socket: the protocol is app/rooms/protocol.py's."""
    hub, misses = hub_of(websocket.app, settings), misses_of(websocket.app, settings)
    await run_session(websocket, hub, settings, code, misses)


# --- the students' page ----------------------------------------------------------------------


def own_lang(request: Request) -> str | None:
    """The student's own language, which wins over the instructor's: the address's `lang`,
    else the first language of the browser's Accept-Language that the page has; None when
    neither says (then the page opens in the room's)."""
    lang = request.query_params.get("lang")
    if lang:
        return parse_lang(lang)
    for part in request.headers.get("accept-language", "")[:200].split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("zh"):
            return "zh"
        if tag.startswith("en"):
            return "en"
    return None


def room_params(state: dict[str, Any], lang: str | None) -> dict[str, str]:
    """The page's query parameters that show the room's view (`present` stays the
    instructor's: a phone is no projector); `lang`, the student's own language, wins."""
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


_HTML = {"text/html": {"schema": {"type": "string"}}}


@router.get(
    "/r/{code}",
    response_class=HTMLResponse,
    responses={
        404: {"description": "No such room: a page that says so.", "content": _HTML},
        429: {"description": "This address asked for too many unknown codes: a page that says "
                             "so, with Retry-After.", "content": _HTML},
        503: {"description": "The rooms' store cannot be reached: a page that says so.",
              "content": _HTML},
    },
)  # fmt: skip
async def room_page(code: str, request: Request, settings: SettingsDep) -> Response:
    """The page, joined to the room as a student, opening at the room's current view."""
    view, refused = await _find(request, settings, code)
    lang = own_lang(request)
    if view is None:
        t = strings()[parse_lang(lang)]
        why = {429: "room_busy", 503: "room_down"}.get(refused.status_code) if refused else None
        if why:  # the page says why, not that there is no such class
            words = {"room_missing_title": t[f"{why}_title"], "room_missing_text": t[f"{why}_text"]}
            t = {**t, **words}
        context = {"t": t, "lang": parse_lang(lang), "state_json": "{}", "code": code[:16]}
        status = refused.status_code if refused is not None else 404
        headers = (
            {"Retry-After": refused.headers["retry-after"]}
            if refused is not None and "retry-after" in refused.headers
            else None
        )
        return templates.TemplateResponse(
            request=request, name="room_missing.html", context=context, status_code=status,
            headers=headers,
        )  # fmt: skip
    room = view.code
    params = room_params(view.state, lang)

    def render() -> dict[str, Any]:  # runs the program: in a worker thread, off the loop
        return page_context(page_parts(params, settings, embed=False))

    context = {**await run_in_threadpool(render), "room_code": room}
    return templates.TemplateResponse(request=request, name="index.html", context=context)
