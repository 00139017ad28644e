"""The MkDocs plugin: ```` ```gradtrace ```` fences drawn at build time.

    # mkdocs.yml
    plugins:
      - gradtrace                    # registered under mkdocs.plugins by gradtrace's package

    ```gradtrace values="x=2,y=3" step=all caption="The product rule"
    L = x*y + x
    ```

The options go on the fence line as `key=value`, quoted when they hold a space (shell rules:
`values='{"W": [[1, 2]]}'` for a tensor); they are gradtrace/figure.py's, the same as the Sphinx
directive's (values, step, accumulate, order, mode, caption, alt, lang, legend, height). The
body is the program.

A fence is found in the page's Markdown (`on_page_markdown`) before any Markdown extension
reads it, so pymdownx.superfences (Material's fences) never sees it; it becomes a placeholder
paragraph, which works at any indentation (admonitions, content tabs, lists), and the rendered
page's placeholder becomes the `<figure>` (`on_page_content`). The files are written into the
site (`figures_dir`, default `assets/gradtrace/`) after the build (`on_post_build`) under their
content-addressed names. A program that cannot run is a warning at the page's line of the
error and its column (so `mkdocs build --strict` fails and a plain build finishes), and the
page shows the message where the figure would be.
"""

from __future__ import annotations

import logging
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.plugins import BasePlugin
from mkdocs.utils import get_relative_url

from gradtrace.figure import FigureError, FigureFile, build, error_html, figure_html
from gradtrace.figure import parse_options as figure_options
from gradtrace.figure import write as write_figure

log = logging.getLogger("mkdocs.plugins.gradtrace")

# An opening fence: its indentation, its run of ` or ~ (three or more), its info string.
OPENING = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
TOKEN = "gradtracefigure{key}n{n}"  # letters and digits only: Markdown leaves it alone


class GradtraceConfig(Config):
    """`plugins: - gradtrace: {figures_dir: …, lang: zh, legend: false}`: defaults for every
    fence (a fence's own options win)."""

    figures_dir = c.Type(str, default="assets/gradtrace")
    lang = c.Choice(("en", "zh"), default="en")
    legend = c.Type(bool, default=True)


@dataclass(frozen=True)
class Fence:
    """A gradtrace fence found in a page: where its program starts, its options and body."""

    start: int  # index of the opening line
    end: int  # index after the closing line
    indent: str
    info: str  # the fence line after `gradtrace`
    body: str


def find_fences(lines: list[str]) -> list[Fence]:
    """Every ```` ```gradtrace ```` fence in order, skipping the inside of other fences (so a
    page that shows the syntax in a longer fence keeps it as code)."""
    found: list[Fence] = []
    i = 0
    while i < len(lines):
        m = OPENING.match(lines[i])
        if not m or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        fence, indent = m["fence"], m["indent"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        words = m["info"].strip().split(None, 1)
        if words and words[0] == "gradtrace":
            body = "\n".join(_dedent(line, indent) for line in lines[i + 1 : j])
            found.append(Fence(i, min(j + 1, len(lines)), indent, m["info"].strip()[9:], body))
        i = j + 1
    return found


def _dedent(line: str, indent: str) -> str:
    return line[len(indent) :] if line.startswith(indent) else line.lstrip(" \t")


def fence_options(info: str) -> dict[str, str]:
    """`values="x=2,y=3" step=all` -> {"values": "x=2,y=3", "step": "all"}."""
    try:
        words = shlex.split(info)
    except ValueError as err:
        raise FigureError(f"the fence line's options cannot be read: {err}") from None
    options: dict[str, str] = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq:
            raise FigureError(f"options on the fence line are key=value, like step=all: {word!r}")
        options[key] = value
    return options


class GradtracePlugin(BasePlugin[GradtraceConfig]):
    """Draws every ```` ```gradtrace ```` fence of the site into its figures folder."""

    def on_pre_build(self, *, config: Any) -> None:
        self.files: dict[str, FigureFile] = {}  # name -> file, written after the build
        self.placed: dict[str, dict[str, str]] = {}  # page -> token -> figure (src left @)

    def on_page_markdown(self, markdown: str, *, page: Any, config: Any, files: Any) -> str:
        lines = markdown.split("\n")
        fences = find_fences(lines)
        if not fences:
            return markdown
        first_line = _first_line(page, markdown)
        placed = self.placed.setdefault(page.file.src_uri, {})
        for n, fence in reversed(list(enumerate(fences))):
            token = TOKEN.format(key=len(self.placed), n=n)
            placed[token] = self._figure(fence, page.file.src_uri, first_line)
            lines[fence.start : fence.end] = ["", fence.indent + token, ""]
        return "\n".join(lines)

    def _figure(self, fence: Fence, page: str, first_line: int) -> str:
        """The fence's figures as HTML whose file names are marked `@NAME@`, to point at."""
        options: dict[str, str] = {"lang": self.config.lang}
        if not self.config.legend:
            options["legend"] = "false"
        try:
            options.update(fence_options(fence.info))
            made = build(figure_options(fence.body, options))
        except FigureError as err:
            line = first_line + fence.start + (err.line or 0)
            log.warning("%s:%d: gradtrace: %s", page, line, err)
            return error_html(err, fence.body)
        out = []
        for fig in made:
            self.files[fig.name] = fig
            out.append(figure_html(fig, f"@{fig.name}@"))
        return "\n".join(out)

    def on_page_content(self, html: str, *, page: Any, config: Any, files: Any) -> str:
        placed = self.placed.get(page.file.src_uri, {})
        for token, figure in placed.items():
            here = re.sub(
                r"@([\w.-]+)@",
                lambda m: get_relative_url(f"{self.config.figures_dir}/{m[1]}", page.url),
                figure,
            )
            html = html.replace(f"<p>{token}</p>", here).replace(token, here)
        return html

    def on_post_build(self, *, config: Any) -> None:
        folder = Path(config["site_dir"]) / self.config.figures_dir
        for name in sorted(self.files):
            write_figure(self.files[name], folder)


def _first_line(page: Any, markdown: str) -> int:
    """The file's line number of the Markdown's first line: front matter is cut off first."""
    try:
        raw = page.file.content_string
    except (OSError, AttributeError):
        return 1
    if markdown and raw.endswith(markdown):
        return raw[: len(raw) - len(markdown)].count("\n") + 1
    return 1
