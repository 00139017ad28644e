"""The checks around `ast.parse`: the text's length, characters and bracket depth before it
reads the text, and the syntax tree's nesting depth after, so that the parser proper (which
recurses) only ever meets a program within max_depth.
"""

from __future__ import annotations

import ast
import re
import unicodedata

from engine.errors import ProgramError
from engine.language.positions import char_column, position_of, syntax_error
from engine.limits import Limits

# Bidirectional controls reorder how text is shown, so code can read differently from what
# runs ("Trojan Source"); they have no place in a program.
BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
OPENERS, CLOSERS = "([{", ")]}"
OPERATOR = re.compile(r"\*\*|[-+*/@]")


def read_tree(source: str, limits: Limits) -> ast.Module:
    """The checked text read by Python's `ast` (never run), its nesting checked too."""
    check_text(source, limits)
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as e:
        raise syntax_error(e, source) from None
    except (RecursionError, MemoryError, ValueError):
        operators = flat_operator_count(source, limits)
        if operators > limits.max_nodes:
            # Point at the operator that would make one node too many.
            over = list(OPERATOR.finditer(source))[limits.max_nodes]
            raise ProgramError(
                f"the program has about {operators:,} operators, more than the "
                f"{limits.max_nodes:,} graph nodes a program may make (max_nodes)",
                *position_of(source, over.start()),
                code="too_large",
                limit="max_nodes",
            ) from None
        raise ProgramError(
            f"the program is nested too deeply to read (the limit is {limits.max_depth} levels, "
            "max_depth)",
            code="too_deep",
            limit="max_depth",
        ) from None
    check_depth(tree, source, limits)
    return tree


def flat_operator_count(source: str, limits: Limits) -> int:
    """When Python's own parser gives up, was it a long flat chain (`x+x+…`, too many nodes)
    or real nesting (`---x`, `x**x**…`)? The count of binary operators, or 0 for nesting."""
    squeezed = re.sub(r"\s+", "", source)
    longest_unary_run = max((len(m) for m in re.findall(r"[-+~]+", squeezed)), default=0)
    if longest_unary_run > limits.max_depth or squeezed.count("**") > limits.max_depth:
        return 0
    return len(OPERATOR.findall(squeezed))


def check_text(source: str, limits: Limits) -> None:
    """Refuse text too long, empty, with characters that have no place in code, or with
    brackets nested deeper than max_depth (outside comments)."""
    if len(source) > limits.max_source_chars:
        raise ProgramError(
            f"the program is {len(source):,} characters long; "
            f"the limit is {limits.max_source_chars:,} (max_source_chars)",
            code="too_long",
            limit="max_source_chars",
        )
    if not source.strip():
        raise ProgramError(
            "the program is empty: type an expression such as x*y + x", 1, 1, code="empty"
        )
    depth = 0
    in_comment = False
    for i, ch in enumerate(source):
        if ch == "\n":
            in_comment = False
        if "\ud800" <= ch <= "\udfff":
            raise ProgramError(
                "the text holds a broken character (an unpaired surrogate)",
                *position_of(source, i),
                code="bad_character",
            )
        if ch in BIDI_CONTROLS:
            raise ProgramError(
                f"the text holds an invisible direction control character "
                f"(U+{ord(ch):04X}), which can make code read differently from what runs",
                *position_of(source, i),
                code="bidi_control",
            )
        if ch == "\x00" or (unicodedata.category(ch) == "Cc" and ch not in "\n\t\r"):
            raise ProgramError(
                f"the text holds a control character (U+{ord(ch):04X})",
                *position_of(source, i),
                code="bad_character",
            )
        if in_comment:
            continue
        if ch == "#":
            in_comment = True
        elif ch in OPENERS:
            depth += 1
            if depth > limits.max_depth:
                raise ProgramError(
                    f"brackets are nested more than {limits.max_depth} deep (max_depth)",
                    *position_of(source, i),
                    code="too_deep",
                    limit="max_depth",
                )
        elif ch in CLOSERS:
            depth = max(0, depth - 1)


# What max_depth counts (README, "Limits"). Two nestings, each at most max_depth deep:
# - brackets: `(`, `[` and `{` open at one point of the text, outside comments (check_text);
# - constructs: each call, index, operator, list or tuple, `.T` and for-loop is one level for
#   what is inside it: `tanh(tanh(x))` is 2, `--x` is 2, `x[0][0]` is 2, `x**x**x` is 2, two
#   nested loops are 2, and `y = tanh(x)` in the inner one is 3. Names and numbers are no
#   level. The left operand of a binary operator is beside it, not inside it, so a flat
#   chain `a + b + c + …` is 1 however long. A loop's `range(…)` is the loop's own level, a
#   method's `.name` its call's, and a tuple of indices (`x[0, 1]`) its index's.
def nests(node: ast.AST) -> bool:
    """Is `node` a construct that counts a level (see above)?"""
    if isinstance(node, ast.expr):
        return not isinstance(node, ast.Name | ast.Constant | ast.Slice | ast.Starred)
    # compound statements: for, and those the parser refuses later (if, while, def, …)
    return isinstance(node, ast.stmt) and hasattr(node, "body")


def check_depth(tree: ast.AST, source: str, limits: Limits) -> None:
    """Refuse constructs nested deeper than max_depth, counted as above, without recursion
    (the parser after this one recurses, and must not meet a deeper program)."""
    # (node, levels around it, whether it is part of its parent's construct)
    stack: list[tuple[ast.AST, int, bool]] = [(tree, 0, False)]
    while stack:
        node, around, part = stack.pop()
        level = around + 1 if nests(node) and not part else around
        if level > limits.max_depth:
            line = getattr(node, "lineno", None)
            col = getattr(node, "col_offset", None)
            column = None if col is None or line is None else char_column(source, line, col)
            raise ProgramError(
                f"the program is nested more than {limits.max_depth} "
                f"level{'s' if limits.max_depth != 1 else ''} deep (max_depth)",
                line,
                column,
                code="too_deep",
                limit="max_depth",
            )
        for child in ast.iter_child_nodes(node):
            beside = isinstance(node, ast.BinOp) and child is node.left
            part_of = (
                (isinstance(node, ast.For) and child is node.iter)
                or (isinstance(node, ast.Call) and child is node.func)
                or (
                    isinstance(node, ast.Subscript)
                    and child is node.slice
                    and isinstance(child, ast.Tuple)
                )
            )
            stack.append((child, around if beside else level, part_of))
