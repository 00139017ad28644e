"""The join link as a QR code, an SVG drawn on the server (segno): dark modules on white, with a
quiet zone, so that a phone reads it off a projector screen in any theme."""

from __future__ import annotations

import io
import re

import segno

SCALE = 8  # px per module: a 6-character code's link is version 3 (29 modules): 264 px


def qr_svg(url: str, title: str) -> str:
    """An SVG of `url` as a QR code, titled `title`, that scales (it has a viewBox)."""
    code = segno.make(url, error="m", micro=False)
    out = io.BytesIO()
    code.save(out, kind="svg", scale=SCALE, border=2, dark="#000", light="#fff",
              title=title, xmldecl=False, svgclass="qr", lineclass=None)  # fmt: skip
    svg = out.getvalue().decode("utf-8")
    return re.sub(
        r'<svg ([^>]*?)width="(\d+)" height="(\d+)"',
        r'<svg \1width="\2" height="\3" viewBox="0 0 \2 \3"',
        svg,
        count=1,
    )
