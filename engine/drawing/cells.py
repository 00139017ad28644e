"""The pieces of Graphviz's HTML-like labels, each sized by us: a box's room in our font, a
text cell, a captioned row, a matrix's numbers, an empty tensor's mark, a heat map's slot.

Graphviz lays out boxes, not words: every box and label gets its width here, in steps of
ROOM_CHARS characters with room for NUMBER_ROOM-character numbers, so a number a digit longer
keeps its box and the drawing keeps its layout."""

from __future__ import annotations

import math

import numpy as np

from engine.drawing.numbers import fmt
from engine.drawing.style import (
    CHAR_W,
    EMPTY,
    FONT_SIZE,
    HEAT_CELL,
    HEAT_FILL,
    MATRIX_PAD,
    NUMBER_ROOM,
    PAD,
    ROOM_CHARS,
    STYLE,
)
from engine.drawing.tensors import heat_colour
from engine.drawing.text import escape_html, text_width


def box_width(text: str, size: float, margin: float, least: float = 0.0) -> str:
    """A box's width in inches for Graphviz: the text in our font plus the side margins."""
    return f"{max(least, room(text_width(text, size), size) / 72 + 2 * margin + 0.02):.3f}"


def room_for(number: str) -> str:
    """A number padded to NUMBER_ROOM characters: the room a box keeps for it, so that most
    new numbers fit the box the old one had."""
    return number.ljust(NUMBER_ROOM, "0")


def room(width: float, size: float = FONT_SIZE) -> int:
    """Room for text `width` points wide, rounded up to whole ROOM_CHARS characters: a box
    keeps its size (and the drawing its layout) when a number in it gets a digit longer."""
    quantum = ROOM_CHARS * CHAR_W * size / FONT_SIZE
    return math.ceil(math.ceil(width / quantum - 1e-9) * quantum)


def font(text: str, bold: bool = False) -> str:
    """Label text (already escaped), bold or not."""
    return f"<B>{text}</B>" if bold else text


def _fill(bg: str | None) -> str:
    return f' BGCOLOR="{bg}"' if bg else ""


def td(text: str, width: float, *, bold: bool = False, bg: str | None = None) -> str:
    """One cell of text, with room for text `width` points wide."""
    return (
        f'<TD ALIGN="LEFT" WIDTH="{room(width + 2 * PAD + 2)}"{_fill(bg)}>'
        f"{font(escape_html(text), bold)}</TD>"
    )


def caption_row(caption: str, inner: str, bg: str | None = None) -> str:
    """A small grey caption (``data``, ``grad``) and the cell it names, side by side."""
    width = math.ceil(text_width(caption, 9) + 2 * PAD + 2)
    return (
        f'<TD ALIGN="LEFT" VALIGN="MIDDLE" WIDTH="{width}">'
        f'<FONT POINT-SIZE="9" COLOR="{STYLE["muted"]}">'
        f'{caption}</FONT></TD><TD ALIGN="LEFT"{_fill(bg)}>{inner}</TD>'
    )


def mini_table(rows: list[list[float]], cell_w: float, bold: bool = False) -> str:
    """A small tensor's numbers, one cell `cell_w` points wide each."""
    body = "".join(
        "<TR>"
        + "".join(
            f'<TD ALIGN="LEFT" WIDTH="{math.ceil(cell_w)}">{font(escape_html(fmt(x)), bold)}</TD>'
            for x in r
        )
        + "</TR>"
        for r in rows
    )
    return (
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="{MATRIX_PAD}">'
        f"{body}</TABLE>"
    )


def empty_cell() -> str:
    """What an empty tensor shows where its numbers would be."""
    return f'<FONT COLOR="{STYLE["muted"]}">{EMPTY}</FONT>'


def heat_td(grid: np.ndarray) -> str:
    """The slot a heat map is drawn into after layout (svg.py): one fixed-size cell."""
    r, c = grid.shape
    return (
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR>'
        f'<TD FIXEDSIZE="TRUE" WIDTH="{c * HEAT_CELL}" HEIGHT="{r * HEAT_CELL}" '
        f'BGCOLOR="{HEAT_FILL}"></TD></TR></TABLE>'
    )


def heat_colours(grid: np.ndarray, scale: float) -> list[list[str]]:
    """A heat map's colours, block by block."""
    return [[heat_colour(float(x), scale) for x in row] for row in grid]
