"""`x[key]`: a list's or tuple's item or slice as Python reads it; a tensor's part with whole
numbers and slices (a view, ops.Index); with lists of whole numbers, a range or a tensor of
whole numbers, NumPy's integer-array indexing (a gather, ops.Gather), whose gradient adds
back at each index. Every index list's length is checked before it is made."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.value import Value
from engine.errors import Msg
from engine.language.values import Array, Grad, Ints, Pending, Size, describe, is_number, length

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

KeyPart = int | slice | tuple[int, ...]


def index(it: Interpreter, value: Any, key_node: ast.expr, node: ast.AST) -> Any:
    from engine.language.values import numbers_list

    parts = key_node.elts if isinstance(key_node, ast.Tuple) else [key_node]
    if not it.torch and ((is_number(value) and not isinstance(value, bool)) or numbers_list(value)):
        value = it.tensor(value, node)  # numbers, without torch: a value
    if isinstance(value, list | tuple | str | range):
        if len(parts) != 1:
            raise it.error("index_sequence", node, "index", v=describe(value))
        key = part(it, parts[0], node, sequence=True)
        try:
            got = value[key]  # type: ignore[index]
            return Size(got) if isinstance(value, Size) and isinstance(got, tuple) else got
        except IndexError:
            raise it.error("index_out_of_range", node, "index", v=describe(value)) from None
    keys = tuple(part(it, p, node) for p in parts)
    if isinstance(value, Ints | Array):
        try:
            got = np.asarray(value.data[_numpy(keys)])
        except IndexError as e:
            raise it.error("index_error", node, "index", why=str(e)[:100]) from None
        if isinstance(value, Array):  # NumPy's: an element is a number, a part an array
            return float(got) if got.ndim == 0 else Array(got)
        return Ints(got)
    if isinstance(value, Grad):
        if value.owner.grad is None:
            raise it.error("grad_is_none", node, "invalid")
        value = it.tensor(value, node)
    if isinstance(value, Pending | Value):
        x = it.tensor(value, node)
        if any(isinstance(k, tuple) for k in keys):
            return it.op(ops.Gather(keys), (x,), node)
        return it.op(ops.Index(keys), (x,), node)  # type: ignore[arg-type]
    raise it.error("not_indexable", node, "invalid", v=describe(value))


def part(it: Interpreter, p: ast.expr, node: ast.AST, sequence: bool = False) -> KeyPart:
    """One part of a key: a whole number, a slice, or (for a tensor) a list of them."""
    if isinstance(p, ast.Slice):
        bounds = [
            None if b is None else it.whole(it.eval(b), b) for b in (p.lower, p.upper, p.step)
        ]
        if bounds[2] == 0:
            raise it.error("slice_step_zero", node, "index")
        return slice(*bounds)
    v = it.eval(p)
    if isinstance(v, Pending) and isinstance(v.raw, int) and not isinstance(v.raw, bool):
        return it.whole(v, p)
    if v is None or v is Ellipsis:
        raise it.error("index_none", p, "unsupported")
    if is_number(v) or isinstance(v, bool) or sequence:
        return it.whole(v, p)
    return index_list(it, v, p)


def index_list(it: Interpreter, v: Any, p: ast.AST) -> KeyPart:
    """A tensor's index list: ints written in a list, a range, a tensor of whole numbers."""
    if isinstance(v, Pending) and v.raw is not None and not isinstance(v.raw, float):
        if v.node.seq in it.registered:  # a leaf already: it cannot also hold indices
            raise it.error("labels_as_value", p, "labels")
        v.read_as_number = v.labels = True
        v = v.raw
    if isinstance(v, range):
        _check_length(it, length(v), p)
        return tuple(v)
    if isinstance(v, Ints):
        data = v.data
    elif isinstance(v, list | tuple):
        _check_length(it, len(v), p)
        data = np.asarray([it.whole(x, p) for x in v], dtype=np.int64)
    elif isinstance(v, Value):
        data = v.data
        if v.requires_grad or data.ndim > 1 or not np.all(np.mod(data, 1) == 0):
            raise it.error("index_not_whole", p, "index", name=it.src.segment(it.where(p)))
    else:
        raise it.error("index_kind", p, "index", v=describe(v))
    if data.ndim == 0:
        return int(data)
    if data.ndim > 1 or data.dtype == np.bool_:
        raise it.error("index_mask", p, "unsupported")
    if data.size == 0:
        raise it.error("index_empty", p, "index")
    _check_length(it, data.size, p)
    return tuple(int(x) for x in data)


def _check_length(it: Interpreter, n: int, p: ast.AST) -> None:
    if n > it.limits.max_tensor_elements:
        raise it.error(
            "limit_max_tensor_elements", p, "too_large", limit="max_tensor_elements",
            what=Msg("what_index_list", {}), n=n, max=it.limits.max_tensor_elements,
        )  # fmt: skip


def _numpy(key: tuple[KeyPart, ...]) -> tuple[Any, ...]:
    return tuple(np.asarray(k, dtype=np.intp) if isinstance(k, tuple) else k for k in key)
