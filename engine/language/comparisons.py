"""Comparisons, chained as Python chains them (`0 < x < 1`); of tensors, elementwise (True/False
tensors, their shapes named when they do not broadcast); `is`, `in` as Python's; a grad that
is None compares as PyTorch's None does.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.ops import shape_text
from engine.autograd.value import Value
from engine.errors import Msg
from engine.language.values import Array, Grad, Ints, Pending, describe, is_number

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

TENSORS = (Value, Pending, Grad, Ints, Array)
COMPARE: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Lt: ("<", operator.lt),
    ast.Gt: (">", operator.gt),
    ast.LtE: ("<=", operator.le),
    ast.GtE: (">=", operator.ge),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}


def compare(it: Interpreter, node: ast.Compare, left: Any = Ellipsis) -> Any:
    """Comparisons chained as Python chains them (`a < b < c` is `a < b and b < c`, b read
    once, so a tensor of more than one element in the middle is PyTorch's ambiguous truth);
    of tensors, elementwise (True/False tensors), their shapes named when they do not
    broadcast. `left`: the left operand's value, when the caller has it already."""
    left = it.eval(node.left) if left is Ellipsis else left
    last = len(node.ops) - 1
    for k, (op, right_node) in enumerate(zip(node.ops, node.comparators, strict=True)):
        right = it.eval(right_node)
        one = compare_one(it, op, left, right, node)
        if k == last or not truth(it, one, node):
            return one
        left = right
    return None  # not reached: a comparison has at least one operator


def truth(it: Interpreter, v: Any, node: Any) -> bool:
    """A condition decided on the values computed so far, as Python and PyTorch decide it."""
    if isinstance(v, Pending):
        v = v.raw if v.raw is not None else v.node
    if isinstance(v, Grad):
        v = v.owner.grad
        if v is None:
            return False
    if isinstance(v, Value | Ints | Array | np.ndarray):
        data = v.data if isinstance(v, Value | Ints | Array) else v
        if np.size(data) != 1:
            raise it.error("ambiguous_truth", node, "shape", shape=shape_text(np.shape(data)))
        return bool(np.asarray(data).reshape(()))
    if isinstance(v, bool | int | float | str | list | tuple | np.generic) or v is None:
        return bool(v)
    raise it.error("condition_needs_number", node, "invalid", v=describe(v))


def as_read(it: Interpreter, v: Any) -> Any:
    """A name bound to a number and not yet a value of the graph (`epoch = 3` without torch),
    compared: Python's number, so it is not a parameter for being read in a condition."""
    if isinstance(v, Pending) and is_number(v.raw) and v.node.seq not in it.registered:
        v.read_as_number = True
        return v.raw
    return v


def as_none(it: Interpreter, v: Any) -> Any:
    """`x.grad is None`: a grad PyTorch has not made (or does not keep) is None."""
    if isinstance(v, Grad) and it.torch:
        owner = v.owner
        if owner.grad is None or (owner.kind != "leaf" and not it.passes.retains(owner)):
            return None
    return v


def compare_one(it: Interpreter, op: ast.cmpop, a: Any, b: Any, node: Any) -> Any:
    if isinstance(op, ast.Is | ast.IsNot):
        a, b = as_none(it, a), as_none(it, b)
        same = (a is None and b is None) or (a is b and a is not None)
        return same if isinstance(op, ast.Is) else not same
    a, b = as_read(it, a), as_read(it, b)
    if isinstance(op, ast.In | ast.NotIn):
        if isinstance(b, range | str) and isinstance(a, int | str) and not isinstance(a, bool):
            found = type(a) is (str if isinstance(b, str) else int) and a in b  # O(1)
        elif isinstance(b, list | tuple):
            found = any(_equal(a, x) for x in b)
        else:
            raise it.error("membership", node, "invalid", v=describe(b))
        return found if isinstance(op, ast.In) else not found
    symbol, python = COMPARE[type(op)]
    a, b = (none_grad(it, v) for v in (a, b))
    if a is None or b is None:
        return python(a, b) if symbol in ("==", "!=") else False  # PyTorch's None == t
    if isinstance(a, TENSORS) or isinstance(b, TENSORS):
        x, y = tensor_data(it, a, node), tensor_data(it, b, node)
        try:
            shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        except ValueError:
            raise it.error(
                "compare_shapes",
                node,
                "shape",
                a=shape_text(np.shape(x)),
                b=shape_text(np.shape(y)),
            ) from None
        it.check_shape(shape, node)
        return Ints(np.asarray(python(x, y), dtype=np.bool_))
    try:
        return bool(python(a, b))
    except TypeError:
        raise it.error("cannot_compare", node, "invalid", a=describe(a), b=describe(b)) from None


def none_grad(it: Interpreter, v: Any) -> Any:
    """A grad not yet made: None in PyTorch (compared as None), zeros without torch."""
    if isinstance(v, Grad) and v.owner.grad is None:
        return None if it.torch else Ints(np.zeros(v.owner.data.shape))
    return v


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) if not isinstance(a, TENSORS) else a is b
    except (TypeError, ValueError):
        return False


def tensor_data(it: Interpreter, v: Any, node: Any) -> np.ndarray:
    """The numbers a comparison reads of a value: a grad that is None compares as nothing."""
    if isinstance(v, Grad):
        if v.owner.grad is None:
            raise it.error("grad_is_none", node, "invalid")
        return np.asarray(v.owner.grad, dtype=np.float64)
    if isinstance(v, Pending):
        return np.asarray(v.node.data)
    if isinstance(v, Value | Ints):
        return np.asarray(v.data)
    if is_number(v) or isinstance(v, bool):
        return np.asarray(float(v))
    if isinstance(v, list | tuple):
        return it.array_of(v, node)
    raise it.error("cannot_compare", node, "invalid", a=describe(v), b=Msg("describe_tensor", {}))
