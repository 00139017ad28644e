"""Python's builtins a program may call, as Python means them, on the language's values:
print, range, len, zip, enumerate, list, tuple, float, int, round, abs; sum, max and min of a
list (Python's) or of tensors (the language's ops); and `seed(n)`. Each counts what it makes
(items, characters) before it makes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import shape_text
from engine.autograd.value import Value
from engine.errors import ProgramError
from engine.language.sequences import items_of
from engine.language.values import Array, Grad, Ints, Pending, describe, is_number, length
from engine.library.functions import FUNCTIONS, function
from engine.library.printing import display_text, print_text
from engine.words.messages import say

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

BUILTINS: dict[str, Any] = {}


def builtin(name: str, *positional: str, **defaults: Any) -> Any:
    def register(impl: Any) -> Any:
        library_own = FUNCTIONS.get(name)  # sum, max, abs: the library's keeps its name
        function(name, *positional, **defaults)(impl)
        BUILTINS[name] = FUNCTIONS.pop(name)
        if library_own is not None:
            FUNCTIONS[name] = library_own
        return impl

    return register


def print_call(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> None:
    """print(…): its line written as the program's library prints; once the run has made
    max_print_chars characters of text, the output is cut there, with a line that says so,
    and later prints show (and cost) nothing."""
    if it.print_cut:
        return
    try:
        print_line(it, args, dict(kwargs), node)
    except ProgramError as err:
        if err.limit != "max_print_chars":
            raise
        it.print_cut = True
        it.emit("", node)
        it.printed[-1].update(
            text=say("printed_cut", "en", {"max": it.limits.max_print_chars}),
            key="printed_cut", params={"max": it.limits.max_print_chars}, open=False,
        )  # fmt: skip


def print_line(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> None:
    sep, end = kwargs.pop("sep", " "), kwargs.pop("end", "\n")
    kwargs.pop("flush", None)
    if kwargs:
        raise it.error("print_keyword", node, "keyword", kw=next(iter(kwargs)))
    if not isinstance(sep, str) or not isinstance(end, str):
        raise it.error("print_sep", node, "keyword")
    parts = []
    for a in args:
        if isinstance(a, Value) and a.op is not None:
            it.last_printed = a  # a program that computes only inside its prints
        parts.append(print_text(it, a, node))
        it.check_chars(len(parts[-1]) + len(sep), node)
    it.emit(sep.join(parts), node, end=end)


@builtin("range", "a", "b?", "c?")
def range_of(it: Interpreter, node: Any, a: Any, b: Any, c: Any) -> range:
    bounds = [it.whole(v, node) for v in (a, b, c) if v is not None]
    if bounds[2:] and bounds[2] == 0:
        raise it.error("range_step_zero", node, "invalid")
    return range(*bounds)


@builtin("len", "x")
def len_of(it: Interpreter, node: Any, x: Any) -> int:
    if isinstance(x, list | tuple | str | range):
        return length(x)
    if isinstance(x, Pending | Value | Grad | Ints | Array):
        data = x.data if isinstance(x, Ints | Array) else it.tensor(x, node).data
        if data.ndim == 0:
            raise it.error("len_of_scalar", node, "shape")
        return int(data.shape[0])
    raise it.error("len_of", node, "invalid", v=describe(x))


@builtin("str", "x?")
def text_of(it: Interpreter, node: Any, x: Any) -> str:
    """str(x): what print(x) writes (its characters counted, as a print's are)."""
    text = "" if x is None and not getattr(node, "args", ()) else print_text(it, x, node)
    it.check_chars(len(text), node)
    return text


@builtin("repr", "x")
def repr_of(it: Interpreter, node: Any, x: Any) -> str:
    """repr(x): a notebook's display of x (a string in quotes)."""
    text = display_text(it, x, node)
    it.check_chars(len(text), node)
    return text


@builtin("zip", "*items")
def zipped(it: Interpreter, node: Any, items: Any) -> list[Any]:
    lists = [items_of(it, x, node) for x in items]
    n = min((len(x) for x in lists), default=0)
    it.check_items(n, node)
    return [tuple(x[i] for x in lists) for i in range(n)]


@builtin("enumerate", "x", start=0)
def enumerated(it: Interpreter, node: Any, x: Any, start: Any) -> list[Any]:
    first = it.whole(start, node)
    return [(first + i, v) for i, v in enumerate(items_of(it, x, node))]


@builtin("list", "x?")
def listed(it: Interpreter, node: Any, x: Any) -> list[Any]:
    return [] if x is None else list(items_of(it, x, node))


@builtin("tuple", "x?")
def tupled(it: Interpreter, node: Any, x: Any) -> tuple[Any, ...]:
    return () if x is None else tuple(items_of(it, x, node))


def one_number(it: Interpreter, x: Any, node: Any) -> float:
    """A number, or the one element of a tensor (PyTorch's float(t), t.item())."""
    if isinstance(x, Pending) and is_number(x.raw):
        x.read_as_number = True
        return float(x.raw)
    if is_number(x) or isinstance(x, bool):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            raise it.error("float_of_text", node, "invalid") from None
    if isinstance(x, Grad | Ints | Value | Pending):
        data = x.data if isinstance(x, Ints) else it.tensor(x, node).data
        if data.size != 1:
            raise it.error("item_one_element", node, "shape", shape=shape_text(data.shape),
                           n=data.size)  # fmt: skip
        return float(data.reshape(()))
    raise it.error("needs_number", node, "invalid", v=describe(x))


@builtin("float", "x?")
def to_float(it: Interpreter, node: Any, x: Any) -> float:
    return 0.0 if x is None else one_number(it, x, node)


@builtin("int", "x?")
def to_int(it: Interpreter, node: Any, x: Any) -> int:
    if x is None:
        return 0
    v = one_number(it, x, node)
    if abs(v) > 2**62:
        raise it.error("whole_too_large", node, "too_large")
    return int(v)


@builtin("round", "x", "n?")
def rounded(it: Interpreter, node: Any, x: Any, n: Any) -> Any:
    v = one_number(it, x, node)
    return round(v) if n is None else round(v, it.whole(n, node))


@builtin("abs", "x")
def absolute(it: Interpreter, node: Any, x: Any) -> Any:
    if is_number(x) and not isinstance(x, bool):
        return abs(x)
    return it.op(ops.Abs(), (x,), node)


@builtin("sum", "x", "start?", axis=None, keepdims=False, keyword_only=("axis", "keepdims"))
def summed(it: Interpreter, node: Any, x: Any, start: Any, axis: Any, keepdims: Any) -> Any:
    """Python's sum of a list (`start + a + b + …`, a chain of additions, no leading 0
    without a start), or the language's sum of a tensor."""
    if not isinstance(x, list | tuple | range):
        if start is not None:
            axis = start
        return FUNCTIONS["sum"].run(it, [x], {"axis": axis, "keepdims": keepdims}, node)
    from engine.language.expressions import binary

    values = ([start] if start is not None else []) + items_of(it, x, node)
    if not values:
        return 0
    total = values[0]
    import ast

    for v in values[1:]:
        it.count("statements", node)
        total = binary(it, ast.Add(), total, v, node)
    return total


def extreme(name: str, np_name: str) -> None:
    op = ops.Maximum if name == "max" else ops.Minimum

    @builtin(name, "a", "b?", axis=None)
    def run(it: Interpreter, node: Any, a: Any, b: Any, axis: Any) -> Any:
        """max(a, b) elementwise (a tie splits the gradient); max of a list of numbers as
        Python's."""
        if b is not None:
            if is_number(a) and is_number(b):
                return max(a, b) if name == "max" else min(a, b)
            return it.op(op(), (a, b), node)
        if isinstance(a, list | tuple | range):
            items = items_of(it, a, node)
            if not items:
                raise it.error("extreme_empty", node, "arguments", name=name)
            result = items[0]
            for v in items[1:]:
                result = run(it, node, result, v, None)
            return result
        raise it.error("extreme_of_one", node, "arguments", name=name)


extreme("max", "amax")
extreme("min", "amin")


@builtin("seed", "n")
def seed(it: Interpreter, node: Any, n: Any) -> None:
    where = node.args[0] if getattr(node, "args", None) else node
    value = it.whole(n, where)
    if value < 0:
        raise it.error("seed_negative", where, "static")
    it.rng = np.random.default_rng(value)


BUILTINS["print"] = None  # filled below: print takes any keywords' values as they are
__all__ = ["BUILTINS", "print_call"]
