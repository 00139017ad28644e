"""The program's text: the checks before and around `ast.parse` (length, characters, bracket
and construct nesting), and positions in it (1-based lines, columns in code points).

`read(source, limits)` gives a `Source`: the checked syntax tree with the text's lines, so
spans and node texts are read from it without re-splitting the source (one split, and a
column map only for lines that are not ASCII).
"""

from __future__ import annotations

import ast
import difflib
import re
import unicodedata
from collections.abc import Iterable

from engine.autograd.value import Span
from engine.errors import Msg, ProgramError, fail
from engine.limits import Limits

NEWLINE = re.compile(r"\r\n|\r|\n")
# Bidirectional controls reorder how text is shown, so code can read differently from what
# runs ("Trojan Source"); they have no place in a program.
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)
OPENERS, CLOSERS = "([{", ")]}"
OPERATOR = re.compile(r"\*\*|[-+*/@]")
# An op's source text (its label, and the start of a message about it) is cut here: a long
# flat chain `x+x+…` would otherwise repeat the program in every node.
TEXT_CHARS = 60


MAGIC = re.compile(r"^[ \t]*[%!]")  # a notebook's `%matplotlib inline`, `!pip install …`


class Source:
    """A checked program: its text, lines and syntax tree, the spans of its nodes, and the
    notebook lines (IPython's magics) it holds, which are read as blank lines."""

    def __init__(self, text: str, tree: ast.Module, magics: tuple[int, ...] = ()) -> None:
        self.text = text
        self.tree = tree
        self.magics = magics
        self.lines = NEWLINE.split(text)
        self.ascii = [line.isascii() for line in self.lines]

    def column(self, line: int, byte_offset: int) -> int:
        """ast counts columns in UTF-8 bytes; students count characters (1-based)."""
        if 0 < line <= len(self.lines) and self.ascii[line - 1]:
            return byte_offset + 1
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1

    def span(self, node: ast.AST) -> Span:
        line: int = node.lineno  # type: ignore[attr-defined]
        end_line: int = node.end_lineno or line  # type: ignore[attr-defined]
        start: int = node.col_offset  # type: ignore[attr-defined]
        end: int = node.end_col_offset  # type: ignore[attr-defined]
        return Span(
            line,
            self.column(line, start),
            end_line,
            self.column(end_line, start if end is None else end),
        )

    def segment(self, span: Span | None) -> str:
        """The text of a span as a node shows it: comments left out of a span over several
        lines, names as Python reads them (NFKC: `𝐱 * 3` is `x * 3`), cut at TEXT_CHARS ("" for
        no span)."""
        if span is None:
            return ""
        lines = self.lines[span.line - 1 : span.end_line]
        if not lines:
            return ""
        if len(lines) == 1:
            text = lines[0][span.column - 1 : span.end_column - 1]
        else:
            lines[-1] = lines[-1][: span.end_column - 1]
            lines[0] = lines[0][span.column - 1 :]
            text = " ".join(part.split("#", 1)[0].strip() for part in lines)
        if not text.isascii():
            text = unicodedata.normalize("NFKC", text)
        return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"


def read(text: str, limits: Limits) -> Source:
    """The checked text read by Python's `ast` (never run), its nesting checked too."""
    check_text(text, limits)
    lines = NEWLINE.split(text)
    magics = tuple(i + 1 for i, line in enumerate(lines) if MAGIC.match(line))
    code = text
    if magics:  # blanked for Python's parser; their line numbers, and every other, stay
        code = "\n".join("" if i + 1 in magics else line for i, line in enumerate(lines))
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as e:
        raise syntax_error(e, text) from None
    except (RecursionError, MemoryError, ValueError):
        raise too_deep_to_read(text, limits) from None
    return Source(text, tree, magics)


def too_deep_to_read(text: str, limits: Limits) -> ProgramError:
    """When Python's own parser gives up: a long flat chain `x+x+…` (too many nodes, at the
    operator that makes one too many) or real nesting (`---x`, `x**x**…`)."""
    squeezed = re.sub(r"\s+", "", text)
    longest_unary = max((len(m) for m in re.findall(r"[-+~]+", squeezed)), default=0)
    flat = longest_unary <= limits.max_depth and squeezed.count("**") <= limits.max_depth
    operators = len(OPERATOR.findall(squeezed)) if flat else 0
    if operators > limits.max_nodes:
        over = list(OPERATOR.finditer(text))[limits.max_nodes]
        line, column = position_of(text, over.start())
        return fail(
            "limit_max_nodes",
            Span(line, column, line, column + 1),
            code="too_large",
            limit="max_nodes",
            max=limits.max_nodes,
        )
    return fail("limit_max_depth", code="too_deep", limit="max_depth", max=limits.max_depth)


def at(text: str, index: int) -> Span:
    line, column = position_of(text, index)
    return Span(line, column, line, column + 1)


