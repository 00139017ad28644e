"""The same program run again with one edit to its text, for the training lessons: the lines
that zero the grads taken out, or the learning rate's literal changed. The edit is found on the
syntax tree (never by matching text) and made at the tree's own positions, so every other line
keeps its number; the edited program runs through the one interpreter, under the run's own
values, options and limits (the request's deadline too).

A run that fails part way (without zero_grad a loop can overflow, and a grad that is not
finite is the program's error) keeps the passes it made before failing, and the error.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from engine.autograd.ops import quiet
from engine.errors import ProgramError, fail
from engine.inputs.given import free_names
from engine.language.interpreter import Interpreter
from engine.language.output import finish
from engine.language.source import NEWLINE
from engine.library import LIBRARY
from engine.program import Options, Run, read_cached
from engine.tracing.passes import Pass

OPTIMIZERS = frozenset({"SGD", "Adam"})  # engine/library/objects.py


@dataclass
class Edit:
    """Text `new` in place of the tree's span (line, col)–(end_line, end_col), cols in bytes."""

    line: int
    col: int
    end_line: int
    end_col: int
    new: str


@dataclass
class Rerun:
    """What an edited program's run made: its passes, its leaves in creation order, and the
    error it stopped at (None when it ran to its end)."""

    passes: list[Pass]
    leaves: list[Any]
    error: ProgramError | None


def spliced(text: str, edits: list[Edit]) -> str:
    """The text with each edit made (they do not overlap); lines split as the reader splits
    them, columns counted in UTF-8 bytes as ast counts them."""
    lines = [line.encode("utf-8") for line in NEWLINE.split(text)]
    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        head = lines[e.line - 1][: e.col] + e.new.encode("utf-8")
        tail = lines[e.end_line - 1][e.end_col :]
        if e.end_line == e.line:
            lines[e.line - 1] = head + tail
            continue
        # A statement over several lines: its text and empty continued lines, so the lines
        # after it keep their numbers.
        fill = [b"\\"] * (e.end_line - e.line - 1)
        lines[e.line - 1 : e.end_line] = [head + b"\\", *fill, tail]
    return "\n".join(line.decode("utf-8") for line in lines)


def rerun(run: Run, text: str) -> Rerun:
    """The edited program, run as run_program runs it (the same values, options and limits)."""
    limits = run.limits
    try:
        src, scan = read_cached(text, limits)
        free_names(scan.free, scan.labels, run.interpreter.values, limits)
    except ProgramError as err:
        return Rerun([], [], err)
    options = Options(run.accumulate, run.order)
    it = Interpreter(src, scan, run.interpreter.values, limits, options, LIBRARY)
    error: ProgramError | None = None
    with quiet():
        try:
            it.run()
            finish(it)
        except ProgramError as err:
            if err.code == "timeout":  # the request's deadline: the whole answer stops
                raise
            error = err
        except RecursionError:
            error = fail("limit_max_depth", code="too_deep", limit="max_depth",
                         max=limits.max_depth)  # fmt: skip
    return Rerun(list(it.passes.passes), list(it.passes.leaves), error)


# --- what to edit -----------------------------------------------------------------------------
def is_grad(node: ast.AST) -> bool:
    """`w.grad` (or `w.grad.data`)."""
    if isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr == "grad"


def zeroes(stmt: ast.stmt) -> bool:
    """Does this statement zero grads: `w.grad.zero_()`, `w.grad = None`, `opt.zero_grad()`,
    `model.zero_grad()`, `w.grad.data.zero_()`, `w.grad.fill_(0)`, `w.grad *= 0`?"""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute):
            if func.attr == "zero_grad":
                return True
            if func.attr == "zero_" and is_grad(func.value):
                return True
            if func.attr == "fill_" and is_grad(func.value):
                args = stmt.value.args
                return len(args) == 1 and is_zero(args[0])
        return False
    if isinstance(stmt, ast.Assign):
        return (
            all(is_grad(t) for t in stmt.targets)
            and isinstance(stmt.value, ast.Constant)
            and (stmt.value.value is None or is_zero(stmt.value))
        )
    if isinstance(stmt, ast.AugAssign):
        return isinstance(stmt.op, ast.Mult) and is_grad(stmt.target) and is_zero(stmt.value)
    return False


def is_zero(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
        and node.value == 0
    )


def zeroing_statements(tree: ast.Module) -> list[ast.stmt]:
    """Every statement that zeroes grads, in program order."""
    found = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and zeroes(n)]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def without_zeroing(stmts: list[ast.stmt]) -> list[Edit]:
    """Each zeroing statement replaced by `pass` (a block keeps a statement)."""
    return [Edit(s.lineno, s.col_offset, s.end_lineno or s.lineno,
                 s.end_col_offset or s.col_offset, "pass") for s in stmts]  # fmt: skip


@dataclass
class Rate:
    """The learning rate's literal: its value and where it is written."""

    value: float
    node: ast.Constant
    how: str  # "optimizer" (its lr=) or "update" (the number multiplying .grad)
    others: tuple[ast.Constant, ...] = ()  # the same number in the other updates' products


def number_of(node: ast.AST | None) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
        and node.value > 0
    )


def value_of(c: ast.Constant) -> float:
    assert isinstance(c.value, int | float), c.value
    return float(c.value)


def resolve(node: ast.AST | None, names: dict[str, ast.Constant]) -> ast.Constant | None:
    """A positive number written there, or behind the name bound to one once, at the top."""
    if isinstance(node, ast.Name):
        node = names.get(node.id)
    return node if number_of(node) else None  # type: ignore[return-value]


def top_numbers(tree: ast.Module) -> dict[str, ast.Constant]:
    """Names bound once in the whole program, at its top level, to a number: `lr = 0.1`."""
    bound: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            bound[n.id] = bound.get(n.id, 0) + 1
    out: dict[str, ast.Constant] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            v = stmt.value
            named = isinstance(t, ast.Name) and bound.get(t.id) == 1
            if named and isinstance(v, ast.Constant) and number_of(v):
                out[t.id] = v  # type: ignore[attr-defined]
    return out


def mentions_grad(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" for n in ast.walk(node))


def learning_rate(tree: ast.Module) -> Rate | None:
    """The first optimizer's `lr=` (or its second argument), else the first number (or name
    of one) multiplying an expression of `.grad` in an update: `w -= lr * w.grad`."""
    names = top_numbers(tree)
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name not in OPTIMIZERS:
            continue
        given = next((k.value for k in n.keywords if k.arg == "lr"), None)
        if given is None and len(n.args) > 1:
            given = n.args[1]
        c = resolve(given, names)
        if c is not None:
            return Rate(value_of(c), c, "optimizer")
    products = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp)
                and isinstance(n.op, ast.Mult)]  # fmt: skip
    found: list[ast.Constant] = []
    for n in sorted(products, key=lambda n: (n.lineno, n.col_offset)):
        for a, b in ((n.left, n.right), (n.right, n.left)):
            c = resolve(a, names)
            if c is not None and mentions_grad(b) and c not in found:
                found.append(c)
    if not found:
        return None
    # `w -= 0.8 * w.grad; b -= 0.8 * b.grad`: one rate, written at each update
    same = tuple(c for c in found[1:] if value_of(c) == value_of(found[0]))
    return Rate(value_of(found[0]), found[0], "update", same)


def with_rate(rate: Rate, value: float) -> list[Edit]:
    return [Edit(c.lineno, c.col_offset, c.end_lineno or c.lineno,
                 c.end_col_offset or c.col_offset, repr(float(value)))
            for c in (rate.node, *rate.others)]  # fmt: skip
