"""The Sphinx extension: a `.. gradtrace::` directive that draws backward() at build time.

    # conf.py
    extensions = ["gradtrace.sphinx"]          # and "myst_parser" for ```{gradtrace} fences

    .. gradtrace::
       :values: x=2,y=3
       :step: all
       :caption: The sum rule, then the product rule

       x*y + x

The program is the body; the options are gradtrace/figure.py's (values, step, accumulate,
order, mode, caption, alt, lang, legend, height). Each step drawn is a figure node (its caption
numbered by numfig like any figure). Reading a page runs the program, so a program that cannot
run is a warning at the page's line of the program's error and its column (type `gradtrace`,
so `suppress_warnings = ["gradtrace"]` silences it), and the page shows the message in place
of the figure; the build goes on. Writing an HTML page draws each figure into the build's
`_images/` under its content-addressed name (as sphinx.ext.graphviz does): an SVG for
`mode: svg`, the one-file stepper in an iframe for `mode: stepper`. Other builders (LaTeX,
text, man) get the program as a code block.

The same directive is MyST's: with myst-parser, a Markdown page writes
```` ```{gradtrace} ```` with `:values: x=2,y=3` option lines, which is also what Jupyter Book 1
pages use (it is Sphinx underneath: `sphinx: extra_extensions: [gradtrace.sphinx]`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from gradtrace.figure import (
    OPTIONS,
    FigureError,
    build,
    error_html,
    media_html,
    parse_options,
    steps_of,
    trace_of,
    write,
)
from gradtrace.version import __version__

logger = logging.getLogger(__name__)


class gradtrace_figure(nodes.General, nodes.Element):  # noqa: N801 (docutils names nodes so)
    """One step's picture (or the stepper): the program and its options, drawn on writing.
    Its child is the program as a code block, which builders other than HTML show."""


class GradtraceDirective(SphinxDirective):
    """`.. gradtrace::` with the program as its body."""

    has_content = True
    option_spec = dict.fromkeys(OPTIONS, directives.unchanged)

    def run(self) -> list[nodes.Node]:
        source = "\n".join(self.content)
        options = {k: v or "" for k, v in self.options.items()}
        if "lang" not in options and str(self.config.language or "").startswith("zh"):
            options["lang"] = "zh"
        try:
            spec = parse_options(source, options)
            steps = steps_of(spec, trace_of(spec))
        except FigureError as err:
            return [self._refusal(source, err)]
        out: list[nodes.Node] = []
        for k in steps:
            node = gradtrace_figure("", nodes.literal_block(source, source, language="python"))
            node["source"], node["options"], node["step"] = source, options, k
            self.set_source_info(node)
            figure = nodes.figure("", node, classes=["gradtrace"])
            self.set_source_info(figure)
            caption = self._caption(spec.caption, k, len(steps) > 1, spec.lang, steps[-1])
            if caption:
                inline, messages = self.parse_inline(caption, lineno=self.lineno)
                figure += nodes.caption(caption, "", *inline)
                figure += messages
            out.append(figure)
        return out

    def _caption(self, caption: str, k: int, several: bool, lang: str, last: int) -> str:
        if not several:
            return caption
        from gradtrace.assets import ui_strings

        words = ui_strings().get(lang) or ui_strings()["en"]
        label = words.get("step_of", "Step {k} of {n}").format(k=k, n=last)
        return f"{caption} ({label})" if caption else label

    def _page_line(self, i: int) -> int:
        """The page's line of the program's line `i` (1-based). Docutils counts a directive's
        content from the top of the file (0-based); MyST from the directive's first line."""
        if type(self.state).__module__.startswith("myst_parser"):
            return self.lineno + self.content_offset + i
        return self.content_offset + i

    def _refusal(self, source: str, err: FigureError) -> nodes.Node:
        """A warning at the page's line (of the program's error, when it has one), and the
        message in the page where the figure would be."""
        line = self.lineno
        if err.line is not None and self.content:
            line = self._page_line(min(max(err.line, 1), len(self.content)))
        logger.warning("gradtrace: %s", err, location=(self.env.docname, line), type="gradtrace")
        box = nodes.error("", nodes.paragraph(text=f"gradtrace: {err}"))
        box += nodes.literal_block(source, source)
        self.set_source_info(box)
        return box


def visit_html(self: Any, node: gradtrace_figure) -> None:
    """Draw the figure into `_images/` and put its <img> or <iframe> in the page."""
    source = node["source"]
    try:
        spec = parse_options(source, node["options"])
        (fig,) = build(spec, only=node["step"])
    except FigureError as err:  # too large to draw: known only once it is laid out
        logger.warning("gradtrace: %s", err, location=node, type="gradtrace")
        self.body.append(error_html(err, source))
        raise nodes.SkipNode from None
    write(fig, Path(self.builder.outdir) / self.builder.imagedir)
    src = f"{self.builder.imgpath}/{fig.name}" if self.builder.imgpath else fig.name
    self.body.append(media_html(fig, src))
    raise nodes.SkipNode


def visit_other(self: Any, node: gradtrace_figure) -> None:
    """Builders without HTML show the child: the program as a code block."""


def depart_other(self: Any, node: gradtrace_figure) -> None:
    pass


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the node (drawn by HTML builders, the program elsewhere) and the directive."""
    other = (visit_other, depart_other)
    app.add_node(
        gradtrace_figure,
        html=(visit_html, None),
        latex=other,
        text=other,
        man=other,
        texinfo=other,
    )
    app.add_directive("gradtrace", GradtraceDirective)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
