"""The gallery of worked examples the page offers, read from examples.toml beside this file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

# Each: id, title ({en, zh}), source, values (for free names), lesson, and maybe lesson_mode.
EXAMPLES: list[dict[str, Any]] = tomllib.loads(
    (Path(__file__).resolve().parent / "examples.toml").read_text("utf-8")
)["example"]
