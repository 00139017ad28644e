"""Which direction draws a graph larger in the box it goes into: inputs on the left (LR) or on
top (TB), as the page chooses (static/js/layout.js).

A graph a docs page shows is read at the size its box allows: a wide, flat drawing in a narrow
column is scaled down until its text is tiny, and the same graph laid out top to bottom may fill
the column at twice the size. So the figures authors make (the Sphinx directive's and MkDocs'
SVGs, `gradtrace reveal`'s slides) lay the graph out both ways and keep the larger, unless an
option names a direction.

    rankdir, svg = larger(lambda rankdir: step_svg(trace, k, rankdir=rankdir), DOCS_COLUMN)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

DIRECTIONS = ("LR", "TB")
# How much larger the other direction must draw to be chosen over LR (the usual way to draw a
# computation graph, and the one a reader expects when the two are close).
BETTER = 1.02
_VIEWBOX = re.compile(r'viewBox="([-\d.]+)[ ,]+([-\d.]+)[ ,]+([\d.]+)[ ,]+([\d.]+)"')


@dataclass(frozen=True)
class Box:
    """Where a figure is shown, in CSS px: `width` × `height`, and the most CSS px one unit of
    the drawing (a point) may take there (an <img> of an SVG is drawn at its own size, 4/3 px
    per point, and never larger; None: the box's CSS scales the drawing to fit it)."""

    width: float
    height: float
    most: float | None = None


# A docs page's column (Sphinx's alabaster and read-the-docs, MkDocs: 640–700 px wide) and a
# figure no taller than a laptop's screen leaves it.
DOCS_COLUMN = Box(643, 640, 4 / 3)


def viewbox_size(svg: str) -> tuple[float, float]:
    """The (width, height) of an SVG's viewBox, in its own units."""
    found = _VIEWBOX.search(svg)
    if not found:
        raise ValueError("the drawing has no viewBox")
    return float(found.group(3)) or 1.0, float(found.group(4)) or 1.0


def scale_in(svg: str, box: Box) -> float:
    """The CSS px one unit of `svg` takes, shown whole in `box`."""
    w, h = viewbox_size(svg)
    scale = min(box.width / w, box.height / h)
    return min(scale, box.most) if box.most is not None else scale


def larger(draw: Callable[[str], str], box: Box, asked: str | None = None) -> tuple[str, str]:
    """(rankdir, drawing): `asked` when it names a direction, else the direction whose drawing
    (`draw(rankdir)`) is shown larger in `box` (LR unless TB is BETTER)."""
    if asked in DIRECTIONS:
        return asked, draw(asked)
    lr, tb = draw("LR"), draw("TB")
    if scale_in(tb, box) > scale_in(lr, box) * BETTER:
        return "TB", tb
    return "LR", lr


def rankdir_option(text: str | None) -> str | None:
    """An option's direction: "LR" or "TB" (lr, tb, left-right, top-bottom in any case), or None
    for auto (empty or "auto"). ValueError for anything else."""
    value = (text or "").strip().lower()
    if value in ("", "auto"):
        return None
    named = {"lr": "LR", "left-right": "LR", "tb": "TB", "top-bottom": "TB"}
    if value not in named:
        raise ValueError(f"layout is auto, lr or tb, not {text!r}")
    return named[value]
