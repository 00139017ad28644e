"""The `gradtrace` command: `trace` prints the per-step grad table in a terminal; `render` writes
files for course notes, slides and notebooks (gradtrace/files.py and its neighbours), with no
server."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from engine.drawing.passes import pass_step
from engine.errors import ProgramError
from engine.inputs.valuespec import parse_values
from engine.tracing.table import format_number, grad_table
from engine.words import words
from gradtrace.errors import ExportError
from gradtrace.figure import FigureError, pass_option
from gradtrace.files import Program, all_steps, bounded_run, step_image, write_if_changed
from gradtrace.reveal.commands import add_commands, run_command
from gradtrace.standalone import standalone_html
from gradtrace.tables import table_html, table_markdown

CHANGED = "*"


def render_table(trace: dict[str, Any]) -> str:
    """Rows = steps, columns = nodes; a `*` marks the cells that step changed."""
    columns, rows = grad_table(trace)
    labels = {n["id"]: n["label"] for n in trace["nodes"]}
    ops = {n["id"]: n["op"] for n in trace["nodes"]}
    header = ["step", "ran"] + [f"{labels[c['id']]}.grad" for c in columns]
    body = []
    for row in rows:
        what = "seed" if row.step == 0 else ops[row.node]
        cells = [str(row.step), f"{labels[row.node]} ({what})"]
        for c in columns:
            mark = CHANGED if c["id"] in row.changed else ""
            cells.append(format_number(row.grads[c["id"]]) + mark)
        body.append(cells)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in body]
    return "\n".join(out)


def summary(trace: dict[str, Any]) -> str:
    """`output = 8; x.grad = 4, y.grad = 2`: the line under the table."""
    grads = ", ".join(f"{k}.grad = {format_number(v)}" for k, v in trace["grads"].items())
    return f"output = {format_number(trace['value'])}; {grads}"


MAIN_HELP = """\
Run a program in gradtrace's small language (a subset of Python: x*y + x, tanh, @, sum, …)
and show every step of its backward pass: in a terminal, or as files for course notes,
slides and notebooks. No server is needed.

PROGRAM is the program's text, @FILE to read it from a file, or - to read standard input.
"""

MAIN_EPILOG = """\
examples:
  gradtrace trace "x*y + x" --values x=2,y=3          the grad table in the terminal
  gradtrace render "x*y + x" --values x=2,y=3 --step 1 -o step1.svg
  gradtrace render @neuron.txt --step 2 -o step2.png   PNG (needs rsvg-convert)
  gradtrace render @neuron.txt --all-steps slides/     slides/step-00.svg, step-01.svg, …
  gradtrace render @neuron.txt --table md -o table.md  the grad table for Markdown notes
  gradtrace render @neuron.txt --html neuron.html      the interactive stepper in one file
                                                      (opens from disk, works offline)
  gradtrace reveal @neuron.txt --deck -o deck.html     a reveal.js deck: a fragment per step

The same program and options give byte-identical files, and a file whose bytes did not
change is not rewritten, so notes under version control do not churn.
`gradtrace render --help` lists every option. In Python: gradtrace.run(source) displays as
the stepper in Jupyter; the gradtrace package has the same exports as functions.
"""

RENDER_HELP = """\
Write one step of the backward pass as SVG or PNG, every step as numbered files, the
per-step grad table as Markdown or HTML, or the whole interactive stepper as one HTML file.
Several outputs can be asked for at once; with none of --all-steps, --html and --table the
last step (or --step K) is written as SVG to standard output.

The drawing: each node shows its value and its grad after the step; the node running its
backward has a thick outline and ▶; the arrows carrying gradient on this step are thick with
bold numbers; grads changed on this step are bold on yellow. The legend says so in --lang.
"""

RENDER_EPILOG = """\
files:
  -o FILE          the format follows the suffix (.svg or .png) unless --format says; with
                   --table, FILE gets the table. Folders are made as needed.
  --all-steps DIR  writes DIR/PREFIX-00.svg … (two digits or more, so they sort); numbered
                   files of the same PREFIX left from a longer program are removed.
  --html FILE      needs gradtrace's static/ and templates/ (a checkout has them; elsewhere set
                   GRADTRACE_ASSETS to the folder that holds them). Editing is off in the file;
                   stepping (buttons, slider, ← → Home End), the table, the explanations and
                   both languages work. FILE#step=3 opens at step 3.
  PNG              drawn by rsvg-convert (Debian/Ubuntu: apt-get install librsvg2-bin; macOS:
                   brew install librsvg) at --scale pixels per CSS pixel (1pt = 4/3 px), on
                   white, with no date or text in the file.

