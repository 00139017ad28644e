"""An SVG drawing as PNG, by librsvg's `rsvg-convert`, with the same bytes for the same SVG.

A PNG keeps only the chunks that describe its pixels (no tIME, no text): nothing in it says when
or where it was made.
"""

from __future__ import annotations

import math
import re
import shutil
import struct
import subprocess
import zlib

from gradtrace.errors import ExportError

RSVG = "rsvg-convert"  # Debian: librsvg2-bin; macOS: brew install librsvg
PNG_TIMEOUT = 60.0  # seconds for one rsvg-convert run
MAX_PNG_SIDE = 16000  # pixels; cairo's own limit is 32767
PNG_KEEP = {
    b"IHDR",
    b"PLTE",
    b"tRNS",
    b"gAMA",
    b"cHRM",
    b"sRGB",
    b"iCCP",
    b"pHYs",
    b"IDAT",
    b"IEND",
}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PX_PER_UNIT = {"pt": 96 / 72, "px": 1.0, "": 1.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4}


def svg_pixel_size(svg: str) -> tuple[float, float]:
    """The SVG's width and height in CSS pixels (Graphviz writes points: 1pt = 4/3 px)."""
    m = re.search(r"<svg\b[^>]*>", svg)
    if not m:
        raise ExportError("not an SVG document")
    tag = m.group(0)

    def length(name: str) -> float:
        a = re.search(rf'\s{name}="([0-9.]+)\s*([a-z]*)"', tag)
        if not a or a.group(2) not in PX_PER_UNIT:
            raise ExportError(f"the SVG has no usable {name}")
        return float(a.group(1)) * PX_PER_UNIT[a.group(2)]

    return length("width"), length("height")


def png_size(svg: str, scale: float = 2.0) -> tuple[int, int]:
    """The PNG's size in pixels: the SVG's CSS-pixel size times `scale`, rounded up."""
    w, h = svg_pixel_size(svg)
    # A hair below the next integer is float noise, not a pixel.
    return math.ceil(w * scale - 1e-6), math.ceil(h * scale - 1e-6)


def svg_to_png(svg: str, scale: float = 2.0, timeout: float = PNG_TIMEOUT) -> bytes:
    """Render an SVG to PNG bytes with rsvg-convert, at `scale` pixels per CSS pixel, on white.
    The PNG keeps no time stamp or text, so the same SVG gives the same bytes."""
    if not (0 < scale <= 16):
        raise ExportError(f"scale must be between 0 and 16, not {scale:g}")
    exe = shutil.which(RSVG)
    if exe is None:
        raise ExportError(
            "PNG export needs rsvg-convert (Debian/Ubuntu: apt-get install librsvg2-bin; "
            "macOS: brew install librsvg). SVG export works without it."
        )
    w, h = png_size(svg, scale)
    if max(w, h) > MAX_PNG_SIDE:
        raise ExportError(
            f"the PNG would be {w}×{h} pixels (at most {MAX_PNG_SIDE} a side): use a smaller "
            "--scale, or SVG"
        )
    cmd = [exe, "--format", "png", "--width", str(w), "--height", str(h)]
    cmd += ["--background-color", "white"]
    try:
        proc = subprocess.run(
            cmd, input=svg.encode("utf-8"), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise ExportError(f"rsvg-convert took longer than {timeout:g} s") from None
    if proc.returncode != 0 or not proc.stdout.startswith(PNG_SIGNATURE):
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ExportError("rsvg-convert failed: " + (err[-1] if err else "no output"))
    return clean_png(proc.stdout)


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, body) of every chunk of a PNG file."""
    if not data.startswith(PNG_SIGNATURE):
        raise ExportError("not a PNG file")
    out, i = [], len(PNG_SIGNATURE)
    while i + 8 <= len(data):
        (n,) = struct.unpack(">I", data[i : i + 4])
        kind = data[i + 4 : i + 8]
        out.append((kind, data[i + 8 : i + 8 + n]))
        i += 12 + n
        if kind == b"IEND":
            break
    return out


def clean_png(data: bytes) -> bytes:
    """The same image without ancillary chunks that could hold a date or a path."""
    out = [PNG_SIGNATURE]
    for kind, body in png_chunks(data):
        if kind in PNG_KEEP:
            crc = struct.pack(">I", _crc32(kind + body))
            out.append(struct.pack(">I", len(body)) + kind + body + crc)
    return b"".join(out)


def _crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def read_png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR."""
    kind, body = png_chunks(data)[0]
    if kind != b"IHDR":
        raise ExportError("a PNG starts with IHDR")
    w, h = struct.unpack(">II", body[:8])
    return int(w), int(h)
