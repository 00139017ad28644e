"""The room socket's wire format, under every message (app/rooms/protocol.py): JSON objects of
a bounded size, numbers a class uses (finite, at most MAX_DIGITS digits), and the view a state
carries, checked."""

from __future__ import annotations

import json
import math
from typing import Any

from app.query import QueryError, parse_values

STATE_KEYS = frozenset(
    {"source", "values", "accumulate", "order", "step", "fwd", "lang", "lesson", "collapse",
     "present"}
)  # fmt: skip
MAX_DIGITS = 30  # digits of one number in a message: more is no value a class uses
MAX_NESTING = 8  # lists in a tensor value


class ProtocolError(Exception):
    """A refused message: `code` is the error's code, `message` says what to change."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def dumps(obj: Any) -> str:
    """Compact JSON, never NaN (what every message and stored state is written as)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


class _LongNumber(ValueError):
    """A number past MAX_DIGITS digits, met while parsing."""


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _LongNumber
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_DIGITS + 10:  # digits, a sign, a point and an exponent
        raise _LongNumber
    return float(text)


def loads(text: str | bytes, max_bytes: int) -> dict[str, Any]:
    """One message: a JSON object of at most `max_bytes` (the setting named when over)."""
    size = len(text.encode("utf-8", "replace")) if isinstance(text, str) else len(text)
    if size > max_bytes:
        raise ProtocolError(
            "too_large",
            f"the message is {size} bytes, over max_room_message_bytes ({max_bytes})",
        )
    try:
        obj = json.loads(text, parse_constant=_refuse_constant, parse_int=_int, parse_float=_float)
    except _LongNumber:
        raise ProtocolError(
            "malformed", f"a number in the message has more than {MAX_DIGITS} digits"
        ) from None
    except (ValueError, RecursionError):
        raise ProtocolError("malformed", "the message is not JSON") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ProtocolError("malformed", 'a message is a JSON object with a "type"')
    return obj


def is_number(x: Any) -> bool:
    """A finite number (an int too large for a float, as a JSON body may hold, is not)."""
    if not isinstance(x, int | float) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _nested_numbers(x: Any, depth: int = 0) -> bool:
    if is_number(x):
        return True
    if isinstance(x, list) and depth < MAX_NESTING:
        return all(_nested_numbers(v, depth + 1) for v in x)
    return False


def check_state(state: Any) -> dict[str, Any]:
    """The view as sent, checked: only STATE_KEYS, each a scalar (values: or an object). A
    `values` written as in an address ("x=2,y=3") is read into its object, so that every
    member gets one form."""
    if not isinstance(state, dict):
        raise ProtocolError("malformed", '"state" is a JSON object')
    unknown = sorted(set(state) - STATE_KEYS)
    if unknown:
        known = ", ".join(sorted(STATE_KEYS))
        raise ProtocolError("malformed", f"state has no key {unknown[0][:40]!r} (known: {known})")
    if isinstance(state.get("values"), str):
        try:
            state = {**state, "values": parse_values(state["values"])}
        except QueryError as err:
            raise ProtocolError("malformed", f"state.values: {err.message}") from None
    for key, value in state.items():
        if value is None or isinstance(value, str | bool) or is_number(value):
            continue
        if key == "values" and isinstance(value, dict):
            if all(isinstance(k, str) and _nested_numbers(v) for k, v in value.items()):
                continue
            raise ProtocolError("malformed", "state.values maps names to numbers or lists")
        raise ProtocolError("malformed", f"state.{key} is a string, number, boolean or null")
    return state
