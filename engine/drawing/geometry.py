"""The layout's geometry without its words: Graphviz lays out the DOT with every text a
placeholder, and the real texts are put back into the SVG.

Every box and label is sized by us (cells.py: WIDTH, FIXEDSIZE, `width`), never by its text,
so the layout depends on the shape of the program and the size of its boxes, not on what they
say: the same program with other numbers is the same layout (cached by render.to_svg)."""

from __future__ import annotations

import re

_LABEL_TEXT_RE = re.compile(r">([^<>]*[^<>\s][^<>]*)<")
_DOT_ID_RE = re.compile(r'\bid="([^"]*)"')
PLACEHOLDER = "x"


def without_texts(dot: str) -> tuple[str, dict[str, list[str]]]:
    """The DOT with every text in a label replaced by a placeholder, and the texts, by the id
    of the node, edge or graph they belong to, in the order Graphviz draws them: a new number
    in the same box is laid out (and cached, `to_svg`) once."""
    texts: dict[str, list[str]] = {}
    lines = dot.split("\n")
    for k, line in enumerate(lines):
        start = line.find("label=<")
        if start < 0:
            continue
        end = line.rfind(">")
        found = _DOT_ID_RE.search(line)
        gid = found.group(1) if found and not line.lstrip().startswith("graph ") else "graph0"
        own = texts.setdefault(gid, [])

        def hide(m: re.Match[str], own: list[str] = own) -> str:
            own.append(m.group(1))
            return ">" + PLACEHOLDER + "<"

        inner = line[start + len("label=<") : end]
        if not inner.startswith("<"):  # a label that is just text
            own.append(inner)
            lines[k] = line[:start] + "label=<" + PLACEHOLDER + line[end:]
            continue
        lines[k] = line[:start] + _LABEL_TEXT_RE.sub(hide, line[start:end]) + line[end:]
    return "\n".join(lines), texts


class TextsMismatch(Exception):
    """The laid-out SVG has other texts than the DOT put in (see without_texts)."""


def _svg_text(text: str) -> str:
    """A label's text (escaped for an HTML-like label) as SVG text, as Graphviz writes it: a
    space after a space is a no-break space, so runs of spaces keep their width."""
    return re.sub(r"(?<= ) ", "&#160;", text) if "  " in text else text


def put_texts(lines: list[str], texts: list[str] | None) -> None:
    """Put the real texts back into a group's `<text>` elements, in order."""
    if texts is None:
        return
    slots = [k for k, line in enumerate(lines) if line.startswith("<text")]
    if len(slots) != len(texts):
        raise TextsMismatch
    for k, text in zip(slots, texts, strict=True):
        line = lines[k]
        lines[k] = line[: line.index(">") + 1] + _svg_text(text) + "</text>"
