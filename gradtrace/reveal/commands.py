"""The `gradtrace reveal` and `gradtrace quarto` commands (gradtrace/cli.py adds them).

- `gradtrace reveal "x*y + x" --values x=2,y=3 -o section.html`: a `<section data-gradtrace>`;
  `--deck` a whole deck, `--figure-only` the figure, `--plugin FILE` the plugin file itself;
- `gradtrace quarto --to revealjs -- "x*y + x" values=x=2,y=3 step=all`: what the Quarto
  shortcode inserts, on stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.errors import ProgramError
from engine.inputs.valuespec import parse_values
from gradtrace.errors import ExportError
from gradtrace.files import Program, write_if_changed
from gradtrace.reveal.slides import SlideOptions, deck_html, figure_html, plugin_js, section_html

REVEAL_HELP = """\
Write a backward pass as reveal.js slide markup: a <section data-gradtrace> whose figure has
one fragment per backward step, so the clicker (→, PageDown, Space) walks the graph with the
step's sentence and the leaves' grads; ← goes back. The slide needs the gradtrace plugin:
  <script src="gradtrace-reveal.js"></script>   (write it with --plugin FILE)
  Reveal.initialize({ plugins: [RevealGradtrace] })
--deck writes a whole deck instead, with the plugin inline and reveal.js read from the folder
--reveal (default reveal.js/, holding dist/: npm install reveal.js puts it in node_modules/).
Nothing is fetched from the network; the same program and options give the same bytes.
"""

QUARTO_HELP = """\
Print what the Quarto shortcode {{< gradtrace "PROGRAM" key=value ... >}} inserts (the
extension in quarto/_extensions/gradtrace calls this): HTML for --to html or revealjs,
Markdown image lines for any other format (PNGs written into --figures). The options are the
Sphinx directive's: values, step (a number, all, or absent for the last), accumulate, order,
mode (svg or stepper), caption, alt, lang, legend, height. A program that cannot run prints
the error box (HTML) and its message on stderr, and exits with 2.
"""


def _step(text: str) -> int | str:
    if text == "all":
        return "all"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a step number or all, not {text!r}") from None


def add_commands(sub: Any) -> None:
    """Add `reveal` and `quarto` to the `gradtrace` command's subcommands."""
    r = sub.add_parser(
        "reveal",
        help="write a reveal.js slide (or deck) that steps through backward, one fragment a step",
        description=REVEAL_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument(
        "program", nargs="?", metavar="PROGRAM", help="program text, @FILE, or - for stdin"
    )
    r.add_argument("--values", default="", help="free names' values: x=2,y=3 or a JSON object")
    r.add_argument("--accumulate", choices=["add", "assign"], default="add", help="+= or =")
    r.add_argument("--order", choices=["dfs", "kahn"], default="dfs", help="topological order")
    r.add_argument("--lang", choices=["en", "zh"], default="en", help="words in English or 中文")
    r.add_argument(
        "--step",
        type=_step,
        default="all",
        metavar="K|all",
        help="all (default): a fragment per step; K: that step alone, no fragments",
    )
    r.add_argument("--title", help="a heading for the slide")
    r.add_argument("--caption", help="a caption under the figure")
    r.add_argument("--alt", help="the drawing's text alternative (default: the SVG's own)")
    r.add_argument("--no-legend", action="store_true", help="leave out the legend")
    r.add_argument(
        "--rankdir",
        choices=["auto", "LR", "TB"],
        default="auto",
        help="inputs left (LR) or top (TB); auto (default): the one that draws larger on a slide",
    )
    r.add_argument("--collapse", action="store_true", help="draw a long loop collapsed")
    r.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    r.add_argument("--deck", action="store_true", help="a whole deck, not one <section>")
    r.add_argument("--figure-only", action="store_true", help="the <figure> without <section>")
    r.add_argument("--reveal", default="reveal.js", help="--deck: the folder holding dist/")
    r.add_argument("--plugin", metavar="FILE", help="also write the plugin (gradtrace-reveal.js)")

    q = sub.add_parser(
        "quarto",
        help="print what the Quarto shortcode inserts (used by quarto/_extensions/gradtrace)",
        description=QUARTO_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    q.add_argument("--to", default="html", help="html, revealjs, or another format (markdown)")
    q.add_argument("--figures", default="gradtrace-figures", help="where PNGs go (not HTML)")
    q.add_argument("program", metavar="PROGRAM", help="program text or @FILE")
    q.add_argument("options", nargs="*", metavar="KEY=VALUE", help="the shortcode's options")


def _err(message: str) -> None:
    sys.stderr.write(message + "\n")


def _write(text: str, output: str | None) -> None:
    if output:
        write_if_changed(Path(output), text.encode("utf-8"))
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def reveal(args: argparse.Namespace, read_program: Callable[[str], str]) -> int:
    """`gradtrace reveal`: the section, figure or deck (and the plugin file)."""
    if args.plugin:
        write_if_changed(Path(args.plugin), plugin_js().encode("utf-8"))
    if args.program is None:
        if args.plugin:
            return 0
        _err("gradtrace reveal: error: give a PROGRAM (or --plugin FILE)")
        return 2
    program = Program(
        read_program(args.program), parse_values(args.values), args.accumulate, args.order
    )
    trace = program.trace()
    options = SlideOptions(
        step=args.step,
        lang=args.lang,
        legend=not args.no_legend,
        rankdir=args.rankdir,
        collapse=args.collapse,
        caption=args.caption,
        alt=args.alt,
    )
    if args.figure_only:
        text = figure_html(trace, options)
    else:
        text = section_html(trace, options, title=args.title)
    if args.deck:
        text = deck_html([text], title=args.title or "gradtrace", reveal=args.reveal)
    _write(text, args.output)
    return 0


def quarto(args: argparse.Namespace, read_program: Callable[[str], str]) -> int:
    """`gradtrace quarto`: the shortcode's output on stdout."""
    from gradtrace.figure import FigureError, error_html
    from gradtrace.quarto import shortcode_output

    options: dict[str, str] = {}
    for item in args.options:
        key, sep, value = item.partition("=")
        if not sep:
            _err(f"gradtrace quarto: error: {item!r} is not KEY=VALUE")
            return 2
        options[key.strip()] = value
    source = read_program(args.program)
    try:
        out = shortcode_output(source, options, to=args.to, figures=Path(args.figures))
    except FigureError as err:
        _err(f"error: {err}")
        sys.stdout.write(error_html(err, source))
        return 2
    sys.stdout.write(out)
    sys.stdout.flush()
    return 0


def run_command(args: argparse.Namespace, read_program: Callable[[str], str]) -> int:
    """Run `reveal` or `quarto`; the exit status (0 done, 1 an export failed, 2 bad input)."""
    try:
        if args.command == "reveal":
            return reveal(args, read_program)
        return quarto(args, read_program)
    except ProgramError as err:
        _err(f"error: {err}")
        return 2
    except (ExportError, OSError) as err:
        _err(f"error: {err}")
        return 1
