"""What a program loops over, unpacks or joins, item by item: a list, a tuple, a range (never
made whole), a tensor's rows (each an index node of the graph), whole numbers' rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.autograd import ops
from engine.autograd.value import Value
from engine.language.values import Grad, Ints, Pending, describe, length

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


def items_of(it: Interpreter, v: Any, node: Any) -> list[Any]:
    """The items of what a program unpacks or joins: a list, a tuple, a range, a tensor's
    rows."""
    if isinstance(v, list | tuple):
        return list(v)
    if isinstance(v, range):
        it.check_items(length(v), node)
        return list(v)
    if isinstance(v, Pending) and isinstance(v.raw, list | tuple):
        v.read_as_number = True
        return list(v.raw)
    return list(iterate(it, v, node))


def iterate(it: Interpreter, v: Any, node: Any) -> Any:
    """What a loop runs over, turn by turn (a range is never made whole)."""
    if isinstance(v, list | tuple | range):
        return v
    if (
        isinstance(v, Pending)
        and isinstance(v.raw, list | tuple)
        and v.node.seq not in it.registered
    ):
        v.read_as_number = True  # a list written out and looped over: Python's numbers
        return v.raw
    if isinstance(v, Ints):
        it.check_items(v.data.shape[0] if v.data.ndim else 0, node)
        return [Ints(r) if r.ndim else int(r) for r in v.data]
    if isinstance(v, Value | Pending | Grad):
        t = it.tensor(v, node)
        if t.data.ndim == 0:
            raise it.error("loop_over_scalar", node, "shape")
        return (it.op(ops.Index((i,)), (t,), node) for i in range(t.data.shape[0]))
    raise it.error("not_iterable", node, "shape", v=describe(v))
