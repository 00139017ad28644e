"""The node of the graph: a value, its gradient, and the op and inputs that made it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from engine.autograd.ops.base import Op

# Creation order, the only thing that orders nodes made through the Python API. Never id().
_creation = itertools.count()


@dataclass(frozen=True, slots=True)
class Span:
    """Where in the source a node was written: 1-based lines and columns, in code points."""

    line: int
    column: int
    end_line: int
    end_column: int

    def to_dict(self) -> dict[str, int]:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
        }


def as_array(data: Any) -> np.ndarray:
    """Every value means a float64 array; a number is a 0-d array."""
    return np.asarray(data, dtype=np.float64)


class Value:
    """A float64 array with the op and inputs that produced it, and its gradient.

    Operators (`+ - * / ** @`, unary `-`, indexing, `.T`) and methods (`exp`, `sum`, …) are
    attached by engine.autograd.ops.operators, `backward` by engine.autograd.backward.

    `kind` is "leaf" (a parameter, gets a gradient), "const" (a number in the program, or what
    `const()` cut off: no gradient) or "op" (the result of an op).
    """

    __slots__ = (
        "data",
        "grad",
        "op",
        "inputs",
        "name",
        "label",
        "kind",
        "requires_grad",
        "seq",
        "span",
        "text",
    )

    def __init__(
        self,
        data: Any,
        op: Op | None = None,
        inputs: tuple[Value, ...] = (),
        *,
        name: str | None = None,
        kind: str | None = None,
    ) -> None:
        # A 0-d result of an op may be a NumPy float64 scalar (the ops' scalar fast path): it
        # has the same shape/ndim/dtype/item() as a 0-d array and is many times faster.
        # Typed as the array it stands in for, hence the ignore.
        self.data: np.ndarray = (
            data if type(data) is np.ndarray or type(data) is np.float64 else as_array(data)  # type: ignore[assignment]
        )
        self.grad: np.ndarray | None = None
        self.op = op
        self.inputs = inputs
        self.name = name
        self.label: str | None = name
        if kind is None:
            kind = "leaf" if op is None else "op"
        self.kind = kind
        # Like PyTorch: an op needs a gradient only when one of its inputs does.
        requires_grad = kind == "leaf"
        if kind == "op":
            for x in inputs:
                if x.requires_grad:
                    requires_grad = True
                    break
        self.requires_grad: bool = requires_grad
        self.seq = next(_creation)
        self.span: Span | None = None
        self.text: str | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    def __repr__(self) -> str:
        what = self.label or (self.op.name if self.op else self.kind)
        return f"Value({what}, shape={self.data.shape})"

    if TYPE_CHECKING:
        # What engine.autograd.ops.operators attaches at import (from the op registry), and
        # engine.autograd.backward `backward`: declared for the type checker only, so that this
        # module imports neither (tests/test_op_paths.py holds the lists equal).
        def backward(
            self, recorder: Any = None, accumulate: str = "add", order: str = "dfs"
        ) -> None: ...
        def __add__(self, other: Any) -> Value: ...
        def __radd__(self, other: Any) -> Value: ...
        def __sub__(self, other: Any) -> Value: ...
        def __rsub__(self, other: Any) -> Value: ...
        def __mul__(self, other: Any) -> Value: ...
        def __rmul__(self, other: Any) -> Value: ...
        def __truediv__(self, other: Any) -> Value: ...
        def __rtruediv__(self, other: Any) -> Value: ...
        def __pow__(self, other: Any) -> Value: ...
        def __rpow__(self, other: Any) -> Value: ...
        def __matmul__(self, other: Any) -> Value: ...
        def __rmatmul__(self, other: Any) -> Value: ...
        def __neg__(self) -> Value: ...
        def __getitem__(self, key: Any) -> Value: ...
        @property
        def T(self) -> Value: ...  # NumPy's name for the transpose
        def exp(self) -> Value: ...
        def log(self) -> Value: ...
        def sqrt(self) -> Value: ...
        def sin(self) -> Value: ...
        def cos(self) -> Value: ...
        def tanh(self) -> Value: ...
        def sigmoid(self) -> Value: ...
        def relu(self) -> Value: ...
        def abs(self) -> Value: ...
        def sum(self, axis: Any = None, keepdims: bool = False) -> Value: ...
        def mean(self, axis: Any = None, keepdims: bool = False) -> Value: ...
        def softmax(self, axis: int = -1) -> Value: ...
        def log_softmax(self, axis: int = -1) -> Value: ...
        def transpose(self, axes: Sequence[int] | None = None) -> Value: ...
        def reshape(self, shape: Sequence[int]) -> Value: ...
        def detach(self) -> Value: ...

        __array_ufunc__: None


_new = object.__new__


def op_result(
    data: np.ndarray, op: Op, inputs: tuple[Value, ...], requires_grad: bool | None = None
) -> Value:
    """An op's output node, as `Value(data, op, inputs)` makes it, without its argument
    handling: `data` is already float64 (an array or a float64 scalar). The forward pass's hot
    path (engine.autograd.ops.apply); `requires_grad` when the caller knows it already."""
    node: Value = _new(Value)
    node.data = data
    node.grad = None
    node.op = op
    node.inputs = inputs
    node.name = None
    node.label = None
    node.kind = "op"
    if requires_grad is None:
        requires_grad = False
        for x in inputs:
            if x.requires_grad:
                requires_grad = True
                break
    node.requires_grad = requires_grad
    node.seq = next(_creation)
    node.span = None
    node.text = None
    return node


def leaf(data: Any, name: str | None = None) -> Value:
    """A parameter: a value that gets a gradient."""
    return Value(data, name=name, kind="leaf")


def constant(data: Any, name: str | None = None) -> Value:
    """A constant: shown in the graph, never given a gradient."""
    return Value(data, name=name, kind="const")


def lift(x: Any) -> Value:
    """A Value as it is; a number or array as a constant node."""
    return x if isinstance(x, Value) else constant(x)


def creation_mark() -> int:
    """A number above the seq of every value made until now, below every one made later."""
    return next(_creation)
