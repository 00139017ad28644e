"""What a program's names hold while it runs, besides graph nodes: Python's numbers (a loop's
counter, `n = 3` read as a whole number, a function's number argument), lists of values,
functions (a def or lambda with the scope it was made in, grad(f), a language function), and
the scopes that hold them. Also the signals that end a loop's turn or a function's body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.autograd.value import Span
from engine.language import flow_ir as fx
from engine.language import ir


@dataclass(frozen=True, slots=True)
class ListValue:
    """A list (or tuple) of values known while the program runs: its items are nodes,
    numbers, lists or functions. Never a node itself: `stack(xs)` makes a tensor of one."""

    items: tuple[Any, ...]
    is_tuple: bool = False

    def kind(self) -> str:
        return "tuple" if self.is_tuple else "list"


@dataclass(eq=False)
class Scope:
    """One call's names (or a comprehension's), its parent the scope its function was made in.
    `own` are the names the function assigns anywhere: they are its own from the start, so
    reading one before it is bound is an error, not a read of the program's name."""

    vars: dict[str, Any]
    parent: Scope | None
    own: frozenset[str]
    name: str


@dataclass(eq=False)
class Closure:
    """A def or lambda, with the scope it was made in and its defaults' values."""

    node: fx.FuncDef | fx.Lambda
    scope: Scope | None
    defaults: tuple[Any, ...]
    name: str
    own: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, slots=True)
class GradFunction:
    """grad(f): the function x ↦ ∂f(x)/∂x."""

    of: Any
    span: Span


@dataclass(frozen=True, slots=True)
class Builtin:
    """One of the language's one-value functions, named as a value (`grad(tanh)`)."""

    name: str


FUNCTION_VALUES = (Closure, GradFunction, Builtin)


def function_name(f: Any) -> str:
    if isinstance(f, Closure):
        return f.name
    if isinstance(f, GradFunction):
        return f"grad({function_name(f.of)})"
    return str(getattr(f, "name", "?"))


def describe(value: Any) -> str:
    """What a value that is not a node is, in words, for a message."""
    if isinstance(value, ListValue):
        return f"a {value.kind()} of {len(value.items)} values"
    if isinstance(value, FUNCTION_VALUES):
        return f"the function {function_name(value)}"
    if isinstance(value, bool):
        return "True or False"
    if isinstance(value, int | float):
        return f"the number {value:g}"
    return "not a value"


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Return(Exception):  # noqa: N818 (a signal, not an error)
    """`return e`: ends the body of the function being called."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class Break(Exception):  # noqa: N818
    """`break`: ends the innermost loop."""


class Continue(Exception):  # noqa: N818
    """`continue`: ends the innermost loop's turn."""


def own_names(body: tuple[ir.Stmt, ...]) -> frozenset[str]:
    """The names a function body binds anywhere (not inside functions it defines)."""
    found: set[str] = set()
    stack: list[Any] = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, ir.Assign):
            found.add(s.name)
        elif isinstance(s, fx.Unpack | fx.ForEach):
            found.update(fx.target_names(s.target))
            if isinstance(s, fx.ForEach):
                stack.extend(s.body)
        elif isinstance(s, fx.FuncDef):
            found.add(s.name)
        elif isinstance(s, ir.Loop):
            found.add(s.var)
            stack.extend(s.body)
        elif isinstance(s, fx.If):
            stack.extend(s.body + s.orelse)
        elif isinstance(s, fx.While):
            stack.extend(s.body)
    return frozenset(found)
