"""User text in the drawing: escaped for DOT, HTML-like labels and SVG, cut to length, and
measured in our monospace font (Graphviz never measures it: see geometry.py)."""

from __future__ import annotations

import re
import unicodedata

from engine.drawing.style import CHAR_W, FONT_SIZE, LABEL_CHARS, WIDE_W

_SAFE_CLASS_RE = re.compile(r"[^A-Za-z0-9_-]")


def _clean(text: str) -> str:
    """Drop control characters (a label is one line of visible text)."""
    text = str(text)
    if text.isprintable():  # no control (nor format, nor separator) characters: as it is
        return text
    return "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)


def escape_attr(text: str) -> str:
    """Escape text for an XML attribute value or text node."""
    return (
        str(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
    )


def escape_html(text: str) -> str:
    """Escape a user string for a Graphviz HTML-like label (and for XML text): escape_attr's
    escapes, on one line of visible text, and single quotes too."""
    return escape_attr(_clean(text)).replace("'", "&#39;")


def escape_dot(text: str) -> str:
    """Escape a user string for a double-quoted DOT string (without the quotes). Backslashes
    are doubled so Graphviz's escapes (``\\N``, ``\\G``, ``\\l``) cannot fire."""
    return _clean(text).replace("\\", "\\\\").replace('"', '\\"')


def css_class(text: str) -> str:
    """`text` as one CSS class name (ours are [A-Za-z0-9_-]), at most 40 characters."""
    return _SAFE_CLASS_RE.sub("_", str(text))[:40]


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """Width in points of `text` in the monospace font (wide characters count double)."""
    scale = size / FONT_SIZE
    if text.isascii():
        return scale * CHAR_W * len(text)
    # Nothing before U+0378 is east-Asian wide: one column each, without asking.
    wide = sum(1 for c in text if c >= "\u0378" and unicodedata.east_asian_width(c) in "WF")
    return scale * (CHAR_W * (len(text) - wide) + WIDE_W * wide)


def shorten(text: str, limit: int = LABEL_CHARS) -> str:
    """One line of `text`, cut to `limit` characters with an ellipsis, keeping a trailing
    subscript (`sin(h)₁₂`: what tells repeated labels apart) as static/js/format.js does."""
    text = _clean(text)
    if len(text) <= limit:
        return text
    k = len(text)
    while k > 0 and "\u2080" <= text[k - 1] <= "\u2089":
        k -= 1
    sub = text[k:] if k > 0 and len(text) - k < limit - 1 else ""
    return text[: limit - 1 - len(sub)] + "…" + sub
