"""Calls: the program's own functions (def and lambda, each call running the body afresh in a
scope of its own, so the graph holds one copy of its nodes per call) and the library's, with
their arguments bound as Python binds them (`Signature`). Recursion is refused at the call that
would recurse; calls nest at most max_call_depth deep and each counts as a statement.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import Msg
from engine.language.values import Closure, Function, Module, Opaque, Return, Scope, describe

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

# Keywords as PyTorch and NumPy spell them, and the language's own.
KEYWORD_ALIASES = {
    "dim": "axis", "keepdim": "keepdims", "a_min": "min", "a_max": "max", "num": "steps",
    "stop": "end",
}  # fmt: skip
# Keywords accepted and ignored: every value is float64 and on the CPU (a dtype given must
# still be one: `dtype=1` is refused, as PyTorch refuses it).
IGNORED = frozenset({"dtype", "device", "out_dtype", "pin_memory", "layout", "memory_format"})
# Keywords no call fills by position (torch.arange(1, 2, 3, True) is an error, as in PyTorch).
KEYWORD_ONLY = frozenset({"requires_grad"})


def make_function(it: Interpreter, node: ast.FunctionDef | ast.Lambda) -> Closure:
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        raise it.error("function_arguments", node, "unsupported")
    for arg in a.args:
        if arg.arg.startswith("__"):
            raise it.error("dunder_name", arg, "unsupported", name=arg.arg[:40])
    defaults = tuple(it.eval(d) for d in a.defaults)
    name = node.name if isinstance(node, ast.FunctionDef) else "lambda"
    own = it.scan.own_names(node) | frozenset(x.arg for x in a.args)
    return Closure(node, it.scope, defaults, name, own)


def call_value(it: Interpreter, f: Any, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    if isinstance(f, Function):
        if f.bound is not None:
            return f.run(it, [f.bound, *args], kwargs, node)
        return f.run(it, args, kwargs, node)
    if isinstance(f, Closure):
        return invoke(it, f, args, kwargs, node)
    if isinstance(f, Module):  # tinygrad's Tensor: a module of constructors, called to make one
        if "()" not in it.library.modules.get(f.path, {}):  # "()": no attribute can name it
            raise it.error("module_not_function", node, "invalid", name=f.path)
        made = it.library.module_attribute(it, f"{f.path}.()", node)
        return call_value(it, made, args, kwargs, node)
    func = getattr(node, "func", None)
    text = it.src.segment(it.where(func)) if func is not None else "this"
    raise it.error("not_a_function", node, "invalid", name=text, v=describe(f))


def invoke(it: Interpreter, f: Closure, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    """Run `f`'s body with its own names; the value it returns."""
    it.count("statements", node)  # a call is work done, even one that makes no node
    for i, active in enumerate(it.calls):
        if active.node is f.node:
            chain = [c.name for c in it.calls[i:]]
            if len(chain) == 1:
                raise it.error("recursion_self", node, "recursion", name=f.name)
            via: Any = f.name  # "g, which calls h, which calls f", a step at a time
            for name in reversed(chain[1:]):
                via = Msg("recursion_step", {"a": name, "b": via})
            raise it.error("recursion", node, "recursion", first=chain[0], via=via)
    if len(it.calls) >= it.limits.max_call_depth:
        raise it.error(
            "limit_max_call_depth", node, "too_large", limit="max_call_depth",
            max=it.limits.max_call_depth,
        )  # fmt: skip
    names = parameters(it, f, args, kwargs, node)
    outer, outer_loops = it.scope, it.loops
    it.scope, it.loops = Scope(names, f.scope, f.own, f.name), 0
    it.calls.append(f)
    try:
        if isinstance(f.node, ast.Lambda):
            return it.eval(f.node.body)
        try:
            it.block(f.node.body)
        except Return as done:
            return done.value
        return None
    finally:
        it.calls.pop()
        it.scope, it.loops = outer, outer_loops


