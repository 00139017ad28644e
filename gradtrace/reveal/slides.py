"""A backward pass as reveal.js slide markup: a figure that the plugin (gradtrace-reveal.js)
steps with one fragment per backward step, the `<section>` that holds it, or a whole minimal
deck that opens from disk.

A stepped figure carries one drawing (step 0, inline), the changes each step makes to it
(patches.py), the step sentences and the leaves' grads (sentences.py), so a deck holds one
layout however many steps it has; a figure of one step is the step's drawing and words alone,
and needs no script. Everything is inline or a local file: a deck makes no network request.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

from engine import drawing as draw
from gradtrace.direction import DIRECTIONS, Box, larger
from gradtrace.files import step_svg
from gradtrace.reveal.patches import slide_svg, step_patches
from gradtrace.reveal.sentences import leaf_grads, step_sentence, word
from gradtrace.script_json import json_for_script
from gradtrace.version import stamp

PLUGIN_FILE = "gradtrace-reveal.js"
# What the plugin file defines, for Reveal.initialize({plugins: [RevealGradtrace]}).
PLUGIN_GLOBAL = "RevealGradtrace"


@lru_cache(maxsize=1)
def plugin_js() -> str:
    """The reveal.js plugin's source (package data beside this module)."""
    return files("gradtrace.reveal").joinpath(PLUGIN_FILE).read_text("utf-8")


# The drawing's box on a slide, in reveal.js's slide pixels: the width of its default 960×700
# slide, and the plugin's max-height for the drawing (gradtrace-reveal.js STYLE), which leaves
# room for the step's sentence and grads under it.
SLIDE_BOX = Box(960, 430)


@dataclass(frozen=True)
class SlideOptions:
    """How a figure looks: `step` None (the last), a number, or "all" (one fragment each);
    `rankdir` "LR", "TB", or "auto": the one that draws larger on the slide."""

    step: int | str | None = "all"
    lang: str = "en"
    legend: bool = True
    rankdir: str = "auto"
    collapse: bool = False
    caption: str | None = None
    alt: str | None = None

    def draw_options(self, rankdir: str | None = None) -> dict[str, Any]:
        return {
            "lang": self.lang,
            "legend": self.legend,
            "rankdir": rankdir or self.rankdir,
            "collapse": self.collapse,
        }

    def direction(self, trace: Mapping[str, Any], k: int = 0) -> str:
        """The direction drawn: the one asked for, or the one step k draws larger on a slide."""
        if self.rankdir in DIRECTIONS:
            return self.rankdir
        rankdir, _ = larger(lambda r: step_svg(trace, k, **self.draw_options(r)), SLIDE_BOX, None)
        return rankdir


def _grads_html(labels: Sequence[str], row: Sequence[tuple[str, bool]]) -> str:
    spans = [
        f'<span class="gradtrace-grad{" changed" if changed else ""}">'
        f'{html.escape(label)}.grad = <span class="v">{html.escape(text)}</span></span>'
        for label, (text, changed) in zip(labels, row, strict=True)
    ]
    return " ".join(spans)


def figure_html(trace: Mapping[str, Any], options: SlideOptions | None = None) -> str:
    """The `<figure class="gradtrace">` for a slide (or any HTML page, for one step)."""
    o = options or SlideOptions()
    lang = "zh" if o.lang == "zh" else "en"
    n = max(0, draw.step_count(trace) - 1)
    stepped = o.step == "all"
    k = 0 if stepped else draw.clamp_step(trace, o.step if isinstance(o.step, int) else None)
    grads = leaf_grads(trace)
    data: dict[str, Any] | None = None
    rankdir = o.direction(trace, k)
    if stepped:
        drawing = step_patches(trace, **o.draw_options(rankdir))
        svg = drawing.svg
        data = {
            "version": 1,
            "steps": n + 1,
            "elements": drawing.elements,
            "patches": drawing.patches,
            "stepOf": word(lang, "step_of"),
            "sentences": [step_sentence(trace, i, lang) for i in range(n + 1)],
            "grads": [[[text, int(changed)] for text, changed in row] for row in grads.rows],
        }
    else:
        svg = slide_svg(step_svg(trace, k, **o.draw_options(rankdir)))
    step_label = word(lang, "step_of", k=k, n=n)
    row = grads.rows[k] if k < len(grads.rows) else []
    drawing_attrs = f' role="img" aria-label="{html.escape(o.alt)}"' if o.alt else ""
    parts = [
        f'<figure class="gradtrace" lang="{lang}" data-gradtrace-version="{html.escape(stamp())}">',
        f'<div class="gradtrace-drawing"{drawing_attrs}>{svg}</div>',
        '<p class="gradtrace-sentence" aria-live="polite">'
        f'<span class="gradtrace-step">{html.escape(step_label)}</span> '
        f'<span class="gradtrace-says">{html.escape(step_sentence(trace, k, lang))}</span></p>',
        f'<p class="gradtrace-grads">{_grads_html(grads.labels, row)}</p>',
    ]
    if o.caption:
        parts.append(f"<figcaption>{html.escape(o.caption)}</figcaption>")
    if data is not None:
        parts.append(
            '<script type="application/json" class="gradtrace-data">'
            f"{json_for_script(data)}</script>"
        )
        parts += [
            f'<span class="fragment gradtrace-fragment" data-gradtrace-step="{i}"'
            ' aria-hidden="true"></span>'
            for i in range(1, n + 1)
        ]
    parts.append("</figure>")
    return "\n".join(parts) + "\n"


def section_html(
    trace: Mapping[str, Any], options: SlideOptions | None = None, *, title: str | None = None
) -> str:
    """One slide: `<section data-gradtrace>` with an optional heading and the figure."""
    head = f"<h3>{html.escape(title)}</h3>\n" if title else ""
    return f"<section data-gradtrace>\n{head}{figure_html(trace, options)}</section>\n"


def _inline_script(text: str) -> str:
    """Static JavaScript inside <script>: no early end tag."""
    return text.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def deck_html(
    sections: Sequence[str], *, title: str = "gradtrace", reveal: str = "reveal.js"
) -> str:
    """A whole deck: the sections, reveal.js from the folder `reveal` (a path or address
    relative to the deck, holding dist/), the plugin inline. It opens from disk."""
    base = html.escape(reveal.rstrip("/"))
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(title)}</title>",
            f'<link rel="stylesheet" href="{base}/dist/reveal.css">',
            f'<link rel="stylesheet" href="{base}/dist/theme/white.css">',
            "</head>",
            "<body>",
            '<div class="reveal"><div class="slides">',
            *[s.rstrip("\n") for s in sections],
            "</div></div>",
            f'<script src="{base}/dist/reveal.js"></script>',
            f"<script>\n{_inline_script(plugin_js())}</script>",
            f"<script>Reveal.initialize({{ hash: true, plugins: [{PLUGIN_GLOBAL}] }});</script>",
            "</body>",
            "</html>",
            "",
        ]
    )
