"""What a room refuses, and how: RoomError (an `error` message, maybe a close code, maybe when
to retry, and the HTTP status a route answers with), and the refusals the hubs share.

A refusal that waiting mends says so (retry_after, close 1013), so that a late student's page
tries again rather than giving up while the class goes on.
"""

from __future__ import annotations

RETRY_SECONDS = 5.0  # what a refused student is told to wait before trying again
TRY_LATER = 1013  # the websocket close code "try again later"
PUT_BACK = 1012  # closes an instructor whose room Redis lost: its page reconnects to restore it


class RoomError(Exception):
    """A refusal a client is told about: an `error` with `code`, maybe closing with `close`;
    `retry_after` when trying again later helps, `status` the HTTP status for a route."""

    def __init__(
        self,
        code: str,
        message: str,
        close: int | None = None,
        retry_after: float | None = None,
        status: int = 503,
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.close = code, message, close
        self.retry_after, self.status = retry_after, status


def gone(code: str) -> RoomError:
    return RoomError(
        "not_found", f"there is no room {code} (it ended, or expired)", 4404, status=404
    )


def unavailable(what: str = "the room") -> RoomError:
    return RoomError(
        "unavailable",
        f"{what} cannot be reached now: the server cannot reach its Redis "
        "(GRADTRACE_REDIS_URL); try again",
        TRY_LATER,
        retry_after=2.0,
    )


def full_of_rooms(limit: int) -> RoomError:
    return RoomError(
        "full", f"the server has {limit} rooms open, its max_rooms: try later", retry_after=60
    )


def too_many_rooms(limit: int) -> RoomError:
    return RoomError(
        "too_many",
        f"this address has {limit} rooms open, as many as one address may "
        "(max_rooms_per_address); end one, or wait for an undriven one to expire",
        retry_after=60,
        status=429,
    )


def room_full(limit: int) -> RoomError:
    return RoomError(
        "full",
        f"the room has {limit} students, its max_students_per_room: a place may free up",
        TRY_LATER,
        retry_after=RETRY_SECONDS,
    )


def address_full(limit: int) -> RoomError:
    return RoomError(
        "full",
        f"the room has {limit} members from this address, as many as one address may "
        "(room_members_per_address): a place may free up",
        TRY_LATER,
        retry_after=RETRY_SECONDS,
    )


def was_ended(code: str) -> RoomError:
    return RoomError("not_found", f"room {code} was ended: it cannot be put back", 4404, status=404)
