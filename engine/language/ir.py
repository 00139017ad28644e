"""The program as a small tree of dataclasses: what `lang.parse` makes and `build` runs.

Static ints (shapes, axes, indices, loop bounds) stay symbolic until the build, because they
may read a loop variable: `xs[i]`, `range(n)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.autograd.value import Span

# --- static ints -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SInt:
    value: int


@dataclass(frozen=True, slots=True)
class SVar:
    """A loop variable, read where an int is needed."""

    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class SBin:
    op: str  # + - * // **
    left: Static
    right: Static
    span: Span


@dataclass(frozen=True, slots=True)
class SSlice:
    start: Static | None
    stop: Static | None
    step: Static | None


Static = SInt | SVar | SBin

# --- expressions -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Num:
    value: float
    span: Span

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class Array:
    """A nested list of numbers."""

    value: np.ndarray
    span: Span


@dataclass(frozen=True, slots=True)
class Name:
    id: str
    span: Span


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # add sub mul div pow matmul
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Neg:
    operand: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    """A function call; methods are normalised to calls (`x.sum(1)` is `sum(x, 1)`)."""

    func: str
    args: tuple[Expr | StaticArg, ...]
    kwargs: tuple[tuple[str, object], ...]
    span: Span
    func_span: Span


@dataclass(frozen=True, slots=True)
class StaticArg:
    """An int, or a tuple of ints, where a call needs one (a shape, an axis)."""

    value: Static | tuple[Static, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Index:
    value: Expr
    key: tuple[Static | SSlice, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Labels:
    """Class labels for cross_entropy: an int or a list of ints."""

    value: int | tuple[int, ...]
    span: Span


Expr = Num | Array | Name | BinOp | Neg | Call | Index | Labels

# --- statements --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Assign:
    name: str
    expr: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Output:
    """A bare expression: allowed only as the last statement."""

    expr: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Seed:
    value: int
    span: Span


@dataclass(frozen=True, slots=True)
class Loop:
    var: str
    start: Static
    stop: Static
    step: Static
    body: tuple[Stmt, ...]
    span: Span


Stmt = Assign | Output | Seed | Loop


@dataclass(frozen=True, slots=True)
class Program:
    body: tuple[Stmt, ...]
    source: str
    free: tuple[str, ...]  # names used but never assigned, in order of first use
    label_names: frozenset[str]  # names used as cross_entropy's labels
