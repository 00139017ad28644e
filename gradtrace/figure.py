"""Figures for docs builds: the options of a `.. gradtrace::` directive (Sphinx, MyST) or of a
```` ```gradtrace ```` fence (MkDocs) turned into files with content-addressed names.

    spec = parse_options("x*y + x", {"values": "x=2,y=3", "step": "all"})  # FigureError
    for fig in build(spec):              # one FigureFile per step drawn
        write(fig, out_dir)              # out_dir/gradtrace-3f2a…-02.svg
        html = figure_html(fig, "../_images/" + fig.name)

The pictures are files.py's (the SVG GET /api/svg answers) and the stepper is standalone.py's
(the one-file interactive page): this module only chooses, names, stamps and places them.

Stable output: a file's name is a hash of everything its bytes depend on (the program, its
values and options, gradtrace's and Graphviz's versions), and its bytes hold no time, random id
or path. So two builds, on two machines with the same Graphviz, write the same files under the
same names, and each file records what made it: an SVG's `<metadata>` and the stepper's
`<html data-gradtrace-version>` say `gradtrace 0.1.0, graphviz 2.43.0`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape, unescape
from pathlib import Path
from typing import Any

from engine import drawing as draw
from engine.drawing.passes import pass_step
from engine.errors import ProgramError
from engine.inputs.valuespec import parse_values
from gradtrace.assets import ui_strings
from gradtrace.direction import DOCS_COLUMN, larger, rankdir_option
from gradtrace.errors import ExportError
from gradtrace.files import Program, step_svg
from gradtrace.standalone import standalone_html
from gradtrace.version import stamp

# Every option a directive or fence takes, in the order the docs list them.
OPTIONS = (
    "values",
    "step",
    "pass",
    "accumulate",
    "order",
    "mode",
    "caption",
    "alt",
    "lang",
    "legend",
    "height",
    "layout",
)
CHOICES = {
    "accumulate": ("add", "assign"),
    "order": ("dfs", "kahn"),
    "mode": ("svg", "stepper"),
    "lang": ("en", "zh"),
}
TRUE, FALSE = ("", "true", "yes", "on", "1"), ("false", "no", "off", "0")
HEIGHT = (150, 3000, 640)  # the stepper's frame, in CSS pixels: least, most, default
FRAME_STYLE = "border:1px solid #d0d7de;border-radius:6px"


class FigureError(Exception):
    """Options or a program that make no figure. `line`/`column` are the program's (1-based,
    None when no position applies); str() leads with them, as ProgramError's does."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.message, self.line, self.column = message, line, column

    def __str__(self) -> str:
        where = f"line {self.line}, column {self.column}: " if self.line is not None else ""
        return where + self.message


