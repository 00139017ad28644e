"""The program as a small tree of dataclasses: what `parse` makes and `build` runs.

Static ints (shapes, axes, indices, loop bounds) stay symbolic until the build, because they
may read a loop variable: `xs[i]`, `range(n)`.

`str()` of any node is the source it means, normalised (methods as calls, `2` as `2.0`,
brackets only where needed): parse(str(program)) gives the same program again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from engine.autograd.ops import OPS
from engine.autograd.value import Span

if TYPE_CHECKING:
    from engine.language.flow_ir import FlowExpr, FlowStmt
    from engine.language.name_warnings import NameWarning

# --- static ints -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SInt:
    value: int

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class SVar:
    """A loop variable, read where an int is needed."""

    name: str
    span: Span

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class SBin:
    op: str  # + - * // **
    left: Static
    right: Static
    span: Span

    def negation(self) -> bool:
        """Is this `-i` (the parser's `0 - i` for a minus before a non-number)?"""
        return self.op == "-" and self.left == SInt(0) and not isinstance(self.right, SInt)

    def __str__(self) -> str:
        if self.negation():
            return "-" + operand(self.right, UNARY)
        return chain(self)


@dataclass(frozen=True, slots=True)
class SSlice:
    start: Static | None
    stop: Static | None
    step: Static | None

    def __str__(self) -> str:
        text = ":".join("" if p is None else str(p) for p in (self.start, self.stop))
        return text if self.step is None else f"{text}:{self.step}"


@dataclass(frozen=True, slots=True)
class SShape:
    """A value's length along an axis, known once its value is (`x.shape[0]`, `len(x)`); with
    no axis, its whole shape, where a shape is written (`zeros(*x.shape)`)."""

    name: str
    axis: Static | None
    span: Span

    def __str__(self) -> str:
        return f"*{self.name}.shape" if self.axis is None else f"{self.name}.shape[{self.axis}]"


@dataclass(frozen=True, slots=True)
class SList:
    """A list of whole numbers as an index: `x[[0, 2]]` reads elements 0 and 2."""

    items: tuple[Static, ...]
    span: Span

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.items)) + "]"


@dataclass(frozen=True, slots=True)
class SRange:
    """range(start, stop, step) as an index: `p[range(3), y]`."""

    start: Static
    stop: Static
    step: Static
    span: Span

    def __str__(self) -> str:
        return f"range({self.start}, {self.stop}, {self.step})"


Static = SInt | SVar | SBin | SShape

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

    def __str__(self) -> str:
        return repr(self.value.tolist())


@dataclass(frozen=True, slots=True)
class Name:
    id: str
    span: Span

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # add sub mul div pow matmul
    left: Expr
    right: Expr
    span: Span

    def __str__(self) -> str:
        return chain(self)


@dataclass(frozen=True, slots=True)
class Neg:
    operand: Expr
    span: Span

    def __str__(self) -> str:
        return "-" + operand(self.operand, UNARY)


@dataclass(frozen=True, slots=True)
class Call:
    """A function call; methods are normalised to calls (`x.sum(1)` is `sum(x, 1)`)."""

    func: str
    args: tuple[Expr | StaticArg, ...]
    kwargs: tuple[tuple[str, object], ...]
    span: Span
    func_span: Span

    def __str__(self) -> str:
        only = self.args[0] if len(self.args) == 1 and not self.kwargs else None
        if isinstance(only, StaticArg):  # a shape alone is written as sizes: zeros(2, 3)
            sizes = only.value if isinstance(only.value, tuple) else (only.value,)
            return f"{self.func}({', '.join(map(str, sizes))})"
        words = [str(a) for a in self.args] + [f"{k}={keyword(v)}" for k, v in self.kwargs]
        return f"{self.func}({', '.join(words)})"


@dataclass(frozen=True, slots=True)
class StaticArg:
    """An int, or a tuple of ints, where a call needs one (a shape, an axis)."""

    value: Static | tuple[Static, ...]
    span: Span

    def __str__(self) -> str:
        return statics(self.value)


@dataclass(frozen=True, slots=True)
class Index:
    value: Expr
    key: tuple[IndexPart, ...]
    span: Span

    def __str__(self) -> str:
        key = ", ".join(str(k) for k in self.key) if self.key else "()"
        return f"{operand(self.value, ATOM)}[{key}]"


@dataclass(frozen=True, slots=True)
class Labels:
    """Class labels for cross_entropy: an int or a list of ints."""

    value: int | tuple[int, ...]
    span: Span

    def __str__(self) -> str:
        return str(list(self.value)) if isinstance(self.value, tuple) else str(self.value)


@dataclass(frozen=True, slots=True)
class IntOf:
    """A whole number known before the run (`x.shape[0]`) used as a value: a constant."""

    value: Static
    span: Span

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Items:
    """A list of values, where a call takes one: `cat([a, b])`, `stack([x, y], axis=1)`."""

    items: tuple[Expr, ...]
    span: Span

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.items)) + "]"


Expr = Num | Array | Name | BinOp | Neg | Call | Index | Labels | IntOf | Items
# One part of an index: a whole number, a slice, or index lists (a list, a range, a name bound
# to labels): `p[range(3), y]`.
IndexPart = Static | SSlice | SList | SRange | Name

