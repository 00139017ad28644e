"""Running one op forward: `apply(op, *inputs)` makes its output node, through the scalar fast
path when an elementwise op meets scalars; `quiet()` switches NumPy's warnings off around a
whole pass."""

from __future__ import annotations

import contextvars
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.autograd.ops.base import Array, Op, is_finite
from engine.autograd.ops.shapes import OpError
from engine.autograd.value import Value, as_array, lift, op_result
from engine.errors import Msg

# NumPy warns on overflow and 0/0; every op reports a non-finite result itself (by name), so the
# warnings are switched off. `np.errstate` costs more than a scalar op, so `quiet()` switches
# them off once around a whole build or backward pass; `apply` outside it pays per op.
#
# Whether a quiet() is open is a context variable, as NumPy's own error state is: each thread
# (and each asyncio task) has its own, and reading it costs less than a scalar multiply.

_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("gradtrace_quiet", default=False)
_is_quiet = _QUIET.get


class quiet:  # noqa: N801 - used as a function: `with quiet():`
    """NumPy's floating-point warnings off for a whole build or backward pass (re-entrant:
    inside another, it only tests a flag)."""

    __slots__ = ("errstate", "token")

    def __enter__(self) -> None:
        if _QUIET.get():
            self.errstate = None
            return
        self.errstate = np.errstate(all="ignore")
        self.errstate.__enter__()
        self.token = _QUIET.set(True)

    def __exit__(self, *exc: Any) -> None:
        if self.errstate is not None:
            _QUIET.reset(self.token)
            self.errstate.__exit__(*exc)


_F64 = np.float64
_isfinite = math.isfinite


def apply(op: Op, *inputs: Any) -> Value:
    """Run `op` forward on `inputs` (Values, or numbers and arrays taken as constants)."""
    if op.elementwise:
        if len(inputs) == 2:
            return apply2(op, inputs[0], inputs[1])
        if len(inputs) == 1:
            return apply1(op, inputs[0])
    return _apply_arrays(op, tuple(lift(x) for x in inputs))


# The scalar fast path: the forward pass's innermost loop. An elementwise op on scalar Values
# has no shape to check; its kernel computes on NumPy float64 scalars (a tenth of the cost of
# 0-d arrays) and its node is made by `op_result`, told whether it needs a grad. A scalar
# leaf or constant holds a 0-d array: `[()]` reads it as a float64 scalar.


def apply2(op: Op, a: Any, b: Any) -> Value:
    """`apply` for an elementwise op with two inputs."""
    if type(a) is not Value:
        a = lift(a)
    if type(b) is not Value:
        b = lift(b)
    x = a.data
    if type(x) is not _F64:
        x = x[()] if not x.shape else None
    y = b.data
    if type(y) is not _F64:
        y = y[()] if not y.shape else None
    if x is None or y is None:
        return _apply_arrays(op, (a, b))
    if _is_quiet():
        out = op.scalar(x, y)  # type: ignore[attr-defined]
    else:
        with np.errstate(all="ignore"):
            out = op.scalar(x, y)  # type: ignore[attr-defined]
    if type(out) is not _F64:
        out = as_array(out)[()]
    if not _isfinite(out):
        raise non_finite(op, out)
    return op_result(out, op, (a, b), a.requires_grad or b.requires_grad)


def apply1(op: Op, a: Any) -> Value:
    """`apply` for an elementwise op with one input."""
    if type(a) is not Value:
        a = lift(a)
    x = a.data
    if type(x) is not _F64:
        if x.shape:
            return _apply_arrays(op, (a,))
        x = x[()]
    if _is_quiet():
        out = op.scalar(x)  # type: ignore[attr-defined]
    else:
        with np.errstate(all="ignore"):
            out = op.scalar(x)  # type: ignore[attr-defined]
    if type(out) is not _F64:
        out = as_array(out)[()]
    if not _isfinite(out):
        raise non_finite(op, out)
    return op_result(out, op, (a,), a.requires_grad)


def _apply_arrays(op: Op, nodes: tuple[Value, ...]) -> Value:
    """The general path: check the shapes, compute on arrays, check the result."""
    arrays = [x.data for x in nodes]
    op.out_shape(*(a.shape for a in arrays))
    if _is_quiet():
        out = op.compute(*arrays)
    else:
        with np.errstate(all="ignore"):
            out = op.compute(*arrays)
    if not is_finite(out):
        raise non_finite(op, out)
    return op_result(out if type(out) is np.ndarray else as_array(out), op, nodes)


def non_finite(op: Op, out: Array) -> OpError:
    """'log gives NaN (not a number) — log needs positive numbers…', with the op's domain hint
    when it has one: the language puts the program's text in place of the op's name."""
    key = "gives_nan" if np.isnan(out).any() else "gives_infinite"
    if op.domain_hint:
        return OpError(key + "_hint", "non_finite", text=op.name, hint=Msg(op.domain_hint, {}))
    return OpError(key, "non_finite", text=op.name)


def op_function(cls: type[Op]) -> Callable[..., Value]:
    """The lower-case function of an op without parameters (`mul(a, b)`, `exp(x)`), named as
    the op's `api` says. One instance of the op serves every node (it holds no state); an
    elementwise op goes straight to its fast path (a call saved per node)."""
    op = cls()
    function: Callable[..., Value]
    if op.elementwise and cls.arity == 2:

        def function(a: Any, b: Any) -> Value:
            return apply2(op, a, b)

    elif op.elementwise:

        def function(x: Any) -> Value:
            return apply1(op, x)

    else:

        def function(*inputs: Any) -> Value:
            return apply(op, *inputs)

    function.__name__ = function.__qualname__ = cls.api or cls.name
    function.__doc__ = cls.__doc__
    return function
