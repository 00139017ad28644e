"""The IR of functions, control flow, lists and what a program shows: the dataclasses that
parse_flow.py and parse_functions.py make and run_flow.py and run_functions.py run.

Like ir.py's, `str()` of each node is the source it means, so a program using them still
prints as a program that parses back to the same IR. Conditions (`Compare`, `BoolOp`, `Not`,
`Bool`) exist only where a condition is read: `if`, `while`, `… if … else …`, a comprehension's
`if`. What a program shows (print, x.grad, backward) is in shown_ir.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.autograd.value import Span
from engine.language import ir
from engine.language.ir import ATOM, Expr, Static, Stmt
from engine.language.shown_ir import Backward, GradRead, Print, Shown, ShownLine, Text

# How tightly each new kind binds, below ir's SUM (1): an operator's operand of these kinds is
# always bracketed (ir.level reads LEVEL).
LAMBDA, IF_EXP, OR, AND, NOT, COMPARE = -5, -4, -3, -2, -1, 0

Target = str | tuple["Target", ...]  # a name, or names unpacked: `i, (w, x)`


def target_text(t: Target, top: bool = True) -> str:
    if isinstance(t, str):
        return t
    inner = ", ".join(target_text(p, top=False) for p in t) + ("," if len(t) == 1 else "")
    return inner if top else f"({inner})"


def target_names(t: Target) -> list[str]:
    return [t] if isinstance(t, str) else [n for p in t for n in target_names(p)]


def block_text(body: tuple[Stmt, ...]) -> str:
    return "\n".join("    " + line for s in body for line in str(s).split("\n"))


def args_text(args: tuple[Expr, ...], kwargs: tuple[tuple[str, Expr], ...] = ()) -> str:
    return ", ".join([str(a) for a in args] + [f"{k}={v}" for k, v in kwargs])


def params_text(params: tuple[str, ...], defaults: tuple[Expr, ...]) -> str:
    plain = len(params) - len(defaults)
    return ", ".join(p if i < plain else f"{p}={defaults[i - plain]}" for i, p in enumerate(params))


# --- conditions --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bool:
    value: bool
    span: Span
    LEVEL: ClassVar[int] = ATOM

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Compare:
    """`a < b`, or a chain `0 < x <= 1` (each link compares its two neighbours)."""

    left: Expr
    ops: tuple[str, ...]  # < > <= >= == !=
    rights: tuple[Expr, ...]
    span: Span
    LEVEL: ClassVar[int] = COMPARE

    def __str__(self) -> str:
        parts = [ir.operand(self.left, ir.SUM)]
        for op, right in zip(self.ops, self.rights, strict=True):
            parts += [op, ir.operand(right, ir.SUM)]
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class BoolOp:
    op: str  # and, or
    values: tuple[Cond, ...]
    span: Span

    @property
    def LEVEL(self) -> int:  # noqa: N802 (read as ir.level reads the others' class constant)
        return AND if self.op == "and" else OR

    def __str__(self) -> str:
        need = AND + 1 if self.op == "and" else AND
        return f" {self.op} ".join(ir.operand(v, need) for v in self.values)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Not:
    operand: Cond
    span: Span
    LEVEL: ClassVar[int] = NOT

    def __str__(self) -> str:
        return "not " + ir.operand(self.operand, NOT)  # type: ignore[arg-type]


Cond = Compare | BoolOp | Not | Bool | Expr

# --- expressions -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IfExp:
    test: Cond
    body: Expr
    orelse: Expr
    span: Span
    LEVEL: ClassVar[int] = IF_EXP

    def __str__(self) -> str:
        test = ir.operand(self.test, OR)  # type: ignore[arg-type]
        return f"{ir.operand(self.body, OR)} if {test} else {ir.operand(self.orelse, IF_EXP)}"


@dataclass(frozen=True, slots=True)
class ListExpr:
    """A list (or tuple) of values known while the program runs: `[a, b]`, `(w, x)`. Not a
    tensor: it can be looped over, unpacked, summed and indexed by a whole number."""

    items: tuple[Expr, ...]
    span: Span
    is_tuple: bool = False

    def __str__(self) -> str:
        text = ", ".join(str(i) for i in self.items)
        if self.is_tuple:
            return f"({text}{',' if len(self.items) == 1 else ''})"
        return f"[{text}]"


@dataclass(frozen=True, slots=True)
class Generator:
    target: Target
    iter: Expr
    ifs: tuple[Cond, ...]

    def __str__(self) -> str:
        ifs = "".join(f" if {ir.operand(c, OR + 1)}" for c in self.ifs)  # type: ignore[arg-type]
        return f"for {target_text(self.target)} in {ir.operand(self.iter, OR + 1)}{ifs}"


@dataclass(frozen=True, slots=True)
class ListComp:
    """`[elt for t in it if c]`, or the same in round brackets (a generator expression)."""

    elt: Expr
    generators: tuple[Generator, ...]
    span: Span
    is_generator: bool = False

    def __str__(self) -> str:
        inner = f"{ir.operand(self.elt, OR)} " + " ".join(str(g) for g in self.generators)
        return f"({inner})" if self.is_generator else f"[{inner}]"


@dataclass(frozen=True, slots=True)
class Zip:
    args: tuple[Expr, ...]
    span: Span

    def __str__(self) -> str:
        return f"zip({args_text(self.args)})"


@dataclass(frozen=True, slots=True)
class Enumerate:
    arg: Expr
    start: int
    span: Span

    def __str__(self) -> str:
        return f"enumerate({self.arg}{f', {self.start}' if self.start else ''})"


@dataclass(frozen=True, slots=True)
class Range:
    """`range(…)` where it is not a for loop's own: in a comprehension, zip or enumerate."""

    start: Static
    stop: Static
    step: Static
    span: Span

    def __str__(self) -> str:
        return f"range({self.start}, {self.stop}, {self.step})"


