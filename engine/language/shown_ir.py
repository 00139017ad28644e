"""The IR of what a program shows rather than computes: `print(…)`, its strings, `x.grad`
and `.item()`, a comparison shown as its last line (`x.grad == u`), and `L.backward()`, which
marks the output (flow_ir.py holds the rest of the statements; `str()` of each is the source
it means, as there)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.autograd.value import Span
from engine.language import ir
from engine.language.ir import ATOM, Expr


@dataclass(frozen=True, slots=True)
class Text:
    """A string, allowed only as a print's argument."""

    value: str
    span: Span

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class GradRead:
    """`x.grad`: read after backward, in a print (or shown as a statement of its own)."""

    of: Expr
    span: Span

    def __str__(self) -> str:
        return f"{ir.operand(self.of, ATOM)}.grad"


@dataclass(frozen=True, slots=True)
class Shown:
    """A print's argument written through `.item()`, `.tolist()`, `.numpy()` or `.data`."""

    of: Expr
    how: str
    span: Span

    def __str__(self) -> str:
        call = "" if self.how == "data" else "()"
        return f"{ir.operand(self.of, ATOM)}.{self.how}{call}"


@dataclass(frozen=True, slots=True)
class Backward:
    """`L.backward()` (or with a seed: `L.backward(gradient=v)`): L is the output."""

    target: Expr
    gradient: Expr | None
    span: Span

    def __str__(self) -> str:
        seed = "" if self.gradient is None else f"gradient={self.gradient}"
        return f"{ir.operand(self.target, ATOM)}.backward({seed})"


@dataclass(frozen=True, slots=True)
class ShownLine:
    """A comparison as the program's last line (`x.grad == u`, `d_grad == d / a`): shown as a
    print of it would be, never differentiated. `value` is a flow_ir.Compare whose operands
    may read x.grad."""

    value: Expr
    span: Span

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Print:
    args: tuple[Expr | Text | GradRead | Shown, ...]  # an Expr may be a flow_ir.Compare
    span: Span

    def __str__(self) -> str:
        return f"print({', '.join(str(a) for a in self.args)})"
