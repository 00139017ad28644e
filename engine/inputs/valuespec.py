"""The `values` text of the query form and the CLI: `x=2,y=3`, `x:2,y:3`, or a JSON object.

One parser for both (the app's query module wraps it), so a permalink's `values` and the
command line's `--values` mean the same thing.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from engine.errors import Msg, ProgramError

MAX_VALUES_CHARS = 65_536  # length of the values text
MAX_VALUE_DEPTH = 8  # nesting of lists in a JSON value
NAME = re.compile(r"^[^\W\d]\w*$", re.UNICODE)


class ValuesError(ProgramError):
    """Values text that cannot be used; `http_status` is 400, or 413 when it is too long. Its
    message is keyed (`ValuesError("values_not_name", name="'1x'")`), as every engine error."""

    def __init__(
        self, key: str, http_status: int = 400, code: str = "bad_values", **params: Any
    ) -> None:
        msg = Msg(key, params)
        super().__init__(str(msg), code=code, msg=msg)
        self.http_status = http_status


def parse_values(text: str | None) -> dict[str, Any]:
    """`x=2,y=3` → {"x": 2.0, "y": 3.0}; a JSON object (for tensors) gives nested lists."""
    text = (text or "").strip()
    if not text:
        return {}
    if len(text) > MAX_VALUES_CHARS:
        raise ValuesError("values_too_long", 413, "too_large", max=MAX_VALUES_CHARS)
    if text.startswith("{"):
        try:
            obj = json.loads(text, parse_constant=no_constant)
        except json.JSONDecodeError as exc:
            raise ValuesError("values_json_at", line=exc.lineno, column=exc.colno) from None
        except RecursionError:
            raise ValuesError("values_json_deep") from None
        if not isinstance(obj, dict):
            raise ValuesError("values_not_object")
        return {check_name(str(key)): check_value(key, val) for key, val in obj.items()}
    out: dict[str, Any] = {}
    for part in re.split(r"[,;&\s]+", text):
        if not part:
            continue
        match = re.fullmatch(r"([^=:]+)[=:](.*)", part)
        if not match:
            raise ValuesError("values_form", got=show(part))
        name = check_name(match.group(1).strip())
        out[name] = number(name, match.group(2).strip())
    return out


def show(text: str) -> str:
    """A bounded quote of user input for a message."""
    return repr(text[:40])


def no_constant(name: str) -> float:
    """JSON's NaN and Infinity, which Python's reader takes: refused (a value is finite)."""
    raise ValuesError("values_json_constant", word=name)


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise ValuesError("values_not_name", name=show(name))
    return name


def number(name: str, text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise ValuesError("values_not_number", name=name, got=show(text)) from None
    if not math.isfinite(x):
        raise ValuesError("values_not_finite", name=name)
    return x


def check_value(name: str, val: Any, depth: int = 0) -> Any:
    if depth > MAX_VALUE_DEPTH:
        raise ValuesError("values_too_deep", name=name, max=MAX_VALUE_DEPTH)
    if isinstance(val, bool) or val is None or isinstance(val, str | dict):
        raise ValuesError("values_not_numbers", name=name)
    if isinstance(val, int | float):
        if not math.isfinite(float(val)):
            raise ValuesError("values_not_finite", name=name)
        return float(val)
    return [check_value(name, v, depth + 1) for v in val]