@dataclass(frozen=True, slots=True)
class ListSum:
    """Python's `sum` of a list: a chain of additions (`start + a + b + …` with a start)."""

    items: Expr
    start: Expr | None
    span: Span

    def __str__(self) -> str:
        items = str(self.items)
        if isinstance(self.items, ListComp) and self.items.is_generator and self.start is None:
            items = items[1:-1]  # sum(x for x in xs)
        return f"sum({items}{'' if self.start is None else f', {self.start}'})"


@dataclass(frozen=True, slots=True)
class Lambda:
    params: tuple[str, ...]
    defaults: tuple[Expr, ...]
    body: Expr
    span: Span
    LEVEL: ClassVar[int] = LAMBDA

    def __str__(self) -> str:
        params = params_text(self.params, self.defaults)
        return f"lambda{' ' if params else ''}{params}: {self.body}"


@dataclass(frozen=True, slots=True)
class GradOf:
    """`grad(f)` (jax.grad, torch.func.grad): the function x ↦ ∂f(x)/∂x, built as grad(y, x)."""

    func: Expr
    span: Span

    def __str__(self) -> str:
        return f"grad({self.func})"


@dataclass(frozen=True, slots=True)
class FuncRef:
    """One of the language's own one-value functions named as a value: `grad(tanh)`."""

    name: str
    span: Span

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class CallFn:
    """A call of a program's own function (def, lambda, grad(f)), inlined where it runs."""

    func: Expr
    args: tuple[Expr, ...]
    kwargs: tuple[tuple[str, Expr], ...]
    span: Span

    def __str__(self) -> str:
        return f"{ir.operand(self.func, ATOM)}({args_text(self.args, self.kwargs)})"


# --- statements --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class If:
    test: Cond
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    span: Span

    def __str__(self) -> str:
        text = f"if {self.test}:\n{block_text(self.body)}"
        if len(self.orelse) == 1 and isinstance(self.orelse[0], If):
            return text + "\nel" + str(self.orelse[0])
        return text + (f"\nelse:\n{block_text(self.orelse)}" if self.orelse else "")


@dataclass(frozen=True, slots=True)
class While:
    test: Cond
    body: tuple[Stmt, ...]
    span: Span

    def __str__(self) -> str:
        return f"while {self.test}:\n{block_text(self.body)}"


@dataclass(frozen=True, slots=True)
class ForEach:
    """`for t in xs:` over a list, a tensor's rows, zip(…), enumerate(…) or a comprehension."""

    target: Target
    iter: Expr
    body: tuple[Stmt, ...]
    span: Span

    def __str__(self) -> str:
        return f"for {target_text(self.target)} in {self.iter}:\n{block_text(self.body)}"


@dataclass(frozen=True, slots=True)
class FuncDef:
    name: str
    params: tuple[str, ...]
    defaults: tuple[Expr, ...]
    body: tuple[Stmt, ...]
    span: Span

    def __str__(self) -> str:
        return (
            f"def {self.name}({params_text(self.params, self.defaults)}):\n{block_text(self.body)}"
        )


@dataclass(frozen=True, slots=True)
class Return:
    value: Expr | None
    span: Span

    def __str__(self) -> str:
        return "return" if self.value is None else f"return {self.value}"


@dataclass(frozen=True, slots=True)
class Jump:
    """`break`, `continue` or `pass`."""

    word: str
    span: Span

    def __str__(self) -> str:
        return self.word


@dataclass(frozen=True, slots=True)
class Unpack:
    """`a, b = e`: e's items bound in turn (a tuple written out is bound item by item)."""

    target: Target
    value: Expr
    span: Span

    def __str__(self) -> str:
        value = str(self.value)
        if isinstance(self.value, ListExpr) and self.value.is_tuple and self.value.items:
            value = value[1:-1].rstrip(",")  # a, b = 1.0, 2.0
        return f"{target_text(self.target)} = {value}"


__all__ = ["Backward", "GradRead", "Print", "Shown", "ShownLine", "Text"]

FlowStmt = If | While | ForEach | FuncDef | Return | Jump | Backward | Print | Unpack | ShownLine
FlowExpr = (
    IfExp | ListExpr | ListComp | Zip | Enumerate | Range | ListSum | Lambda | GradOf | FuncRef
) | CallFn
