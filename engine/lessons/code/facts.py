"""What the run knows that the syntax does not, read by the code writer: which graph nodes a
piece of the program made (by its span), whether a name bound to a literal became a
parameter, a number or class labels, and which value the implicit pass differentiated.

The generated code follows the program's own syntax tree; where the program's meaning depends
on what its values were (`max(a, b)` of numbers or of tensors, `exp(2.0)` of a number), the
run that already happened says which.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.value import Span, Value
from engine.language.values import Pending

if TYPE_CHECKING:
    from engine.program import Run


class Facts:
    """The nodes of one run by the span of the text that made them."""

    def __init__(self, run: Run) -> None:
        self.src = run.source
        self.env = run.interpreter.env
        self.registered = run.interpreter.registered
        self.at: dict[Span, list[Value]] = {}
        for node in run.nodes:
            if node.span is not None:
                self.at.setdefault(node.span, []).append(node)
        self.pending: dict[Span, list[Pending]] = {}
        for _, p in run.interpreter.pending:
            if p.node.span is not None:
                self.pending.setdefault(p.node.span, []).append(p)
        self.spans: dict[int, Span] = {}
        # the calls that ran a pass of a gradient transform (jax.grad(f)(x), grad(f)(x))
        self.grad_calls = {p.span for p in run.interpreter.passes.passes if p.kind == "grad"}

    def span(self, node: ast.AST) -> Span | None:
        key = id(node)
        if key not in self.spans:
            if not hasattr(node, "lineno"):
                return None
            self.spans[key] = self.src.span(node)
        return self.spans[key]

    def nodes_at(self, node: ast.AST) -> list[Value]:
        span = self.span(node)
        return self.at.get(span, []) if span is not None else []

    def op_at(self, node: ast.AST) -> Value | None:
        """The last graph op the text of `node` made (its result), if it made one."""
        ops = [n for n in self.nodes_at(node) if n.op is not None]
        return ops[-1] if ops else None

    def leaf_at(self, node: ast.AST) -> Value | None:
        leaves = [n for n in self.nodes_at(node) if n.kind == "leaf"]
        return leaves[-1] if leaves else None

    def input_was_number(self, node: ast.AST, k: int) -> bool:
        """Was input `k` of the op `node` made a Python number (`exp(2.0)`, `x.item()`)?"""
        op = self.op_at(node)
        return op is not None and k < len(op.inputs) and from_number(op.inputs[k])

    def binding(self, value: ast.expr) -> str | None:
        """What a name bound to the literal `value` became (without torch): "leaf", "number"
        (read only where a number is needed: `range(n)`), "labels"; None when the run made
        no pending leaf there."""
        span = self.span(value)
        found = self.pending.get(span, []) if span is not None else []
        if not found:
            return None
        if any(p.labels for p in found):
            return "labels"
        if all(p.read_as_number and p.node.seq not in self.registered for p in found):
            return "number"
        return "leaf"

    def raw(self, value: ast.expr) -> Any:
        """The number or list of numbers a literal binding held, when the run made one."""
        span = self.span(value)
        found = self.pending.get(span, []) if span is not None else []
        return found[0].raw if found else None

    def bound_to(self, node: Value) -> list[str]:
        """The program's names bound to `node` at the end of the run."""
        return [
            name
            for name, v in self.env.items()
            if v is node or (isinstance(v, Pending) and v.node is node)
        ]


def from_number(v: Value) -> bool:
    """A constant made of a Python number (the interpreter keeps those as NumPy scalars, the
    tensors a program makes as arrays)."""
    return v.kind == "const" and v.op is None and type(v.data) is np.float64


def implicit_output(run: Run) -> Value | None:
    """The output of the implicit pass of a program with no backward call, else None."""
    passes = run.interpreter.passes.passes
    if len(passes) == 1 and passes[0].kind == "implicit":
        return passes[0].output
    return None


def binds_out(run: Run, facts: Facts | None = None) -> bool:
    """Does the generated code bind the program's bare last expression to `out` (the value the
    implicit pass differentiates)?"""
    out = implicit_output(run)
    last = run.source.tree.body[-1] if run.source.tree.body else None
    if out is None or not isinstance(last, ast.Expr):
        return False
    value = last.value
    if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "print":
        return False
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return False
    facts = facts or Facts(run)
    if out.span == facts.span(value):
        return True
    if isinstance(value, ast.Name):
        return value.id in facts.bound_to(out)
    if isinstance(value, ast.Compare):  # a comparison shown, its left side differentiated
        return out.span == facts.span(value.left)
    return not facts.bound_to(out)
