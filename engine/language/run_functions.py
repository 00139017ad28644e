"""Functions run by inlining: each call runs the function's body afresh with its own names
(a scope whose parent is the one the function was made in), so the graph holds one copy of its
nodes per call. Recursion is refused at the call that would recurse; calls nest at most
max_call_depth deep and each counts against max_statements, so a function calling another
twice, twenty deep, stops at a limit long before 2^20 copies are made.

grad(f)(x) runs f on x and builds ∂f/∂x with grad(y, x) (build.Builder.differentiate).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.ops import UNARY_FUNCTIONS, shape_text
from engine.autograd.value import Span, Value
from engine.language import flow_ir as fx
from engine.language.nodes import NodeMaker
from engine.language.runtime import (
    Builtin,
    Closure,
    GradFunction,
    ListValue,
    Return,
    Scope,
    describe,
    function_name,
    is_number,
    own_names,
)


class FunctionRunner(NodeMaker):
    """Runs def, lambda, their calls and grad(f) (build.Builder is the whole)."""

    scope: Scope | None
    calls: list[Closure]

    def any(self, e: Any) -> Any:
        raise NotImplementedError

    def block(self, body: Any, multiplier: int) -> None:
        raise NotImplementedError

    def as_value(self, v: Any, span: Span | None, what: str = "") -> Value:
        raise NotImplementedError

    def set_var(self, name: str, value: Any) -> None:
        raise NotImplementedError

    def count_statement(self, span: Span | None) -> None:
        raise NotImplementedError

    def differentiate(self, output: Value, wrt: Value, span: Span) -> Value:
        raise NotImplementedError

    def argument(self, e: Any) -> Any:
        raise NotImplementedError

    # --- making functions ----------------------------------------------------------------------
    def define(self, stmt: fx.FuncDef) -> None:
        defaults = tuple(self.argument(d) for d in stmt.defaults)
        own = own_names(stmt.body) | frozenset(stmt.params)
        self.set_var(stmt.name, Closure(stmt, self.scope, defaults, stmt.name, own))

    def make_lambda(self, e: fx.Lambda) -> Closure:
        defaults = tuple(self.argument(d) for d in e.defaults)
        return Closure(e, self.scope, defaults, "lambda", frozenset(e.params))

    def function_value(self, e: Any) -> Any:
        """What a call's target names: a def or lambda, grad(f), or a language function."""
        if isinstance(e, fx.GradOf):
            return GradFunction(self.function_value(e.func), e.span)
        if isinstance(e, fx.FuncRef):
            return Builtin(e.name)
        f = self.any(e)
        if not isinstance(f, Closure | GradFunction | Builtin):
            raise self.error(getattr(e, "span", None), f"{describe(f)} is not a function")
        return f

    # --- calling them --------------------------------------------------------------------------
    def call_function(self, e: fx.CallFn) -> Any:
        f = self.function_value(e.func)
        args = [self.argument(a) for a in e.args]
        kwargs = {k: self.argument(v) for k, v in e.kwargs}
        return self.invoke(f, args, kwargs, e.span)

    def invoke(self, f: Any, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        self.count_statement(span)  # a call is work done, even one that makes no node
        if isinstance(f, Builtin):
            if len(args) != 1 or kwargs:
                raise self.error(span, f"{f.name} takes one value: {f.name}(x)", "arguments")
            x = self.as_value(args[0], span)
            return self.apply(UNARY_FUNCTIONS[f.name](), (x,), span)
        if isinstance(f, GradFunction):
            return self.grad_function(f, args, kwargs, span)
        return self.run_closure(f, args, kwargs, span)

    def run_closure(self, f: Closure, args: list[Any], kwargs: dict[str, Any], span: Span) -> Any:
        for i, active in enumerate(self.calls):
            if active.node is f.node:
                chain = [c.name for c in self.calls[i:]]
                if len(chain) == 1:
                    message = f"{f.name} calls itself; recursion is not supported"
                else:
                    via = ", which calls ".join(chain[1:])
                    message = (
                        f"{chain[0]} calls {via}, which calls {f.name} again; "
                        "recursion is not supported"
                    )
                raise self.error(span, message, "recursion")
        if len(self.calls) >= self.limits.max_call_depth:
            raise self.error(
                span,
                f"calls nest more than {self.limits.max_call_depth} deep (max_call_depth)",
                "too_large",
                limit="max_call_depth",
            )
        names = self.parameters(f, args, kwargs, span)
        outer = self.scope
        self.scope = Scope(names, f.scope, f.own, f.name)
        self.calls.append(f)
        try:
            if isinstance(f.node, fx.Lambda):
                return self.any(f.node.body)
            try:
                self.block(f.node.body, getattr(self, "multiplier", 1))
            except Return as done:
                return done.value
            return None
        finally:
            self.calls.pop()
            self.scope = outer

    def parameters(
        self, f: Closure, args: list[Any], kwargs: dict[str, Any], span: Span
    ) -> dict[str, Any]:
        """The call's arguments bound to f's parameters, as Python binds them."""
        params = f.node.params
        if len(args) > len(params):
            raise self.error(
                span,
                f"{f.name}() takes {len(params)} argument{'s' if len(params) != 1 else ''} "
                f"but {len(args)} were given",
                "arguments",
            )
        names = dict(zip(params, args, strict=False))
        for k, v in kwargs.items():
            if k not in params:
                raise self.error(span, f"{f.name}() has no argument '{k}'", "arguments")
            if k in names:
                raise self.error(span, f"{f.name}() got two values for '{k}'", "arguments")
            names[k] = v
        first_default = len(params) - len(f.defaults)
        for i, p in enumerate(params):
            if p not in names:
                if i < first_default:
                    raise self.error(span, f"{f.name}() is missing its argument '{p}'", "arguments")
                names[p] = f.defaults[i - first_default]
        return names

    def grad_function(
        self, g: GradFunction, args: list[Any], kwargs: dict[str, Any], span: Span
    ) -> Value:
        """grad(f)(x, …): ∂f(x, …)/∂x, built as graph nodes (so grad(grad(f)) works)."""
        if not args:
            raise self.error(
                span, f"{function_name(g)} needs the value to differentiate at", "arguments"
            )
        x = args[0]
        if is_number(x) or (isinstance(x, Value) and not x.requires_grad):
            data = np.float64(x) if is_number(x) else x.data.copy()
            x = self.new_node(data, span, kind="leaf", name=self.first_parameter(g.of))
        if not isinstance(x, Value):
            raise self.error(
                span, f"grad(f)(x) differentiates at a value, not {describe(x)}", "arguments"
            )
        y = self.invoke(g.of, [x, *args[1:]], kwargs, span)
        if isinstance(y, ListValue) or not isinstance(y, Value):
            y = self.as_value(y, span, f"the result of {function_name(g.of)}")
        if y.data.size != 1:
            raise self.error(
                span,
                f"grad(f) needs f to give one number, but it gives shape "
                f"{shape_text(y.data.shape)} (JAX: Gradient only defined for scalar-output "
                "functions)",
                "shape",
            )
        return self.differentiate(y, x, span)

    def first_parameter(self, f: Any) -> str:
        if isinstance(f, Closure) and f.node.params:
            return f.node.params[0]
        if isinstance(f, GradFunction):
            return self.first_parameter(f.of)
        return "x"
