"""A call written for PyTorch or JAX: what it calls decides who writes it: the library's
functions (spellings.py for the ops, made.py for the tensors a program makes and the passes),
Python's builtins and the values' methods (methods.py), the program's own functions as they
are written."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from engine.autograd import ops
from engine.lessons.code.arguments import Args
from engine.lessons.code.grad_fns import jax_name, torch_name
from engine.lessons.code.made import MADE
from engine.lessons.code.methods import builtin_text, method_text
from engine.lessons.code.spellings import OPS
from engine.lessons.code.text import ATOM, IFEXP, floats_text, literal

if TYPE_CHECKING:
    from engine.lessons.code.writer import Writer

LIBRARY = {**OPS, **MADE}


def call_text(w: Writer, node: ast.Call) -> tuple[str, int]:
    kind, what = w.ctx.callee(node.func)
    if kind == "library":
        entry = LIBRARY.get(what)
        if entry is None:
            raise w.refuse(node)
        spell, names = entry
        text = spell(w, node, Args(w, node, names))
    elif kind == "builtin":
        text = builtin_text(w, what, node)
    elif kind == "method":
        text = method_text(w, node)
    elif kind == "module":
        raise w.refuse(node)
    elif w.ctx.facts.span(node) in w.ctx.facts.grad_calls and node.args and w.torch:
        text = transformed(w, node)
    else:  # the program's own function (a def, a lambda), called as written
        text = f"{w.expr(node.func, ATOM)}({w.arguments(node)})"
    return text if isinstance(text, tuple) else (text, ATOM)


def function_value(w: Writer, name: str, node: ast.AST) -> str:
    """A library function used as a value (`f = torch.tanh`): its framework's name."""
    cls = ops.UNARY_FUNCTIONS.get(name)
    if cls is None:
        raise w.refuse(node)
    return torch_name(cls) if w.torch else jax_name(cls)


def transformed(w: Writer, node: ast.Call) -> str:
    """The call of grad(f) that the run made a pass of: its point a tensor of its own, cut
    from the graph (the language's pass gives a constant, and x.grad stays as it was)."""
    first, rest = node.args[0], node.args[1:]
    lit = literal(first)
    if lit is not None:
        point = f"torch.tensor({floats_text(lit)})"
    elif w.ctx.facts.leaf_at(node) is not None:  # a number or a constant: made the point
        point = f"torch.as_tensor({w.expr(first, IFEXP)}, dtype=torch.float64).detach()"
    else:  # a parameter already: its numbers
        point = f"{w.expr(first, ATOM)}.detach()"
    args = ", ".join([point, *(w.item(a) for a in rest)] + [
        f"{k.arg}={w.expr(k.value, IFEXP)}" for k in node.keywords if k.arg is not None
    ])  # fmt: skip
    return f"{w.expr(node.func, ATOM)}({args})"
