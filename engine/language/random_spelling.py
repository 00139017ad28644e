"""NumPy's random generator and PyTorch's dtype setting as students write them, the parser's
part: `rng = np.random.default_rng(n)` means `seed(n)`, and the generator's draws mean the
language's constructors, from the same stream (`rng.standard_normal(shape)` is
`randn(shape)`, `rng.random(shape)` is `rand(shape)`, `rng.normal(loc, scale, size)` is
`loc + scale * randn(size)`, `rng.uniform(low, high, size)` is `low + (high - low) *
rand(size)`), so the numbers are NumPy's own. `torch.tensor(<a draw or a NumPy
constructor>)` is that value, and `torch.set_default_dtype(torch.float64)` is accepted and
changes nothing: gradtrace computes in float64. calls.py builds on it.
"""

from __future__ import annotations

import ast
from typing import Any

from engine.autograd.value import Span
from engine.language import ir
from engine.language.spelling_more import MoreSpellingParser

GENERATOR = "numpy.random.default_rng"
# method -> the language's constructor it draws with, and its parameters before `size`
DRAWS = {
    "standard_normal": ("randn", ()),
    "random": ("rand", ()),
    "normal": ("randn", (("loc", 0.0), ("scale", 1.0))),
    "uniform": ("rand", (("low", 0.0), ("high", 1.0))),
}
# The dtypes torch.set_default_dtype may name: gradtrace computes in float64 only.
FLOAT64 = ("torch.float64", "torch.double")
# The NumPy constructors whose values torch.tensor(…) or np.array(…) may wrap as they are.
WRAPPED = ("randn", "rand", "zeros", "ones", "full", "arange", "linspace")


