"""What a program's names hold while it runs, besides tensors (engine.autograd.value.Value):
Python's own numbers, booleans, None, strings, lists and tuples, and the kinds below.

- `Pending`: a name bound to a literal without torch (`x = 2`, `W = [[1, 2]]`,
  `W = 0.01 * randn(2, 3)`): a leaf once it is used as a value, the number it holds where a
  number is needed (`range(n)`, `xs[i]`, labels). Its node is made at the binding, so its id
  is in program order, and joins the graph at its first use as a value.
- `Ints`: whole numbers as a tensor (`torch.tensor([0, 2])`, `np.array([1, 0])`): labels and
  indices, never a leaf; a constant when computed with.
- `Array`: a NumPy array in a PyTorch program (`x.numpy()`); `Size`: `x.shape` there.
- `Grad`: `x.grad` read as a tensor: the owner's grad now; `zero_()` clears it in place.
- `Closure`: a def or lambda with the scope it was made in; `Function`: one of the library's
  (names.py); `Module`: `torch`, `np`, `F`, … whose attributes are functions and constants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.value import Value
from engine.errors import Msg

if TYPE_CHECKING:
    import ast


@dataclass(eq=False, slots=True)
class Pending:
    node: Value
    raw: Any  # the number or list of numbers written, or None for a constructor's value
    read_as_number: bool = False  # read where a number is needed: not an unused leaf
    labels: bool = False  # read as class labels: never a value too


@dataclass(eq=False, slots=True)
class Ints:
    data: np.ndarray  # int64


@dataclass(eq=False, slots=True)
class Array:
    """A NumPy array a PyTorch program holds (`w.grad.numpy()`, `x.detach().numpy()`): printed
    as NumPy prints it, computed with numbers and other arrays as NumPy does; a constant
    where a tensor is needed."""

    data: np.ndarray  # float64


class SetItems(tuple):  # type: ignore[type-arg]
    """A set literal (`{0, 9}`), as membership reads it: its items, in order; never a tensor."""

    __slots__ = ()


class Size(tuple):  # type: ignore[type-arg]
    """`x.shape` in a PyTorch program (torch.Size): a tuple, printed `torch.Size([2, 3])`."""

    __slots__ = ()


@dataclass(eq=False, slots=True)
class Grad:
    owner: Value


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

    node: ast.FunctionDef | ast.Lambda
    scope: Scope | None
    defaults: tuple[Any, ...]
    name: str
    own: frozenset[str] = field(default_factory=frozenset)

    @property
    def params(self) -> list[str]:
        return [a.arg for a in self.node.args.args]


@dataclass(frozen=True, eq=False)
class Function:
    """A library function: `run(it, args, kwargs, span)`; `method` when it is bound to a
    value (`x.sum`), which `run` receives first."""

    name: str
    run: Callable[..., Any]
    bound: Any = None

    def bind(self, owner: Any) -> Function:
        return Function(self.name, self.run, owner)


@dataclass(frozen=True, eq=False)
class Module:
    """An imported module as a value: `path` is "torch", "numpy", "torch.nn.functional"…"""

    path: str


@dataclass(eq=False)
class Opaque:
    """A library object with state of its own (an optimizer, NumPy's generator, a no_grad
    block, a GradientTape): `kind` names it, `state` holds what it keeps."""

    kind: str
    state: dict[str, Any]


class Return(Exception):  # noqa: N818 (a signal, not an error)
    """`return e`: ends the body of the function being called."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class Break(Exception):  # noqa: N818
    """`break`: ends the innermost loop."""


class Continue(Exception):  # noqa: N818
    """`continue`: ends the innermost loop's turn."""


def length(v: Any) -> int:
    """len(v), for a range of any size too (past 2⁶³ CPython's len overflows)."""
    if isinstance(v, range):
        step = v.step
        return max(0, (v.stop - v.start + step - (1 if step > 0 else -1)) // step)
    return len(v)


def is_number(v: Any) -> bool:
    return (isinstance(v, int | float) and not isinstance(v, bool)) or isinstance(
        v, np.floating | np.integer
    )


def function_name(f: Any) -> str:
    return str(getattr(f, "name", "?"))


def describe(v: Any) -> Msg:
    """What a value is, in words (a message part, worded in the reader's language)."""
    if isinstance(v, Value | Pending | Grad):
        return Msg("describe_tensor", {})
    if isinstance(v, Ints):
        return Msg("describe_ints", {})
    if isinstance(v, Array):
        return Msg("describe_array", {})
    if isinstance(v, list | tuple | range):
        return Msg("describe_tuple" if isinstance(v, tuple) else "describe_list", {"n": len(v)})
    if isinstance(v, Closure | Function):
        return Msg("describe_function", {"name": function_name(v)})
    if isinstance(v, Module):
        return Msg("describe_module", {"name": v.path})
    if isinstance(v, Opaque):
        return Msg("describe_object", {"name": v.kind.replace("_", " ")})
    if isinstance(v, bool):
        return Msg("describe_bool", {})
    if v is None:
        return Msg("describe_none", {})
    if isinstance(v, str):
        return Msg("describe_string", {})
    if is_number(v):
        return Msg("describe_number", {"v": f"{float(v):g}"})
    return Msg("describe_other", {})


def numbers_list(v: Any) -> bool:
    """A list of numbers, nested: a tensor's value in a program without torch (a tuple, as
    a shape is, stays Python's)."""
    if not isinstance(v, list) or not v:
        return False
    return all(numbers_list(x) if isinstance(x, list | tuple) else is_number(x) for x in v)


def flat(v: Any, depth: int) -> list[Any]:
    """The items of a nested list, `depth` levels down (a check needs only a few)."""
    out: list[Any] = []
    for x in v:
        if isinstance(x, list | tuple) and depth > 0:
            out.extend(flat(x, depth - 1) if x else [None])
        elif isinstance(x, list | tuple):
            continue
        else:
            out.append(x)
    return out
