"""The `values` text of the query form and the CLI: `x=2,y=3`, `x:2,y:3`, or a JSON object.

One parser for both (the app's query module wraps it), so a permalink's `values` and the
command line's `--values` mean the same thing.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from engine.errors import ProgramError

MAX_VALUES_CHARS = 65_536  # length of the values text
MAX_VALUE_DEPTH = 8  # nesting of lists in a JSON value
NAME = re.compile(r"^[^\W\d]\w*$", re.UNICODE)


class ValuesError(ProgramError):
    """Values text that cannot be used; `http_status` is 400, or 413 when it is too long."""

    def __init__(self, message: str, http_status: int = 400, code: str = "bad_values") -> None:
        super().__init__(message, code=code)
        self.http_status = http_status


def parse_values(text: str | None) -> dict[str, Any]:
    """`x=2,y=3` → {"x": 2.0, "y": 3.0}; a JSON object (for tensors) gives nested lists."""
    text = (text or "").strip()
    if not text:
        return {}
    if len(text) > MAX_VALUES_CHARS:
        raise ValuesError(f"values is longer than {MAX_VALUES_CHARS} characters", 413, "too_large")
    if text.startswith("{"):
        try:
            obj = json.loads(text, parse_constant=no_constant)
        except (ValueError, RecursionError) as exc:
            raise ValuesError(f"values is not valid JSON: {str(exc)[:80]}") from None
        if not isinstance(obj, dict):
            raise ValuesError("values must be a JSON object")
        return {check_name(str(key)): check_value(key, val) for key, val in obj.items()}
    out: dict[str, Any] = {}
    for part in re.split(r"[,;&\s]+", text):
        if not part:
            continue
        match = re.fullmatch(r"([^=:]+)[=:](.*)", part)
        if not match:
            raise ValuesError(f"values are written name=number, like x=2,y=3 (got {show(part)})")
        name = check_name(match.group(1).strip())
        out[name] = number(name, match.group(2).strip())
    return out


def show(text: str) -> str:
    """A bounded quote of user input for a message."""
    return repr(text[:40])


def no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number here")


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise ValuesError(f"{show(name)} is not a name")
    return name


def number(name: str, text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise ValuesError(f"the value for {name} is not a number: {show(text)}") from None
    if not math.isfinite(x):
        raise ValuesError(f"the value for {name} must be finite")
    return x


def check_value(name: str, val: Any, depth: int = 0) -> Any:
    if depth > MAX_VALUE_DEPTH:
        raise ValuesError(f"the value for {name} is nested too deeply")
    if isinstance(val, bool) or val is None or isinstance(val, str | dict):
        raise ValuesError(f"the value for {name} must be a number or a nested list of numbers")
    if isinstance(val, int | float):
        if not math.isfinite(float(val)):
            raise ValuesError(f"the value for {name} must be finite")
        return float(val)
    return [check_value(name, v, depth + 1) for v in val]
