"""Function and method calls as IR: which functions exist (vocabulary, and modules.py for
`np.exp`, `torch.tensor`, `F.relu`), how many values each takes, its keywords (`dim=` is
`axis=`), its constant arguments (axes, shapes, bounds) and the class labels of cross_entropy.
Methods arrive here as calls with their object first (`x.sum(1)` is `sum(x, 1)`).
"""

from __future__ import annotations

import ast
from typing import Any

from engine.autograd.value import Span
from engine.language import ir
from engine.language.positions import did_you_mean
from engine.language.random_spelling import RandomSpellingParser
from engine.language.spelling import TENSOR_CALLS
from engine.language.spelling_more import CONVERSIONS, LIKE
from engine.language.vocabulary import (
    ALIASES,
    BINARY,
    CONSTRUCTORS,
    FUNCTIONS,
    IGNORED_KEYWORDS,
    KEYWORD_ALIASES,
    KEYWORDS,
    METHOD_ALIASES,
    METHODS,
    UNARY,
)

REDUCTIONS = ("sum", "mean", "softmax", "log_softmax")  # a value and an optional axis
# What makes a tensor from numbers or a shape: a leaf when bound to a name (in a program that
# imports torch, only with requires_grad=True, as in PyTorch).
MADE = CONSTRUCTORS | {"tensor", "linspace"} | set(LIKE)