# --- statements --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Assign:
    """`name = expr`; for a name the program reads as a whole number (`n = 3` with `range(n)`),
    expr is a StaticArg and the name is bound to that int."""

    name: str
    expr: Expr | StaticArg | FlowExpr
    span: Span

    def __str__(self) -> str:
        return f"{self.name} = {self.expr}"


@dataclass(frozen=True, slots=True)
class Output:
    """A bare expression: allowed only as the last statement."""

    expr: Expr
    span: Span

    def __str__(self) -> str:
        return str(self.expr)


@dataclass(frozen=True, slots=True)
class Seed:
    value: int
    span: Span

    def __str__(self) -> str:
        return f"seed({self.value})"


@dataclass(frozen=True, slots=True)
class Loop:
    var: str
    start: Static
    stop: Static
    step: Static
    body: tuple[Stmt, ...]
    span: Span

    def __str__(self) -> str:
        bounds = [self.start, self.stop, self.step]
        if self.step == SInt(1):
            bounds.pop()
            if self.start == SInt(0):
                bounds.pop(0)
        body = "\n".join("    " + line for s in self.body for line in str(s).split("\n"))
        return f"for {self.var} in range({', '.join(map(str, bounds))}):\n{body}"


@dataclass(frozen=True, slots=True)
class Note:
    """A statement kept as written that makes nothing: an import (`import torch`), or
    `x.requires_grad_()` (its leaf was made where x was assigned)."""

    text: str
    span: Span

    def __str__(self) -> str:
        return self.text


# with functions, control flow and prints (flow_ir.py, which imports this module)
Stmt: TypeAlias = "Assign | Output | Seed | Loop | Note | FlowStmt"


@dataclass(frozen=True, slots=True)
class Program:
    body: tuple[Stmt, ...]
    source: str
    free: tuple[str, ...]  # names used but never assigned, in order of first use
    label_names: frozenset[str]  # names used as cross_entropy's labels
    # names read where a whole number is needed (`range(n)`, `xs[i]`): bound to ints, not nodes
    int_names: frozenset[str] = frozenset()
    # the program imports torch: a tensor is a constant unless it asks for a gradient (the
    # import's handling sets it); without torch, a name bound to constants only is a leaf
    torch_mode: bool = False
    # free names one edit from an assigned name (`yy` beside `y`), at their first use
    warnings: tuple[NameWarning, ...] = ()
    # names PyTorch makes leaves of whatever they hold: `V = (0.01 * randn(2, 3)).requires_grad_()`,
    # or `V = …` then `V.requires_grad_()` / `V.requires_grad = True` (spelling.py)
    leaf_names: frozenset[str] = frozenset()

    def __str__(self) -> str:
        return "\n".join(str(s) for s in self.body)


# --- writing the IR as source ------------------------------------------------------------------

SUM, TERM, UNARY, POWER, ATOM = 1, 2, 3, 4, 5  # Python's precedence levels, loosest first
LEVELS = {"+": SUM, "-": SUM, "*": TERM, "/": TERM, "//": TERM, "@": TERM, "**": POWER}


def level(node: Expr | Static) -> int:
    """How tightly `str(node)` binds, as Python reads it."""
    declared = getattr(node, "LEVEL", None)  # flow_ir's kinds say it themselves
    if declared is not None:
        return int(declared)
    if isinstance(node, BinOp):
        return LEVELS[symbol(node)]
    if isinstance(node, SBin):
        return UNARY if node.negation() else LEVELS[node.op]
    if isinstance(node, Num | SInt):
        return UNARY if str(node).startswith("-") else ATOM
    return UNARY if isinstance(node, Neg) else ATOM


def operand(node: Expr | Static, need: int) -> str:
    """`node` written where it must bind at least as tightly as `need`."""
    return str(node) if level(node) >= need else f"({node})"


def symbol(node: BinOp | SBin) -> str:
    return node.op if isinstance(node, SBin) else str(OPS[node.op].operator)


def chain(top: BinOp | SBin) -> str:
    """A binary operator and the chain of them down its left operands (`a + b + c + …`),
    written with a loop: such a chain may be max_nodes long, past Python's recursion limit."""
    spine = [top]
    while True:
        left = spine[-1].left
        if not (isinstance(left, type(top)) and not (isinstance(left, SBin) and left.negation())):
            break
        spine.append(left)  # type: ignore[arg-type]
    text, around = str(spine[-1].left), level(spine[-1].left)
    for link in reversed(spine):
        op = symbol(link)
        at = LEVELS[op]
        need_left, need_right = (ATOM, UNARY) if at == POWER else (at, at + 1)
        left_text = text if around >= need_left else f"({text})"
        text, around = f"{left_text} {op} {operand(link.right, need_right)}", at
    return text


def statics(value: Static | tuple[Static, ...]) -> str:
    """A whole number, or a tuple of them as Python writes one: `(2, 3)`, `(2,)`, `()`."""
    if not isinstance(value, tuple):
        return str(value)
    return f"({', '.join(map(str, value))}{',' if len(value) == 1 else ''})"


def keyword(value: object) -> str:
    """A keyword's value (axis=…, keepdims=…): None, True/False, a whole number or a tuple."""
    if isinstance(value, tuple):
        return statics(value)
    return str(value)
