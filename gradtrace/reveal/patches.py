"""Every step of a backward pass as one SVG and a patch per step, for a slide to restyle.

The steps of a trace share one layout (engine/drawing lays out the shape once and tags every
text and cell a step rewrites), so step k's SVG differs from step k-1's in a few attributes and
texts: the node that runs, the grads it writes, the edges it sends along. `step_patches` finds
those differences on the exported step SVGs themselves (gradtrace/files.py, no second drawing),
element by element in document order, which is the order a browser's `querySelectorAll("*")`
returns. Applying patches 1..k to step 0 gives exactly step k's attributes and texts.

That the steps share one element structure is checked, loudly: a drawing whose steps differ in
structure is an ExportError that names the step (none is known; the drawing module promises it).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine import drawing as draw
from gradtrace.errors import ExportError
from gradtrace.files import XML_DECLARATION, step_svg

# One change to one element: [index in document order, {attribute: value or None (removed)},
# its new text or None (unchanged)].
Change = list[Any]
_SIZE = re.compile(r'\s(?:width|height)="[^"]*"')


@dataclass(frozen=True)
class SlideDrawing:
    """Step 0's SVG, the changes each later step makes (patches[0] is empty) and the number of
    elements the SVG holds (a check for the page)."""

    svg: str
    patches: list[list[Change]]
    elements: int


def slide_svg(svg_file: str) -> str:
    """A step's .svg file as a slide inlines it: no XML declaration, and no width or height on
    the root (the slide's CSS sizes it; its viewBox keeps the proportions)."""
    text = svg_file.removeprefix(XML_DECLARATION).strip()
    end = text.index(">")
    return _SIZE.sub("", text[:end]) + text[end:]


def _elements(svg: str) -> list[ET.Element]:
    return list(ET.fromstring(svg).iter())


def _local(name: str) -> str:
    """An attribute's name as the page's DOM has it (ElementTree writes `{namespace}name`)."""
    return name.rsplit("}", 1)[-1]


def diff_elements(before: list[ET.Element], after: list[ET.Element]) -> list[Change] | None:
    """The changes that turn `before` into `after`, or None when their structures differ."""
    if len(before) != len(after) or any(a.tag != b.tag for a, b in zip(before, after, strict=True)):
        return None
    changes: list[Change] = []
    for i, (old, new) in enumerate(zip(before, after, strict=True)):
        attrs: dict[str, str | None] = {
            _local(k): v for k, v in new.attrib.items() if old.attrib.get(k) != v
        }
        attrs.update({_local(k): None for k in old.attrib if k not in new.attrib})
        text = None
        if len(new) == 0 and (old.text or "") != (new.text or ""):
            text = new.text or ""
        if attrs or text is not None:
            changes.append([i, dict(sorted(attrs.items())), text])
    return changes


def step_patches(trace: Mapping[str, Any], **draw_options: Any) -> SlideDrawing:
    """Step 0 and the changes of every later step (one laid-out drawing, restyled per step)."""
    n = max(1, draw.step_count(trace))
    svgs = [slide_svg(step_svg(trace, k, **draw_options)) for k in range(n)]
    trees = [_elements(s) for s in svgs]
    patches: list[list[Change]] = [[]]
    for k in range(1, n):
        changes = diff_elements(trees[k - 1], trees[k])
        if changes is None:
            raise ExportError(f"step {k}'s drawing is not step {k - 1}'s restyled: a bug to report")
        patches.append(changes)
    return SlideDrawing(svgs[0], patches, len(trees[0]))
