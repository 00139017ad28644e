"""Where things are in a program's text: lines, 1-based columns in characters, and the errors
that point there (Python's syntax errors, retold; a "did you mean" for a misspelt name)."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable

from engine.errors import ProgramError

NEWLINE = re.compile(r"\r\n|\r|\n")


@functools.lru_cache(maxsize=8)
def source_lines(source: str) -> list[str]:
    """The lines as Python's tokenizer counts them: only \r\n, \r and \n end a line
    (str.splitlines also splits at U+2028, U+000C, …, which Python allows in comments).
    Cached and shared: slice it, never mutate it."""
    return NEWLINE.split(source)


def position_of(source: str, index: int) -> tuple[int, int]:
    """1-based line and column (code points) of a character index."""
    lines = NEWLINE.split(source[:index])
    return len(lines), len(lines[-1]) + 1


def char_column(source: str, line: int, byte_offset: int) -> int:
    """ast counts columns in UTF-8 bytes; students count characters (1-based)."""
    lines = source_lines(source)
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1


def syntax_error(e: SyntaxError, source: str) -> ProgramError:
    """Python's SyntaxError as the language's error, its column kept on the line."""
    message = (e.msg or "invalid syntax").rstrip(".")
    if "integer string conversion" in message:  # CPython's 4,300-digit guard
        message = "this number has too many digits"
    if e.lineno is None:
        return ProgramError(f"syntax error: {message}", code="syntax")
    lines = source_lines(source)
    line_text = lines[e.lineno - 1] if 0 < e.lineno <= len(lines) else ""
    column = e.offset or 1
    # CPython counts the offset in characters for str sources; keep it on the line.
    column = max(1, min(column, len(line_text) + 1))
    hint = ""
    if "'" in line_text or '"' in line_text:
        hint = " (strings are not part of the language)"
    return ProgramError(f"syntax error: {message}{hint}", e.lineno, column, code="syntax")


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """The end of an error message suggesting the closest known word, or ""."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" — did you mean '{close[0]}'?" if close else ""
