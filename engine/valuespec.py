"""The `values` text of the query form and the CLI: `x=2,y=3`, `x:2,y:3`, or a JSON object."""

from __future__ import annotations

import json
import re
from typing import Any

from engine.errors import ProgramError

PAIR = re.compile(r"^\s*([^\s=:,]+)\s*[=:]\s*([^,]*?)\s*$")


def parse_values(text: str | None) -> dict[str, Any]:
    """`x=2,y=3` → {"x": 2.0, "y": 3.0}; a JSON object (for tensors) is taken as it is."""
    if text is None or not text.strip():
        return {}
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError as err:
            raise ProgramError(f"values: not valid JSON ({err.msg})", code="bad_values") from None
        if not isinstance(data, dict):
            raise ProgramError("values: a JSON object is needed", code="bad_values")
        return data
    out: dict[str, Any] = {}
    for part in stripped.split(","):
        if not part.strip():
            continue
        match = PAIR.match(part)
        if match is None:
            raise ProgramError(
                f"values: '{part.strip()[:40]}' is not name=number (write x=2,y=3)",
                code="bad_values",
            )
        name, raw = match.groups()
        try:
            out[name] = float(raw)
        except ValueError:
            raise ProgramError(
                f"values: '{raw[:40]}' is not a number (for '{name[:40]}')", code="bad_values"
            ) from None
    return out