class RandomSpellingParser(MoreSpellingParser):
    """default_rng and its draws, tensor(draw), set_default_dtype (parse.Parser is whole)."""

    def __init__(self, source: str, limits: Any) -> None:
        super().__init__(source, limits)
        self.generators: dict[str, int] = {}  # a name bound to default_rng(n) -> n

    # --- statements ------------------------------------------------------------------------
    def note(self, node: ast.stmt) -> ir.Stmt | None:
        """`rng = np.random.default_rng(n)` (a seed) and `torch.set_default_dtype(…)`
        (nothing); the other statements that make nothing as spelling_more.py reads them."""
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and self.qualified(node.value.func) == GENERATOR
        ):
            return self.generator(node, node.value)
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and self.qualified(node.value.func) == "torch.set_default_dtype"
        ):
            call = node.value
            ok = len(call.args) == 1 and not call.keywords
            if not ok or self.qualified(call.args[0]) not in FLOAT64:
                raise self.error(
                    call,
                    "gradtrace computes in float64: torch.set_default_dtype(torch.float64) is "
                    "the only default it accepts",
                    "unsupported",
                )
            return ir.Note(ast.unparse(node), self.span(node))
        if isinstance(node, ast.ImportFrom) and node.module == "numpy.random" and not node.level:
            return self.import_generator(node)
        return super().note(node)

    def import_generator(self, node: ast.ImportFrom) -> ir.Stmt | None:
        """`from numpy.random import default_rng [as …]`, with the others it imports."""
        rest = [a for a in node.names if a.name != "default_rng"]
        for alias in node.names:
            if alias.name == "default_rng":
                local = alias.asname or alias.name
                self.check_name(node, local)
                self.imported[local] = GENERATOR
        if rest:
            super().note(ast.copy_location(ast.ImportFrom(node.module, rest, 0), node))
        return ir.Note(ast.unparse(node), self.span(node))

    def generator(self, node: ast.Assign, call: ast.Call) -> ir.Stmt:
        """`rng = np.random.default_rng(n)`: seed(n), and `rng` names the language's one
        random stream (a second generator under another name would need a second stream)."""
        target = node.targets[0] if len(node.targets) == 1 else None
        if not isinstance(target, ast.Name):
            raise self.error(node, "name the generator: rng = np.random.default_rng(0)")
        self.check_name(target, target.id)
        seeds = call.args or [k.value for k in call.keywords if k.arg == "seed"]
        if len(seeds) != 1 or len(call.args) + len(call.keywords) != 1:
            raise self.error(
                call,
                "default_rng takes one seed, a whole number: np.random.default_rng(0) "
                "(gradtrace's numbers are the same on every run)",
                "arguments",
            )
        n = self.static_value(seeds[0])
        if n < 0:
            raise self.error(seeds[0], "a seed is a whole number ≥ 0", "static")
        others = set(self.generators) - {target.id}
        if others:
            raise self.error(
                target,
                f"one random generator per program: draw from {sorted(others)[0]}, or seed "
                "it again under the same name",
                "unsupported",
            )
        self.generators[target.id] = n
        return ir.Seed(n, self.span(node))

    # --- expressions -----------------------------------------------------------------------
    def random_call(self, node: ast.Call) -> ir.Expr | None:
        """`rng.standard_normal(shape)` and the other draws as the language's constructors;
        `np.random.default_rng(n)` inside an expression is refused; None for any other call."""
        func = node.func
        made_here = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
        if self.qualified(func) == GENERATOR or (
            made_here and self.qualified(func.value.func) == GENERATOR  # type: ignore[attr-defined]
        ):
            raise self.error(
                node,
                "make the generator on its own line, then draw from it: "
                "rng = np.random.default_rng(0); x = rng.standard_normal(3)",
            )
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in self.generators
        ):
            return None
        draw = DRAWS.get(func.attr)
        if draw is None:
            listed = ", ".join(DRAWS)
            raise self.error(
                func,
                f"{func.value.id}.{func.attr} is not supported; the draws that work are: {listed}",
                "unknown_method",
            )
        made, params = draw
        names = [p for p, _ in params] + ["size"]
        given: dict[str, ast.AST] = {}
        if len(node.args) > len(names):
            raise self.error(node, f"{func.attr} takes {', '.join(names)}", "arguments")
        given.update(zip(names, node.args, strict=False))
        for kw in node.keywords:
            if kw.arg not in names or kw.arg in given:
                why = "is given twice" if kw.arg in given else "is not one of them"
                raise self.error(
                    kw, f"{func.attr} takes {', '.join(names)}; {kw.arg} {why}", "keyword"
                )
            given[kw.arg] = kw.value
        span, func_span = self.span(node), self.span(func)
        shape = self.draw_shape(given.get("size"), span)
        value: ir.Expr = ir.Call(made, (shape,), (), span, func_span)
        numbers = {
            p: self.number(given[p], f"{func.attr}'s {p} is a number") if p in given else d
            for p, d in params
        }
        if func.attr == "normal":
            value = self.affine(value, numbers["loc"], numbers["scale"], span)
        elif func.attr == "uniform":
            low, high = numbers["low"], numbers["high"]
            value = self.affine(value, low, high - low, span)
        return value

    def draw_shape(self, size: ast.AST | None, span: Span) -> ir.StaticArg:
        """size=None (one number), size=3 or size=(2, 3), as a shape."""
        if size is None or (isinstance(size, ast.Constant) and size.value is None):
            return ir.StaticArg((), span)
        dims = size.elts if isinstance(size, ast.Tuple | ast.List) else [size]
        return ir.StaticArg(self.statics(dims), span)

    @staticmethod
    def affine(value: ir.Expr, shift: float, scale: float, span: Span) -> ir.Expr:
        """shift + scale * value, leaving out what changes nothing (NumPy's own arithmetic:
        its normal() is loc + scale * standard_normal())."""
        if scale != 1.0:
            value = ir.BinOp("mul", ir.Num(scale, span), value, span)
        if shift != 0.0:
            value = ir.BinOp("add", ir.Num(shift, span), value, span)
        return value

    def made(
        self, name: str, node: ast.Call, args: list[ast.AST], span: Span, func_span: Span
    ) -> ir.Expr:
        """`torch.tensor(rng.standard_normal(3))`, `np.array(np.linspace(0, 1, 5))`: the value
        the inner call makes; other tensors as spelling_more.py makes them."""
        if name == "tensor" and len(args) == 1 and isinstance(args[0], ast.Call):
            inner = self.expr(args[0])
            if isinstance(inner, ir.Call) and inner.func in WRAPPED:
                return inner
            raise self.error(
                args[0],
                "tensor(…) takes numbers, a list of them, or one NumPy draw or constructor "
                "as it is (rng.standard_normal((2, 3)), np.zeros(3)); not a computed value",
                "arguments",
            )
        return super().made(name, node, args, span, func_span)
