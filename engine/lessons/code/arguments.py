"""A call's arguments as the code writers read them: bound to the function's parameter names,
and written where PyTorch needs a tensor or a keyword (`dim=`, `keepdim=`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from engine.language.calls import IGNORED, KEYWORD_ALIASES
from engine.lessons.code.text import IFEXP, floats_text, literal

if TYPE_CHECKING:
    from engine.lessons.code.writer import Writer

# Draws of a NumPy generator: a constant tensor in the language, an array in NumPy.
DRAWS = frozenset({"standard_normal", "random", "normal", "uniform"})


class Args:
    """A call's arguments bound to a function's parameter names (a `*name` takes the rest),
    PyTorch's and NumPy's keyword names read as the language's (`dim` is `axis`)."""

    def __init__(self, w: Writer, node: ast.Call, names: tuple[str, ...], first: Any = None):
        given: list[ast.expr] = ([first] if first is not None else []) + list(node.args)
        self.values: dict[str, ast.expr] = {}
        self.rest: list[ast.expr] = []
        for name in names:
            if name.startswith("*"):
                self.rest, given = given, []
                break
            if given:
                if isinstance(given[0], ast.Starred):
                    raise w.refuse(given[0])
                self.values[name] = given.pop(0)
        if given:
            raise w.refuse(node)
        for kw in node.keywords:
            if kw.arg is None:
                raise w.refuse(kw.value)
            if kw.arg not in IGNORED:
                self.values[KEYWORD_ALIASES.get(kw.arg, kw.arg)] = kw.value

    def get(self, name: str) -> ast.expr | None:
        return self.values.get(name)


def tensor(w: Writer, arg: ast.expr, call: ast.AST, k: int, prec: int = IFEXP) -> str:
    """Argument `arg`, input `k` of the op `call` made, where PyTorch needs a tensor: a
    number or list written out, or one the run saw a number, as `torch.tensor(…)`."""
    if not w.torch:
        return w.expr(arg, prec)
    lit = literal(arg)
    if lit is not None:
        return f"torch.tensor({floats_text(lit)})"
    if w.ctx.facts.input_was_number(call, k):
        return f"torch.tensor(float({w.expr(arg)}))"
    return w.expr(arg, prec)


def keyword(w: Writer, a: Args, name: str, spelled: str, default: Any = None) -> str:
    """`, dim=1` for the argument `name` given (as `spelled`), or nothing."""
    v = a.get(name)
    if v is None or (isinstance(v, ast.Constant) and v.value == default):
        return ""
    return f", {spelled}={w.expr(v, IFEXP)}"


def axis(w: Writer, a: Args) -> str:
    if w.torch:
        return keyword(w, a, "axis", "dim") + keyword(w, a, "keepdims", "keepdim", False)
    return keyword(w, a, "axis", "axis") + keyword(w, a, "keepdims", "keepdims", False)


def shape(w: Writer, a: Args, star: str = "dims") -> str:
    """A shape for NumPy: `(2, 3)` from `2, 3` or `*x.shape`, one argument as it is (an int,
    a tuple, `x.shape`), `()` for none."""
    given = a.rest or [v for k in ("size", "shape") if (v := a.get(k)) is not None]
    if len(given) == 1 and not isinstance(given[0], ast.Starred):
        return w.expr(given[0], IFEXP)
    inner = ", ".join(w.item(d) for d in given)
    return f"({inner},)" if len(given) == 1 else f"({inner})"


def requires(w: Writer, a: Args) -> str:
    return keyword(w, a, "requires_grad", "requires_grad", False) if w.torch else ""