class CallParser(RandomSpellingParser):
    """The calls of the parser (parse.Parser is the whole)."""

    def call(self, node: ast.Call) -> ir.Expr:
        drawn = self.random_call(node)  # random_spelling.py: rng.standard_normal(shape)
        if drawn is not None:
            return drawn
        func = node.func
        args: list[ast.AST] = list(node.args)
        path = self.qualified(func)
        from_torch = False
        if path is not None:
            name = str(self.module_function(func))
            name = ALIASES.get(name, name)  # np.dot is dot, which is matmul
            from_torch = path.startswith("torch")
            if path == "torch.transpose":
                name = "torch_transpose"
        elif isinstance(func, ast.Attribute):
            if func.attr in ("size", "requires_grad_"):
                return self.special_method(node, func)
            if func.attr in (*CONVERSIONS, "item"):
                return self.conversion(node, func)  # spelling_more.py: .double(), .item()
            if func.attr not in METHODS:
                hint = did_you_mean(func.attr, sorted(METHODS))
                raise self.error(func, f"unknown method .{func.attr}(){hint}", "unknown_method")
            name = METHOD_ALIASES.get(func.attr, func.attr)
            if self.torch and func.attr == "transpose" and len(args) == 2:
                name = "torch_transpose"  # PyTorch's x.transpose(0, 1) swaps two axes
            args.insert(0, func.value)
        elif isinstance(func, ast.Name):
            name = func.id
            if name == "len":
                return ir.IntOf(self.static(node), self.span(node))
            if name in ALIASES and name not in FUNCTIONS:
                if name in self.assigned or name in self.free:
                    raise self.error(func, f"'{name}' is a value, not a function")
                name = ALIASES[name]
            elif name not in FUNCTIONS:
                if name in self.assigned or name in self.free:
                    raise self.error(func, f"'{name}' is a value, not a function")
                known = sorted((FUNCTIONS - {"seed"}) | set(ALIASES))
                hint = did_you_mean(name, known)
                raise self.error(func, f"unknown function '{name}'{hint}", "unknown_function")
            if name == "seed":
                raise self.error(node, "seed(n) is a statement of its own, on its own line")
        else:
            raise self.error(node, "only named functions can be called", "unsupported")
        for a in args:
            if isinstance(a, ast.Starred) and name not in MADE and name != "reshape":
                raise self.refuse(a)
        return self.function(name, node, args, from_torch)

    def special_method(self, node: ast.Call, func: ast.Attribute) -> ir.Expr:
        """`x.size(0)` (a number) and `e.requires_grad_()` (e, made a leaf)."""
        if func.attr == "size":
            if len(node.args) != 1 or node.keywords:
                raise self.error(node, "x.size(k) takes one axis: x.size(0)", "arguments")
            return ir.IntOf(self.static(node), self.span(node))
        args = node.args
        plain = not args or (
            len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value is True
        )
        if not plain or node.keywords:
            raise self.error(node, "requires_grad_() takes nothing here, or True", "arguments")
        # Every tensor made inside is a leaf's value (as if made with requires_grad=True).
        self.leaf_calls.update(id(n) for n in ast.walk(func.value))
        return self.expr(func.value)

    def function(self, name: str, node: ast.Call, args: list[ast.AST], torch: bool) -> ir.Expr:
        args = self.positional(name, node, args)  # linspace(0, 1, steps=5), randn(size=(2,))
        kwargs, requires = self.keywords(name, node)
        span, func_span = self.span(node), self.span(node.func)
        if name == "norm":
            return self.norm(node, args, kwargs)  # spelling_more.py: sqrt(sum(x ** 2))
        if name == "square":
            return self.square(node, args)
        if name == "grad":  # the gradient as a graph (engine/autograd/higher.py)
            return self.grad(node, args, span, func_span)
        if name == "pow":
            self.count(name, node, args, "a value and an exponent: pow(x, 2)", 2)
            return ir.BinOp("pow", self.expr(args[0]), self.expr(args[1]), span)
        if name in ("max", "min") and len(args) == 1:
            raise self.error(
                node,
                f"{name} of one value (a reduction over its elements) is not supported; "
                f"{name}(a, b) is elementwise",
                "arguments",
            )
        if name in ("cat", "stack"):
            return self.join(name, node, args, kwargs, span, func_span)
        if name == "clamp":
            return self.clamp(node, args, kwargs, span, func_span)
        if name == "torch_transpose":
            return self.swap(node, args, span, func_span)
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
        if name in MADE:
            made = self.made(name, node, args, span, func_span)
            constant = requires is False or (
                requires is None and torch and id(node) not in self.leaf_calls
            )
            return ir.Call("const", (made,), (), span, func_span) if constant else made
        raise self.error(node, f"unknown function '{name}'", "unknown_function")

    def count(
        self, name: str, node: ast.Call, args: list[ast.AST], usage: str, lo: int, hi: int = 0
    ) -> None:
        """Refuse a call without lo arguments (lo to hi, if hi is given): say how it is called."""
        if not lo <= len(args) <= (hi or lo):
            raise self.error(node, f"{name} takes {usage}", "arguments")

    def keywords(self, name: str, node: ast.Call) -> tuple[list[tuple[str, object]], bool | None]:
        """The call's keywords as the language's (`dim=` is `axis=`), and requires_grad=
        (None when not given). dtype=, device=, create_graph= and retain_graph= are accepted
        and mean nothing: every value is float64, and grad() always builds its graph."""
        allowed = KEYWORDS.get(name, ())
        kwargs: list[tuple[str, object]] = []
        requires: bool | None = None
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**unpacking is not part of the language", "unsupported")
            if self.positional_keyword(name, kw.arg):
                continue  # read as a position (spelling_more.py)
            key = KEYWORD_ALIASES.get(kw.arg, kw.arg)
            if kw.arg in IGNORED_KEYWORDS or (key == "requires_grad" and name in MADE):
                value = kw.value
                if kw.arg in ("dtype", "device"):  # a name such as torch.float32, never called
                    ok = isinstance(value, ast.Name | ast.Attribute) and all(
                        isinstance(n, ast.Name | ast.Attribute | ast.Load) for n in ast.walk(value)
                    )
                    what = f"a name, such as torch.float32 ({kw.arg} is ignored: float64 always)"
                else:
                    ok = isinstance(value, ast.Constant) and isinstance(value.value, bool)
                    what = "True or False"
                if not ok:
                    raise self.error(value, f"{kw.arg} is {what}", "keyword")
                if key == "requires_grad":
                    requires = bool(value.value)  # type: ignore[attr-defined]
                continue
            if key not in allowed:
                shown = ", ".join(allowed)
                can = f"; {name} takes {shown}" if allowed else ""
                raise self.error(kw, f"{name}() has no keyword '{kw.arg}'{can}", "keyword")
            if any(k == key for k, _ in kwargs):
                raise self.error(kw, f"{key} is given twice", "arguments")
            kwargs.append((key, self.keyword_value(key, kw.value)))
        return kwargs, requires

    def grad(self, node: ast.Call, args: list[ast.AST], span: Span, func_span: Span) -> ir.Expr:
        self.count("grad", node, args, "an output and a name: grad(L, x)", 2)
        wrt = args[1]
        if isinstance(wrt, ast.List | ast.Tuple) and len(wrt.elts) == 1:
            wrt = wrt.elts[0]  # torch.autograd.grad(y, [x]): one input, as a list
        if not isinstance(wrt, ast.Name):
            raise self.error(
                args[1],
                "grad(L, x) takes the gradient with respect to a "
                "name: x must be a name bound to a value",
                "arguments",
            )
        return ir.Call("grad", (self.expr(args[0]), self.expr(wrt)), (), span, func_span)

    def join(
        self,
        name: str,
        node: ast.Call,
        args: list[ast.AST],
        kwargs: list[tuple[str, object]],
        span: Span,
        func_span: Span,
    ) -> ir.Expr:
        """cat([a, b], axis=0) and stack([a, b], axis=0): the values as one list."""
        usage = f"a list of values and an optional axis: {name}([a, b], axis=0)"
        self.count(name, node, args, usage, 1, 2)
        if not isinstance(args[0], ast.List | ast.Tuple) or not args[0].elts:
            raise self.error(args[0], f"{name} takes {usage}", "arguments")
        if len(args) == 2:
            if kwargs:
                raise self.error(node, "axis is given twice", "arguments")
            kwargs = [("axis", self.static(args[1]))]
        items = ir.Items(tuple(self.expr(e) for e in args[0].elts), self.span(args[0]))
        return ir.Call(name, (items,), tuple(kwargs), span, func_span)

    def clamp(
        self,
        node: ast.Call,
        args: list[ast.AST],
        kwargs: list[tuple[str, object]],
        span: Span,
        func_span: Span,
    ) -> ir.Expr:
        """clamp(x, min, max), clip(x, lo, hi) or clamp(x, min=0): bounds are numbers."""
        self.count("clamp", node, args, "a value and its bounds: clamp(x, 0, 1)", 1, 3)
        bounds = dict(kwargs)
        for key, arg in zip(("min", "max"), args[1:], strict=False):
            if key in bounds:
                raise self.error(node, f"{key} is given twice", "arguments")
            bounds[key] = self.keyword_value(key, arg)
        if bounds.get("min") is None and bounds.get("max") is None:
            raise self.error(node, "clamp needs a bound: clamp(x, min=0)", "arguments")
        kw = (("min", bounds.get("min")), ("max", bounds.get("max")))
        return ir.Call("clamp", (self.expr(args[0]),), kw, span, func_span)

    def swap(self, node: ast.Call, args: list[ast.AST], span: Span, func_span: Span) -> ir.Expr:
        """PyTorch's transpose(x, 0, 1), which swaps two axes: a matrix's transpose."""
        self.count("transpose", node, args, "a value and two axes: x.transpose(0, 1)", 3)
        axes = (self.static_value(args[1]), self.static_value(args[2]))
        if sorted(axes) != [0, 1]:
            raise self.error(
                node,
                "PyTorch's transpose(x, a, b) is supported for a matrix's two axes (0, 1); "
                "for others write x.permute(…) with every axis",
                "arguments",
            )
        order = ir.StaticArg((ir.SInt(1), ir.SInt(0)), span)
        return ir.Call("transpose", (self.expr(args[0]), order), (), span, func_span)

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
        if not args:
            raise self.error(node, f"{name} takes a value: {name}(x, …)", "arguments")
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
        if key in ("min", "max"):
            if isinstance(node, ast.Constant) and node.value is None:
                return None
            return self.number(node, f"clamp's {key} is a number (or None)", "keyword")
        raise self.error(node, f"unknown keyword {key}", "keyword")

    def axis(self, node: ast.AST) -> object:
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        if isinstance(node, ast.Tuple | ast.List):
            return self.statics(node.elts)
        return self.static(node)

    def labels(self, node: ast.AST) -> ir.Labels:
        """Class labels for cross_entropy or an index: a whole number or a list of them, bare
        or as a tensor (`torch.tensor([0, 2])`, `np.array([0, 2])`)."""

        def one(n: ast.AST) -> int:
            if isinstance(n, ast.Constant) and type(n.value) is int:
                return int(n.value)
            raise self.error(n, "class labels are whole numbers: 0, 1, 2, …", "labels")

        if isinstance(node, ast.Call) and len(node.args) == 1:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in TENSOR_CALLS and (self.qualified(func) or name in self.imported):
                node = node.args[0]
        if isinstance(node, ast.List | ast.Tuple):
            if not node.elts:
                raise self.error(node, "an empty list of labels", "labels")
            return ir.Labels(tuple(one(e) for e in node.elts), self.span(node))
        return ir.Labels(one(node), self.span(node))