exit status: 0 written; 1 an export failed (no rsvg-convert, too large to draw, a file that
cannot be written); 2 the program cannot run or the options are wrong.
"""


def _add_program_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "program", metavar="PROGRAM", help="program text, @FILE to read it from a file, - for stdin"
    )
    p.add_argument("--values", default="", help="free names' values: x=2,y=3 or a JSON object")
    p.add_argument(
        "--accumulate",
        choices=["add", "assign"],
        default="add",
        help="'add' is the correct +=; 'assign' shows the = instead of += bug",
    )
    p.add_argument(
        "--order",
        choices=["dfs", "kahn"],
        default="dfs",
        help="topological order: DFS post-order (default) or Kahn's, as PyTorch schedules",
    )


def build_parser() -> argparse.ArgumentParser:
    """The `gradtrace` command line: `trace` and `render`, each with the program's options."""
    parser = argparse.ArgumentParser(
        prog="gradtrace",
        description=MAIN_HELP,
        epilog=MAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    t = sub.add_parser(
        "trace",
        help="print the per-step grad table of a program",
        description="Print the per-step grad table (rows = steps, columns = grads; * marks "
        "what the step changed), then the output and the leaves' grads.",
    )
    _add_program_options(t)
    t.add_argument("--json", action="store_true", help="print the whole trace as JSON")

    r = sub.add_parser(
        "render",
        help="write a step as SVG/PNG, every step, the grad table, or a standalone HTML stepper",
        description=RENDER_HELP,
        epilog=RENDER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_render_options(r)
    add_commands(sub)  # reveal (slides) and quarto (the shortcode's output)
    return parser


def _add_render_options(r: argparse.ArgumentParser) -> None:
    """`render`'s options: what to write and how to draw it."""
    _add_program_options(r)
    r.add_argument("--lang", choices=["en", "zh"], default="en", help="words in English or 中文")
    out = r.add_argument_group("what to write")
    out.add_argument(
        "--step",
        type=int,
        metavar="K",
        help="the step to draw: 0 shows only the seed; default the last; out of range clamps",
    )
    out.add_argument(
        "--pass",
        dest="pass_",
        metavar="P",
        help="with several backward passes: first, last or a pass's number (from 0), drawn at "
        "that pass's last step (--step, when given too, wins)",
    )
    out.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    out.add_argument(
        "--format", choices=["svg", "png"], help="image format (default: -o's suffix, else svg)"
    )
    out.add_argument("--all-steps", metavar="DIR", help="every step as DIR/step-00.svg, …")
    out.add_argument(
        "--prefix", default="step", help="file name prefix for --all-steps (default: step)"
    )
    out.add_argument(
        "--table",
        choices=["md", "html"],
        help="the per-step grad table as Markdown or an HTML fragment (to -o or stdout)",
    )
    out.add_argument("--html", metavar="FILE", help="the interactive stepper as one HTML file")
    look = r.add_argument_group("drawing")
    look.add_argument(
        "--scale",
        type=float,
        default=2.0,
        help="PNG pixels per CSS pixel (default 2: sharp on high-density screens)",
    )
    look.add_argument("--no-legend", action="store_true", help="leave out the legend")
    look.add_argument(
        "--rankdir", choices=["LR", "TB"], default="LR", help="inputs on the left (LR) or top"
    )
    look.add_argument(
        "--collapse",
        action="store_true",
        help="draw a long unrolled loop as its first and last iterations and a box",
    )
    r.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr for --all-steps (default: when stderr is a terminal)",
    )


class Progress:
    """A progress bar on stderr in plain text: redrawn in place on a terminal, otherwise a line
    now and then (about every tenth of the work)."""

    WIDTH = 28

    def __init__(self, label: str, stream: IO[str], live: bool) -> None:
        self.label = label
        self.stream = stream
        self.live = live
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        total = max(total, 1)
        if self.live:
            filled = self.WIDTH * done // total
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            end = "\n" if done >= total else ""
            self.stream.write(f"\r{self.label} [{bar}] {done}/{total}{end}")
        else:
            tenth = 10 * done // total
            if tenth == self.shown and done < total:
                return
            self.shown = tenth
            self.stream.write(f"{self.label}: {done}/{total}\n")
        self.stream.flush()


def read_program(text: str) -> str:
    """PROGRAM as given: the text itself, @FILE for a file's, - for standard input's."""
    if text == "-":
        return sys.stdin.read()
    if text.startswith("@"):
        with open(text[1:], encoding="utf-8") as f:
            return f.read()
    return text


def _image_format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    if args.output:
        suffix = Path(args.output).suffix.lower()
        if suffix in (".svg", ".png"):
            return suffix[1:]
        raise UsageError(f"-o {args.output}: say --format svg or png (or end the name in one)")
    return "svg"


class UsageError(Exception):
    """Options that do not fit together."""


def _write(data: bytes, output: str | None, binary: bool = False) -> None:
    if output:
        write_if_changed(Path(output), data)
        return
    if binary and sys.stdout.isatty():
        raise UsageError("PNG is binary: write it to a file with -o FILE")
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def _pass_asked(args: argparse.Namespace) -> int | str | None:
    """--pass first|last|K (a pass's index from 0), read before the program runs."""
    try:
        return pass_option(args.pass_)
    except FigureError as err:
        raise UsageError(f"--pass: {err}") from None


def render(args: argparse.Namespace) -> None:
    """`gradtrace render`: every output asked for, from one run of the program."""
    if args.table and args.output and args.format:
        raise UsageError("-o takes the table here; --format is for images")
    single = args.table is None and (
        args.output is not None
        or args.step is not None
        or args.pass_ is not None
        or not (args.all_steps or args.html)
    )
    which = _pass_asked(args)
    program = Program(
        read_program(args.program), parse_values(args.values), args.accumulate, args.order
    )
    trace = program.trace()
    if args.step is None and which is not None:
        args.step = pass_step(trace, which)
    draw_options = {
        "lang": args.lang,
        "legend": not args.no_legend,
        "rankdir": args.rankdir,
        "collapse": args.collapse,
    }
    if single:
        fmt = _image_format(args)
        data = step_image(trace, args.step, fmt, scale=args.scale, **draw_options)
        _write(data, args.output, binary=fmt == "png")
    if args.table:
        table = (
            table_markdown(trace, lang=args.lang)
            if args.table == "md"
            else table_html(trace, lang=args.lang, step=args.step)
        )
        _write(table.encode("utf-8"), args.output)
    if args.all_steps:
        fmt = args.format or "svg"
        live = sys.stderr.isatty()
        show = live if args.progress is None else args.progress
        progress = Progress(f"gradtrace: {fmt.upper()} steps", sys.stderr, live) if show else None
        all_steps(
            trace,
            Path(args.all_steps),
            fmt,
            prefix=args.prefix,
            scale=args.scale,
            on_progress=progress,
            **draw_options,
        )
    if args.html:
        page = standalone_html(
            trace,
            program=program,
            contrast=program.contrast(),
            step=args.step,
            lang=args.lang,
            collapse=args.collapse,
        )
        write_if_changed(Path(args.html), page.encode("utf-8"))


def error_text(err: ProgramError, lang: str) -> str:
    """`line 2, column 5: unknown function 'tanhh'`, in `lang` (render's --lang): the message
    worded from its key, the position in the drawing's words."""
    if lang == "en":
        return str(err)
    where = words(lang)["svg_error_at"].format(line=err.line, column=err.column)
    return (f"{where}: " if err.line is not None else "") + err.in_language(lang)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; the exit status (0 done, 1 an export or a file failed, 2 bad input)."""
    args = build_parser().parse_args(argv)
    if args.command in ("reveal", "quarto"):
        return run_command(args, read_program)
    try:
        if args.command == "render":
            try:
                render(args)
            except ExportError as err:
                print(f"error: {err}", file=sys.stderr)
                return 1
            return 0
        source = read_program(args.program)
        trace = bounded_run(source, parse_values(args.values), args.accumulate, args.order)
    except ProgramError as err:
        print(f"error: {error_text(err, getattr(args, 'lang', 'en'))}", file=sys.stderr)
        return 2
    except UsageError as err:
        print(f"gradtrace: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(trace, ensure_ascii=False))
    else:
        print(render_table(trace))
        print()
        print(summary(trace))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
