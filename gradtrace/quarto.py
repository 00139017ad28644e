"""What the Quarto shortcode `{{< gradtrace "x*y + x" values="x=2,y=3" step=all >}}` inserts:
the Lua in quarto/_extensions/gradtrace runs `gradtrace quarto --to FORMAT -- PROGRAM key=value…`
and puts its standard output into the document.

- `html`: each step drawn as a figure (inline SVG, the step's sentence and the leaves' grads);
  `mode=stepper` is the interactive stepper in an iframe (its page inline, in `srcdoc`);
- `revealjs`: the same, except that `step=all` is one figure whose steps are fragments, stepped
  by the reveal.js plugin (gradtrace/reveal);
- any other format: Markdown image lines of PNGs written into a folder (for PDF, Word, …).

The options and their checks are the Sphinx directive's (gradtrace/figure.py `parse_options`),
so a shortcode and a directive with the same options draw the same thing. Everything HTML is
inline: the rendered page needs no file beside it and makes no request.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

from gradtrace.errors import ExportError
from gradtrace.figure import (
    FRAME_STYLE,
    FigureError,
    FigureSpec,
    build,
    parse_options,
    steps_of,
    trace_of,
)
from gradtrace.files import write_if_changed
from gradtrace.png import svg_to_png
from gradtrace.reveal.slides import SlideOptions, figure_html
from gradtrace.version import stamp

HTML_FORMATS = ("html", "revealjs")


def _slide_options(spec: FigureSpec, step: int | str | None) -> SlideOptions:
    return SlideOptions(
        step=step,
        lang=spec.lang,
        legend=spec.legend,
        rankdir=spec.layout or "auto",
        caption=spec.caption or None,
        alt=spec.alt or None,
    )


def _stepper(spec: FigureSpec) -> str:
    """The interactive stepper in an iframe whose page is inline (srcdoc)."""
    (page,) = build(spec)
    return (
        '<figure class="gradtrace"><iframe class="gradtrace-stepper"'
        f' title="{html.escape(page.alt)}"'
        f' width="100%" height="{page.height}" style="{FRAME_STYLE}"'
        f' data-gradtrace-version="{html.escape(stamp())}"'
        f' srcdoc="{html.escape(page.data.decode("utf-8"))}"></iframe>'
        + (f"<figcaption>{html.escape(spec.caption)}</figcaption>" if spec.caption else "")
        + "</figure>\n"
    )


def _markdown(spec: FigureSpec, figures: Path) -> str:
    """PNG files of the steps and a Markdown image line for each (formats without HTML)."""
    lines = []
    for fig in build(spec):
        if fig.kind != "svg":
            raise FigureError("mode stepper needs an HTML format (html or revealjs)")
        path = figures / (fig.name.removesuffix(".svg") + ".png")
        write_if_changed(path, svg_to_png(fig.data.decode("utf-8"), 2.0))
        caption = (fig.caption or "").replace("]", "\\]")
        alt = fig.alt.replace('"', "'")
        lines.append(f'![{caption}]({path.as_posix()}){{fig-alt="{alt}"}}\n')
    return "\n".join(lines)


def shortcode_output(
    source: str, options: Mapping[str, str], *, to: str = "html", figures: Path | None = None
) -> str:
    """The shortcode's output for the format `to`. FigureError for bad options or a program
    that cannot run (at its line and column) or cannot be drawn."""
    spec = parse_options(source, options)
    if to not in HTML_FORMATS:
        return _markdown(spec, figures or Path("gradtrace-figures"))
    if spec.mode == "stepper":
        return _stepper(spec)
    trace = trace_of(spec)
    try:
        if to == "revealjs" and spec.step == "all":
            return figure_html(trace, _slide_options(spec, "all"))
        return "".join(figure_html(trace, _slide_options(spec, k)) for k in steps_of(spec, trace))
    except ExportError as err:
        raise FigureError(str(err)) from None
