"""Files for course notes, slides and notebooks, made without a server.

- `step_svg(trace, k)`: step k as a standalone SVG file (the picture GET /api/svg answers);
- `step_image(trace, k, "png")`: the same as PNG (gradtrace/png.py, by rsvg-convert);
- `all_steps(trace, directory)`: every step as numbered files;
- `write_if_changed(path, data)`: how every export reaches the disk.

Elsewhere in this package: the grad table as Markdown or HTML (tables.py), the whole
interactive stepper in one HTML file (standalone.py) and in a Jupyter output (notebook.py).

Stable output: the same program and options give the same bytes on the same installation.
Nothing here writes a time, a random id or a path; Graphviz lays out the same DOT text the same
way. `write_if_changed` leaves a file alone (and its mtime) when the bytes are the same, so docs
builds do not churn.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import drawing as draw
from engine.errors import ProgramError
from engine.limits import DEFAULT_LIMITS, deadline
from engine.program import run
from gradtrace.errors import ExportError
from gradtrace.png import svg_to_png

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
FORMATS = ("svg", "png")


@dataclass(frozen=True)
class Program:
    """A program and the options it runs with: everything its trace depends on."""

    source: str
    values: Mapping[str, Any] = field(default_factory=dict)
    accumulate: str = "add"
    order: str = "dfs"

    def trace(self) -> dict[str, Any]:
        """The trace JSON (docs/trace-format.md). Raises ProgramError."""
        return bounded_run(self.source, dict(self.values), self.accumulate, self.order)

    def contrast(self) -> dict[str, Any] | None:
        """What the other accumulation gives (the page's last table row), or None."""
        other = "assign" if self.accumulate == "add" else "add"
        try:
            alt = bounded_run(self.source, dict(self.values), other, self.order)
        except ProgramError:
            return None
        grads = {n["id"]: n["grad"] for n in alt["nodes"] if n.get("grad") is not None}
        return {"accumulate": other, "grads": grads}


def bounded_run(source: str, values: dict[str, Any], accumulate: str, order: str) -> dict[str, Any]:
    """A figure's program run as the server runs a request: within the limits (the
    `GRADTRACE_MAX_…` settings of the environment) and `GRADTRACE_MAX_REQUEST_SECONDS` (10 by
    default), so a docs build never waits on a print bomb. Raises ProgramError."""
    seconds = float(os.environ.get("GRADTRACE_MAX_REQUEST_SECONDS", "10"))
    with deadline(seconds):
        return run(source, values, accumulate, order, DEFAULT_LIMITS.with_env()).to_dict()


# --------------------------------------------------------------------------------------------
# Files on disk


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` unless the file already holds exactly it. True when written."""
    path = Path(path)
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return True


# --------------------------------------------------------------------------------------------
# Drawings


def drawing(
    trace: Mapping[str, Any],
    step: int | None,
    *,
    lang: str = "en",
    legend: bool = True,
    rankdir: str = "LR",
    collapse: bool = False,
) -> tuple[str, dict[str, Any] | None]:
    """(SVG text, the collapsed loop's plan or None). `step=None` is the page's unmarked layout.
    A loop too large to draw in full is collapsed without being asked, as the app does."""
    plan = draw.collapse_plan(trace)
    try:
        return draw.render_folded(
            trace, step, plan, collapse=collapse, lang=lang, legend=legend, rankdir=rankdir
        )
    except draw.DrawError as err:
        raise ExportError(err.msg.in_language(lang)) from None  # in the figure's language


def step_svg(
    trace: Mapping[str, Any],
    step: int | None = None,
    *,
    lang: str = "en",
    legend: bool = True,
    rankdir: str = "LR",
    collapse: bool = False,
) -> str:
    """Step `step` (None: the last; out of range clamps) as the text of an .svg file."""
    k = draw.clamp_step(trace, step)
    svg, _ = drawing(trace, k, lang=lang, legend=legend, rankdir=rankdir, collapse=collapse)
    return XML_DECLARATION + svg + "\n"


def step_image(
    trace: Mapping[str, Any],
    step: int | None,
    fmt: str = "svg",
    *,
    scale: float = 2.0,
    **draw_options: Any,
) -> bytes:
    """Step `step` as the bytes of an .svg or .png file."""
    svg = step_svg(trace, step, **draw_options)
    if fmt == "svg":
        return svg.encode("utf-8")
    if fmt == "png":
        return svg_to_png(svg, scale)
    raise ExportError(f"format is svg or png, not {fmt!r}")


def step_file_name(prefix: str, k: int, last: int, fmt: str) -> str:
    """`step-03.svg`: zero-padded so the files sort in step order (at least two digits)."""
    return f"{prefix}-{k:0{max(2, len(str(last)))}d}.{fmt}"


def all_steps(
    trace: Mapping[str, Any],
    directory: Path,
    fmt: str = "svg",
    *,
    prefix: str = "step",
    scale: float = 2.0,
    on_progress: Callable[[int, int], None] | None = None,
    workers: int = 2,
    **draw_options: Any,
) -> list[Path]:
    """Every step as `directory/step-00.svg` … (or .png). Numbered files of the same pattern
    left over from a longer program are removed, so the folder holds exactly this program."""
    if fmt not in FORMATS:
        raise ExportError(f"format is svg or png, not {fmt!r}")
    if not re.fullmatch(r"[A-Za-z0-9._-]+", prefix):
        raise ExportError("the file prefix may hold only letters, digits, '.', '_' and '-'")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    n = max(1, draw.step_count(trace))
    paths = [directory / step_file_name(prefix, k, n - 1, fmt) for k in range(n)]
    done = 0
    if on_progress:
        on_progress(0, n)

    def one(k: int) -> None:
        write_if_changed(paths[k], step_image(trace, k, fmt, scale=scale, **draw_options))

    # Each step is its own `dot` (and rsvg-convert) process: two at a time use both cores.
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for fut in [pool.submit(one, k) for k in range(n)]:
            fut.result()
            done += 1
            if on_progress:
                on_progress(done, n)
    keep = {p.name for p in paths}
    pattern = re.compile(rf"{re.escape(prefix)}-[0-9]+\.{fmt}")
    for old in directory.iterdir():
        if pattern.fullmatch(old.name) and old.name not in keep and old.is_file():
            old.unlink()
    return paths
