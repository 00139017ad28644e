"""Text pieces both code writers share: Python's binding strengths, numbers and tensors' values
written out, the literals of a program, and the refusal of what the lesson cannot write."""

from __future__ import annotations

import ast
from typing import Any

from engine.autograd.value import Span
from engine.errors import ProgramError, fail
from engine.language.source import Source

# Python's binding strengths, low to high.
LAMBDA, IFEXP, OR, AND, NOT, COMPARE, BOR, BXOR, BAND, SHIFT, ARITH, TERM, UNARY, POWER = range(14)
ATOM = 16
BINARY = {
    ast.Add: ("+", ARITH), ast.Sub: ("-", ARITH), ast.Mult: ("*", TERM), ast.MatMult: ("@", TERM),
    ast.Div: ("/", TERM), ast.FloorDiv: ("//", TERM), ast.Mod: ("%", TERM),
    ast.Pow: ("**", POWER), ast.LShift: ("<<", SHIFT), ast.RShift: (">>", SHIFT),
    ast.BitOr: ("|", BOR), ast.BitXor: ("^", BXOR), ast.BitAnd: ("&", BAND),
}  # fmt: skip
SINGLE, DOUBLE = "\x01", "\x02"  # an f-string's quote marks, until its own quote is chosen
UNARY_OPS = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not "}
COMPARISONS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}  # fmt: skip


def unwritable(src: Source, node: Any) -> ProgramError:
    """The lesson's answer for a part of the program it has no code for: a clear refusal at
    that part (never a crash, never code that computes something else)."""
    span = node if isinstance(node, Span) else src.span(node) if hasattr(node, "lineno") else None
    text = src.segment(span) if span is not None else type(node).__name__
    return fail("code_unwritable", span, code="unsupported", text=text.split("\n")[0])


def number_text(v: Any) -> str:
    """A number as Python writes it: whole numbers of a float with `.0` (`2.0`), ints bare."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return repr(v)
    return repr(float(v)) if isinstance(v, float) else str(v)


def floats_text(v: Any) -> str:
    """A number or nested list of numbers, every number a float: a tensor's values."""
    if isinstance(v, list | tuple):
        return "[" + ", ".join(floats_text(x) for x in v) + "]"
    return repr(float(v))


def literal(node: ast.AST, bools: bool = False) -> Any:
    """The number or nested list of numbers written at `node` (`2`, `-1.5`, `[[1, 2]]`), else
    None; a bool is not one, unless `bools` (in a list of numbers, where it is 1 or 0)."""
    try:
        v = ast.literal_eval(node)  # type: ignore[arg-type]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return v if numbers_only(v, bools) and not isinstance(v, bool) else None


def numbers_only(v: Any, bools: bool = False) -> bool:
    if isinstance(v, list | tuple):
        return bool(v) and all(numbers_only(x, bools) for x in v)
    return isinstance(v, int | float) and (bools or not isinstance(v, bool))