@dataclass(frozen=True)
class FigureSpec:
    """One directive's or fence's figure: the program, what to draw and how to show it."""

    source: str
    values: Mapping[str, Any] = field(default_factory=dict)
    step: int | str | None = None  # a step, "all", or None for the last
    # with several passes: "first", "last" or a pass's index, drawn at that pass's last step
    # (`step`, when given too, wins: it is the index across all passes)
    pass_: int | str | None = None
    accumulate: str = "add"
    order: str = "dfs"
    mode: str = "svg"
    caption: str = ""
    alt: str = ""
    lang: str = "en"
    legend: bool = True
    height: int = HEIGHT[2]
    layout: str | None = None  # "LR" or "TB"; None: the direction that draws larger in its box

    @property
    def program(self) -> Program:
        return Program(self.source, dict(self.values), self.accumulate, self.order)

    def key(self) -> str:
        """16 hex digits of a hash of everything the files' bytes depend on. The step is not in
        it (each file's name adds its own); caption, alt and height are the page's, not the
        file's."""
        what = {
            "source": self.source,
            "values": self.values,
            "accumulate": self.accumulate,
            "order": self.order,
            "mode": self.mode,
            "lang": self.lang,
            "legend": self.legend,
            "layout": self.layout,
            "made_by": stamp(),
        }
        text = json.dumps(what, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class FigureFile:
    """One output file and what the page says about it."""

    name: str  # gradtrace-<key>-<step>.svg or .html
    data: bytes
    kind: str  # "svg" (a picture) or "html" (the stepper)
    step: int
    last: int  # the last step of the trace
    alt: str  # the picture's alt text, or the stepper frame's title
    caption: str  # plain text; "" for none
    height: int  # the stepper frame's height


def parse_options(source: str, options: Mapping[str, str | None]) -> FigureSpec:
    """A FigureSpec from a directive's or fence's options, each a string (None for an option
    given with no value). FigureError names an unknown option or a value out of its range."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise FigureError(f"unknown option {unknown[0]!r}; the options are: {', '.join(OPTIONS)}")
    text = {k: (v or "").strip() for k, v in options.items()}
    if not source.strip():
        raise FigureError("the figure has no program: write it in the body")
    for name, allowed in CHOICES.items():
        if name in text and text[name] not in allowed:
            raise FigureError(f"{name} is {' or '.join(allowed)}, not {text[name]!r}")
    try:
        values = parse_values(text.get("values"))
    except ProgramError as err:
        raise FigureError(err.message) from None
    try:
        layout = rankdir_option(text.get("layout"))
    except ValueError as err:
        raise FigureError(str(err)) from None
    mode = text.get("mode") or "svg"
    step = _step(text.get("step"))
    pass_ = pass_option(text.get("pass"))
    if step == "all" and mode == "stepper":
        raise FigureError("step all draws one picture per step; the stepper holds every step")
    return FigureSpec(
        source=source,
        values=values,
        step=step,
        pass_=pass_,
        accumulate=text.get("accumulate") or "add",
        order=text.get("order") or "dfs",
        mode=mode,
        caption=text.get("caption", ""),
        alt=text.get("alt", ""),
        lang=text.get("lang") or "en",
        legend=_flag("legend", text.get("legend", "")),
        height=_height(text.get("height")),
        layout=layout,
    )


def _step(text: str | None) -> int | str | None:
    if not text or text == "last":
        return None
    if text == "all":
        return "all"
    if re.fullmatch(r"[0-9]{1,6}", text):
        return int(text)
    raise FigureError(f"step is a number (0 is the seed), all, or left out for the last: {text!r}")


def pass_option(text: str | None) -> int | str | None:
    """`pass: first|last|k` (a pass's index from 0), or None when not given."""
    if not text:
        return None
    if text in ("first", "last"):
        return text
    if re.fullmatch(r"[0-9]{1,6}", text):
        return int(text)
    raise FigureError(f"pass is first, last or a pass's number (0 is the first): {text!r}")


def _flag(name: str, text: str) -> bool:
    if text.lower() in TRUE:
        return True
    if text.lower() in FALSE:
        return False
    raise FigureError(f"{name} is true or false, not {text!r}")


def _height(text: str | None) -> int:
    least, most, default = HEIGHT
    if not text:
        return default
    if not re.fullmatch(r"[0-9]{1,5}", text) or not least <= int(text) <= most:
        raise FigureError(f"height is a whole number of pixels from {least} to {most}: {text!r}")
    return int(text)


def trace_of(spec: FigureSpec) -> dict[str, Any]:
    """The program's trace (no drawing yet: cheap). FigureError at the program's position."""
    try:
        return spec.program.trace()
    except ProgramError as err:
        raise FigureError(err.message, err.line, err.column) from None
    except Exception as err:  # a bug of ours must not stop an author's whole build
        raise _bug(err) from err


def steps_of(spec: FigureSpec, trace: Mapping[str, Any]) -> list[int]:
    """The steps the spec draws: every one for `all`, else the one asked for (clamped)."""
    if spec.step == "all":
        return list(range(max(1, draw.step_count(trace))))
    step = spec.step if isinstance(spec.step, int) else None
    if step is None and spec.pass_ is not None:
        step = pass_step(trace, spec.pass_)
    return [draw.clamp_step(trace, step)]


def build(
    spec: FigureSpec, trace: Mapping[str, Any] | None = None, only: int | None = None
) -> list[FigureFile]:
    """The spec's files, one per step drawn (`only`: just that step's). FigureError when the
    program cannot run or its graph is too large to draw."""
    trace = trace if trace is not None else trace_of(spec)
    last = max(0, draw.step_count(trace) - 1)
    steps = steps_of(spec, trace) if only is None else [only]
    key = spec.key()
    try:
        return [_file(spec, trace, key, k, last) for k in steps]
    except ExportError as err:
        raise FigureError(str(err)) from None
    except Exception as err:
        raise _bug(err) from err


def _bug(err: Exception) -> FigureError:
    """An error that is gradtrace's, not the program's: the build reports it and goes on."""
    return FigureError(
        f"gradtrace failed on this figure ({type(err).__name__}: {err}); please report it"
    )


def _file(spec: FigureSpec, trace: Mapping[str, Any], key: str, k: int, last: int) -> FigureFile:
    words = ui_strings().get(spec.lang) or ui_strings()["en"]
    step_label = words.get("step_of", "Step {k} of {n}").format(k=k, n=last)
    several = spec.step == "all"
    caption = spec.caption
    if several:
        caption = f"{caption} ({step_label})" if caption else step_label
    width = max(2, len(str(last)))
    if spec.mode == "stepper":
        program = spec.program
        page = standalone_html(
            trace,
            program=program,
            contrast=program.contrast(),
            step=k,
            lang=spec.lang,
            compact=True,
            frame=True,  # its iframe has the height the option gives: the stepper fits it
            layout=spec.layout,
        )
        first = spec.source.strip().splitlines()[0]
        title = spec.alt or f"gradtrace: {first}"
        data = stamp_html(page).encode("utf-8")
        name = f"gradtrace-{key}-{k:0{width}d}.html"
        return FigureFile(name, data, "html", k, last, title, caption, spec.height)
    # Drawn in the direction that is larger in a docs page's column (unless `layout` names one).
    _, drawn = larger(
        lambda rankdir: step_svg(trace, k, lang=spec.lang, legend=spec.legend, rankdir=rankdir),
        DOCS_COLUMN,
        spec.layout,
    )
    svg = stamp_svg(drawn)
    alt = spec.alt
    if not alt:
        label = re.search(r'aria-label="([^"]*)"', svg)
        alt = unescape(label.group(1)) if label else step_label
    elif several:
        alt = f"{alt} ({step_label})"
    name = f"gradtrace-{key}-{k:0{width}d}.svg"
    return FigureFile(name, svg.encode("utf-8"), "svg", k, last, alt, caption, spec.height)


def stamp_svg(svg: str) -> str:
    """The SVG with `<metadata>gradtrace X, graphviz Y</metadata>` after its title."""
    meta = f"<metadata>{escape(stamp())}</metadata>\n"
    if "</title>\n" in svg:
        return svg.replace("</title>\n", "</title>\n" + meta, 1)
    return re.sub(r"(<svg\b[^>]*>\n?)", lambda m: m.group(1) + meta, svg, count=1)


def stamp_html(page: str) -> str:
    """The page with `data-gradtrace-version="gradtrace X, graphviz Y"` on its <html>."""
    attr = f' data-gradtrace-version="{escape(stamp())}"'
    return re.sub(r"<html\b", lambda m: m.group(0) + attr, page, count=1)


def write(fig: FigureFile, directory: Path) -> Path:
    """`directory/fig.name`, written unless it already holds these bytes. Safe with builds
    that write in parallel (Sphinx -j): each writer has its own temporary file, renamed."""
    directory = Path(directory)
    path = directory / fig.name
    try:
        if path.read_bytes() == fig.data:
            return path
    except OSError:
        pass
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".gradtrace-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(fig.data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def media_html(fig: FigureFile, src: str) -> str:
    """The `<img>` of a picture or the `<iframe>` of a stepper, pointing at `src`."""
    version = escape(stamp())
    if fig.kind == "html":
        return (
            f'<iframe class="gradtrace-stepper" src="{escape(src)}" title="{escape(fig.alt)}" '
            f'width="100%" height="{fig.height}" style="{FRAME_STYLE}" '
            f'data-gradtrace-version="{version}"></iframe>'
        )
    return (
        f'<img class="gradtrace-figure" src="{escape(src)}" alt="{escape(fig.alt)}" '
        f'style="max-width:100%;height:auto" data-gradtrace-version="{version}">'
    )


def figure_html(fig: FigureFile, src: str) -> str:
    """`<figure class="gradtrace">` with the picture or stepper and its caption, if any."""
    caption = f"<figcaption>{escape(fig.caption)}</figcaption>" if fig.caption else ""
    # A theme may size figures to their content (Material does): the stepper's frame has none.
    wide = ' style="width:100%"' if fig.kind == "html" else ""
    return f'<figure class="gradtrace"{wide}>{media_html(fig, src)}{caption}</figure>'


def error_html(err: FigureError, source: str) -> str:
    """What a page shows in place of a figure that could not be made: the message, the
    program, and a caret under the column."""
    lines = source.splitlines()
    shown = escape(source)
    if err.line is not None and 1 <= err.line <= len(lines) and err.column:
        text = lines[err.line - 1]
        shown = escape(text) + "\n" + " " * (err.column - 1) + "^"
    return (
        '<div class="gradtrace-error" role="alert"><p><strong>gradtrace:</strong> '
        f"{escape(str(err))}</p><pre>{shown}</pre></div>"
    )