def check_text(text: str, limits: Limits) -> None:
    """Refuse text too long, empty, with characters that have no place in code, or with
    brackets nested deeper than max_depth (outside comments)."""
    if len(text) > limits.max_source_chars:
        raise fail(
            "limit_max_source_chars",
            code="too_long",
            limit="max_source_chars",
            n=len(text),
            max=limits.max_source_chars,
        )
    if not text.strip():
        raise fail("empty_program", Span(1, 1, 1, 1), code="empty")
    depth = 0
    in_comment = False
    for i, ch in enumerate(text):
        if ch == "\n":
            in_comment = False
        elif ch.isascii() and (ch.isprintable() or ch in "\t\r"):
            pass  # the common case, checked no further
        elif "\ud800" <= ch <= "\udfff":
            raise fail("broken_character", at(text, i), code="bad_character")
        elif ch in BIDI_CONTROLS:
            raise fail("bidi_control", at(text, i), code="bidi_control", u=f"U+{ord(ch):04X}")
        elif ch == "\x00" or unicodedata.category(ch) == "Cc":
            raise fail("control_character", at(text, i), code="bad_character", u=f"U+{ord(ch):04X}")
        if in_comment:
            continue
        if ch == "#":
            in_comment = True
        elif ch in OPENERS:
            depth += 1
            if depth > limits.max_depth:
                raise fail(
                    "limit_max_depth",
                    at(text, i),
                    code="too_deep",
                    limit="max_depth",
                    max=limits.max_depth,
                )
        elif ch in CLOSERS:
            depth = max(0, depth - 1)


# What max_depth counts (README, "Limits"). Two nestings, each at most max_depth deep:
# - brackets: `(`, `[` and `{` open at one point of the text, outside comments (check_text);
# - constructs: each call, index, operator, list or tuple, `.T` and compound statement is one
#   level for what is inside it: `tanh(tanh(x))` is 2, `--x` is 2, `x[0][0]` is 2. Names and
#   numbers are no level. The left operand of a binary operator is beside it, not inside it,
#   so a flat chain `a + b + c + …` is 1 however long. A loop's `range(…)` is the loop's own
#   level, a method's `.name` its call's, and a tuple of indices (`x[0, 1]`) its index's.
def nests(node: ast.AST) -> bool:
    """Is `node` a construct that counts a level (see above)?"""
    if isinstance(node, ast.expr):
        return not isinstance(node, ast.Name | ast.Constant | ast.Slice | ast.Starred)
    return isinstance(node, ast.stmt) and hasattr(node, "body")


def part_of(node: ast.AST, child: ast.AST) -> bool:
    """Is `child` part of its parent's construct (no level of its own)?"""
    return (
        (isinstance(node, ast.For) and child is node.iter)
        or (isinstance(node, ast.Call) and child is node.func)
        or (
            isinstance(node, ast.Subscript) and child is node.slice and isinstance(child, ast.Tuple)
        )
    )


def too_deep(src: Source, node: ast.AST, max_depth: int) -> ProgramError:
    """The error of a construct nested past max_depth, at it (engine/language/scan.py's walk
    counts the levels, before anything runs: the interpreter recurses)."""
    line = getattr(node, "lineno", None)
    col = getattr(node, "col_offset", None)
    span = None
    if line is not None and col is not None:
        column = src.column(line, col)
        span = Span(line, column, line, column)
    return fail("limit_max_depth", span, code="too_deep", limit="max_depth", max=max_depth)


def position_of(text: str, index: int) -> tuple[int, int]:
    """1-based line and column (code points) of a character index."""
    lines = NEWLINE.split(text[:index])
    return len(lines), len(lines[-1]) + 1


def syntax_error(e: SyntaxError, text: str) -> ProgramError:
    """Python's SyntaxError as the language's error, its column kept on the line. Python's own
    words are passed on (engine/words/messages.py has their Chinese)."""
    message = (e.msg or "invalid syntax").rstrip(".")
    if "integer string conversion" in message:  # CPython's 4,300-digit guard
        return fail("too_many_digits", Span(e.lineno or 1, 1, e.lineno or 1, 1), code="syntax")
    if e.lineno is None:
        return ProgramError(f"syntax error: {message}", code="syntax")
    lines = NEWLINE.split(text)
    line_text = lines[e.lineno - 1] if 0 < e.lineno <= len(lines) else ""
    column = max(1, min(e.offset or 1, len(line_text) + 1))
    hint = ""
    if ("'" in line_text or '"' in line_text) and "string" in message:
        hint = " (strings are not part of the language)"
    return ProgramError(f"syntax error: {message}{hint}", e.lineno, column, code="syntax")


def close_match(word: str, known: Iterable[str]) -> str | None:
    """The closest known word to `word`, or None."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return close[0] if close else None


def refusal(node: ast.AST) -> Msg:
    """What a construct outside the language is, in words for the message that refuses it."""
    kind = CONSTRUCT_NAMES.get(type(node))
    if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        kind = "bytes"
    return Msg(f"construct_{kind}" if kind else "construct_other", {"kind": type(node).__name__})


# What students might write, named in words for the error message.
CONSTRUCT_NAMES = {
    ast.Import: "import", ast.ImportFrom: "import", ast.Lambda: "lambda",
    ast.SetComp: "set_comprehension", ast.DictComp: "dict_comprehension",
    ast.FunctionDef: "def", ast.AsyncFunctionDef: "async_def", ast.AsyncFor: "async_for",
    ast.AsyncWith: "async_with", ast.ClassDef: "class", ast.With: "with", ast.Try: "try",
    ast.Delete: "del", ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Raise: "raise",
    ast.Dict: "dict", ast.NamedExpr: "walrus", ast.Await: "await", ast.Yield: "yield",
    ast.YieldFrom: "yield", ast.Starred: "starred", ast.AnnAssign: "annotated",
    ast.Match: "match", ast.TryStar: "try",
}  # fmt: skip
