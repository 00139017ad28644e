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
from engine.language.values import Grad, Ints, Pending, describe, is_number

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

TENSORS = (Value, Pending, Grad, Ints)
COMPARE: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Lt: ("<", operator.lt),
    ast.Gt: (">", operator.gt),
    ast.LtE: ("<=", operator.le),
    ast.GtE: (">=", operator.ge),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}


def compare(it: Interpreter, node: ast.Compare) -> Any:
    """Comparisons chained as Python chains them; of tensors, elementwise (True/False
    tensors), their shapes named when they do not broadcast."""
    left = it.eval(node.left)
    result: Any = True
    for op, right_node in zip(node.ops, node.comparators, strict=True):
        right = it.eval(right_node)
        one = compare_one(it, op, left, right, node)
        if isinstance(one, Ints):
            result = one if result is True else Ints(np.logical_and(as_bools(result), one.data))
        elif not one:
            return False
        left = right
    return result


def as_bools(v: Any) -> Any:
    return v.data if isinstance(v, Ints) else v


def compare_one(it: Interpreter, op: ast.cmpop, a: Any, b: Any, node: Any) -> Any:
    if isinstance(op, ast.Is | ast.IsNot):
        same = (a is None and b is None) or (a is b and a is not None)
        return same if isinstance(op, ast.Is) else not same
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
