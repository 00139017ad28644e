"""Function and method calls as IR: which functions exist (vocabulary), how many values each
takes, its keywords and constant arguments (axes, shapes), and the class labels of
cross_entropy. Methods arrive here as calls with their object first (`x.sum(1)` is `sum(x, 1)`).
"""

from __future__ import annotations

import ast
from typing import Any

from engine.autograd.value import Span
from engine.language import ir
from engine.language.parser_base import ParserBase
from engine.language.positions import did_you_mean
from engine.language.vocabulary import BINARY, CONSTRUCTORS, FUNCTIONS, KEYWORDS, METHODS, UNARY

REDUCTIONS = ("sum", "mean", "softmax", "log_softmax")  # a value and an optional axis


class CallParser(ParserBase):
    """The calls of the parser (parse.Parser is the whole)."""

    def call(self, node: ast.Call) -> ir.Expr:
        func = node.func
        args: list[ast.AST] = list(node.args)
        if isinstance(func, ast.Attribute):
            if func.attr not in METHODS:
                known = sorted(METHODS)
                hint = did_you_mean(func.attr, known)
                raise self.error(func, f"unknown method .{func.attr}(){hint}", "unknown_method")
            name = func.attr
            args.insert(0, func.value)
        elif isinstance(func, ast.Name):
            name = func.id
            if name not in FUNCTIONS:
                if name in self.assigned or name in self.free:
                    raise self.error(func, f"'{name}' is a value, not a function")
                hint = did_you_mean(name, sorted(FUNCTIONS - {"seed"}))
                raise self.error(func, f"unknown function '{name}'{hint}", "unknown_function")
            if name == "seed":
                raise self.error(node, "seed(n) is a statement of its own, on its own line")
        else:
            raise self.error(node, "only named functions can be called", "unsupported")
        for a in args:
            if isinstance(a, ast.Starred):
                raise self.refuse(a)
        return self.function(name, node, args)

    def function(self, name: str, node: ast.Call, args: list[ast.AST]) -> ir.Expr:
        kwargs = self.keywords(name, node)
        span, func_span = self.span(node), self.span(node.func)
        if name == "grad":  # the gradient as a graph (engine/autograd/higher.py)
            return self.grad(node, args, span, func_span)
        if name in UNARY or name in {"const", "detach"}:
            self.count(name, node, args, f"one value: {name}(x)", 1)
            return ir.Call(name, (self.expr(args[0]),), (), span, func_span)
        if name in BINARY:
            self.count(name, node, args, f"two values: {name}(a, b)", 2)
            return ir.Call(name, (self.expr(args[0]), self.expr(args[1])), (), span, func_span)
        if name == "cross_entropy":
            self.count(name, node, args, "logits and labels: cross_entropy(z, t)", 2)
            second = args[1]
            labels: ir.Expr = (
                self.name(second) if isinstance(second, ast.Name) else self.labels(second)
            )
            return ir.Call(name, (self.expr(args[0]), labels), (), span, func_span)
        if name in REDUCTIONS:
            self.count(name, node, args, f"a value and an optional axis: {name}(x, axis=…)", 1, 2)
            if len(args) == 2:
                if any(k == "axis" for k, _ in kwargs):
                    raise self.error(node, "axis is given twice", "arguments")
                kwargs.append(("axis", self.axis(args[1])))
            return ir.Call(name, (self.expr(args[0]),), tuple(kwargs), span, func_span)
        if name in ("reshape", "transpose"):
            return self.shape_call(name, node, args, kwargs, span, func_span)
        if name in CONSTRUCTORS:
            return self.constructor(name, node, args, span, func_span)
        raise self.error(node, f"unknown function '{name}'", "unknown_function")

    def count(
        self, name: str, node: ast.Call, args: list[ast.AST], usage: str, lo: int, hi: int = 0
    ) -> None:
        """Refuse a call without lo arguments (lo to hi, if hi is given): say how it is called."""
        if not lo <= len(args) <= (hi or lo):
            raise self.error(node, f"{name} takes {usage}", "arguments")

    def keywords(self, name: str, node: ast.Call) -> list[tuple[str, object]]:
        allowed = KEYWORDS.get(name, ())
        kwargs: list[tuple[str, object]] = []
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**unpacking is not part of the language", "unsupported")
            if kw.arg not in allowed:
                can = f"; {name} takes {', '.join(allowed)}" if allowed else ""
                raise self.error(kw, f"{name}() has no keyword '{kw.arg}'{can}", "keyword")
            kwargs.append((kw.arg, self.keyword_value(kw.arg, kw.value)))
        return kwargs

    def grad(self, node: ast.Call, args: list[ast.AST], span: Span, func_span: Span) -> ir.Expr:
        self.count("grad", node, args, "an output and a name: grad(L, x)", 2)
        if not isinstance(args[1], ast.Name):
            raise self.error(
                args[1],
                "grad(L, x) takes the gradient with respect to a "
                "name: x must be a name bound to a value",
                "arguments",
            )
        return ir.Call("grad", (self.expr(args[0]), self.expr(args[1])), (), span, func_span)

    def shape_call(
        self,
        name: str,
        node: ast.Call,
        args: list[ast.AST],
        kwargs: list[tuple[str, object]],
        span: Span,
        func_span: Span,
    ) -> ir.Expr:
        """reshape(x, (2, 3)) or reshape(x, 2, 3); transpose(x), transpose(x, (1, 0)) or
        transpose(x, axes=(1, 0))."""
        if name == "reshape" and len(args) < 2:
            raise self.error(node, "reshape needs a shape: reshape(x, (2, 3))", "arguments")
        shape: tuple[Any, ...] = ()
        if len(args) == 2 and isinstance(args[1], ast.Tuple | ast.List):
            shape = self.statics(args[1].elts)
        elif len(args) >= 2:
            shape = self.statics(args[1:])
        if name == "transpose" and kwargs:
            if len(args) > 1:
                raise self.error(node, "axes is given twice", "arguments")
            axes = kwargs[0][1]
            shape = axes if isinstance(axes, tuple) else ()
        rest: tuple[ir.Expr | ir.StaticArg, ...] = (self.expr(args[0]),)
        if shape or name == "reshape":
            rest += (ir.StaticArg(shape, span),)
        return ir.Call(name, rest, (), span, func_span)

    def constructor(
        self, name: str, node: ast.Call, args: list[ast.AST], span: Span, func_span: Span
    ) -> ir.Expr:
        if name == "full":
            if len(args) != 2:
                raise self.error(
                    node, "full takes a shape and a number: full((2, 3), 0.5)", "arguments"
                )
            shape_node = args[0]
            dims = shape_node.elts if isinstance(shape_node, ast.Tuple | ast.List) else [shape_node]
            fill = self.expr(args[1])
            if not isinstance(fill, ir.Num):
                raise self.error(args[1], "full's fill value must be a number", "arguments")
            return ir.Call(
                name, (ir.StaticArg(self.statics(dims), span), fill), (), span, func_span
            )
        if name == "arange":
            if len(args) != 1:
                raise self.error(node, "arange takes one whole number: arange(5)", "arguments")
            return ir.Call(
                name, (ir.StaticArg((self.static(args[0]),), span),), (), span, func_span
            )
        if len(args) == 1 and isinstance(args[0], ast.Tuple | ast.List):
            sizes: list[ast.AST] = list(args[0].elts)
        else:
            sizes = args
        if not sizes:
            raise self.error(node, f"{name} needs a shape: {name}(2, 3)", "arguments")
        return ir.Call(name, (ir.StaticArg(self.statics(sizes), span),), (), span, func_span)

    def keyword_value(self, key: str, node: ast.AST) -> object:
        if key == "keepdims":
            if isinstance(node, ast.Constant) and isinstance(node.value, bool):
                return node.value
            raise self.error(node, "keepdims is True or False", "keyword")
        if key == "axis":
            return self.axis(node)
        if key == "axes":
            if isinstance(node, ast.Constant) and node.value is None:
                return None
            if isinstance(node, ast.Tuple | ast.List):
                return self.statics(node.elts)
            raise self.error(node, "axes is a tuple of whole numbers: axes=(1, 0)", "keyword")
        raise self.error(node, f"unknown keyword {key}", "keyword")

    def axis(self, node: ast.AST) -> object:
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        if isinstance(node, ast.Tuple | ast.List):
            return self.statics(node.elts)
        return self.static(node)

    def labels(self, node: ast.AST) -> ir.Labels:
        """Class labels for cross_entropy: a whole number or a list of them."""

        def one(n: ast.AST) -> int:
            if isinstance(n, ast.Constant) and type(n.value) is int:
                return int(n.value)
            raise self.error(n, "class labels are whole numbers: 0, 1, 2, …", "labels")

        if isinstance(node, ast.List | ast.Tuple):
            if not node.elts:
                raise self.error(node, "an empty list of labels", "labels")
            return ir.Labels(tuple(one(e) for e in node.elts), self.span(node))
        return ir.Labels(one(node), self.span(node))