def parameters(
    it: Interpreter, f: Closure, args: list[Any], kwargs: dict[str, Any], node: Any
) -> dict[str, Any]:
    """The call's arguments bound to f's parameters, as Python binds them."""
    params = f.params
    if len(args) > len(params):
        raise it.error("too_many_arguments", node, "arguments", name=f.name, n=len(params),
                       given=len(args), s="" if len(params) == 1 else "s")  # fmt: skip
    names = dict(zip(params, args, strict=False))
    for k, v in kwargs.items():
        if k not in params:
            raise it.error("no_such_argument", node, "arguments", name=f.name, arg=k)
        if k in names:
            raise it.error("argument_twice", node, "arguments", name=f.name, arg=k)
        names[k] = v
    first_default = len(params) - len(f.defaults)
    for i, p in enumerate(params):
        if p not in names:
            if i < first_default:
                raise it.error("missing_argument", node, "arguments", name=f.name, arg=p)
            names[p] = f.defaults[i - first_default]
    return names


def check_ignored(it: Interpreter, kw: str, v: Any, node: Any) -> None:
    """`dtype=torch.float32`, `device="cpu"`: accepted (every value is float64 here); a value
    that is no dtype or device at all is refused."""
    ok = v is None or isinstance(v, str | Opaque) or (kw not in ("dtype", "out_dtype"))
    if kw in ("dtype", "out_dtype") and isinstance(v, Function):
        ok = v.name in ("float", "int", "bool")  # NumPy's dtype=float
    if not ok:
        raise it.error("dtype_value", node, "keyword", kw=kw, v=describe(v))


def keyword_node(node: Any, name: str) -> Any:
    """Where a call writes keyword `name` (the call itself if it does not)."""
    return next((kw for kw in getattr(node, "keywords", ()) if kw.arg == name), node)


def argument_node(node: Any, i: int) -> Any:
    """Where a call writes its argument `i` (the call itself if it has fewer)."""
    args = getattr(node, "args", ())
    return args[i] if i < len(args) else node


@dataclass(frozen=True)
class Signature:
    """A library function's parameters: `positional` in order (a trailing `*` name takes the
    rest, as `zeros(2, 3)` does), then `keywords` with their defaults; PyTorch's and NumPy's
    other names for a keyword (`dim`, `keepdim`) are read as the language's."""

    name: str
    positional: tuple[str, ...] = ()
    defaults: tuple[tuple[str, Any], ...] = ()
    usage: str = ""
    keyword_only: tuple[str, ...] = ()  # besides KEYWORD_ONLY

    def bind(self, it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> dict:
        out: dict[str, Any] = {}
        names = [p.rstrip("?") for p in self.positional]
        star = names[-1][1:] if names and names[-1][0] == "*" else None
        plain = names[:-1] if star else names
        required = [p for p in self.positional if not p.endswith("?") and p[0] != "*"]
        keyed = [k for k, _ in self.defaults]
        given = list(args)
        for p in plain:
            if given:
                out[p] = given.pop(0)
        if star:
            out[star] = tuple(given)
            given = []
        for p in keyed:
            if given and p not in KEYWORD_ONLY and p not in self.keyword_only:
                out[p] = given.pop(0)
        if given:
            raise it.error("library_usage", node, "arguments", name=self.name, usage=self.usage)
        for k, v in kwargs.items():
            key = KEYWORD_ALIASES.get(k, k)
            if k in IGNORED:
                check_ignored(it, k, v, keyword_node(node, k))
                continue
            where = keyword_node(node, k)
            if key not in plain and key not in keyed and key != star:
                key_name = "no_such_keyword" if keyed else "no_keywords"
                raise it.error(key_name, where, "keyword", name=self.name, kw=k,
                               allowed=", ".join(keyed))  # fmt: skip
            if key == star and out.get(star) == ():
                out[key] = tuple(v) if isinstance(v, list | tuple) else (v,)
                continue
            if key in out:
                raise it.error("given_twice", where, "arguments", name=key)
            out[key] = v
        for p in required:
            if p not in out:
                raise it.error("library_usage", node, "arguments", name=self.name, usage=self.usage)
        for p in plain:
            out.setdefault(p, None)
        for k, d in self.defaults:
            out.setdefault(k, d)
        return out
