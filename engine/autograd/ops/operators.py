"""What Value gets from the registry: its operators (`x*y`, `2 - x`, `-x`, `x[0]`, `x.T`) and
its methods (`x.exp()`, `x.sum(axis=0)`), attached at import; and `const`, which cuts the graph.

engine.autograd.value declares the same names for the type checker; tests/test_op_paths.py
holds the declarations, what is attached here and the registry equal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.autograd.ops.base import Op
from engine.autograd.ops.registry import OPS
from engine.autograd.value import Value, as_array, constant

# A Python operator between two values → the name of its special methods (`__add__`, `__radd__`).
DUNDERS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "**": "pow", "@": "matmul"}


def const(x: Any) -> Value:
    """Cut the graph: a constant with x's value (alias `detach`)."""
    return constant(np.array(x.data, dtype=np.float64) if isinstance(x, Value) else as_array(x))


detach = const


def function_of(cls: type[Op]) -> Callable[..., Value]:
    """The op's lower-case function, which its module defines beside it (`mul`, `power`)."""
    return getattr(sys.modules[cls.__module__], cls.api or cls.name)  # type: ignore[no-any-return]


def _reflected(function: Callable[..., Value]) -> Callable[[Any, Any], Value]:
    def reflected(self: Any, other: Any) -> Value:  # `2 * x` is x.__rmul__(2): mul(2, x)
        return function(other, self)

    return reflected


def value_attributes() -> dict[str, Any]:
    """Every attribute the registry gives Value, by name."""
    attributes: dict[str, Any] = {}
    for cls in OPS.values():
        function = function_of(cls)
        if cls.arity == 2 and cls.operator in DUNDERS:
            dunder = DUNDERS[cls.operator]
            attributes[f"__{dunder}__"] = function
            attributes[f"__r{dunder}__"] = _reflected(function)
        elif cls.operator == "-":
            attributes["__neg__"] = function
        elif cls.operator == "[]":
            attributes["__getitem__"] = function
        elif cls.operator == ".T":
            attributes["T"] = property(function)  # NumPy's name for the transpose
        if cls.method:
            assert cls.function is not None, f"{cls.name} is a method without a function name"
            attributes[cls.function] = function
    attributes["detach"] = const
    attributes["__array_ufunc__"] = None  # `array * x` defers to __rmul__
    return attributes


# What Value is given. engine.autograd.value declares these for the type checker, which refuses
# an assignment to a declared method: hence setattr.
ATTRIBUTES = value_attributes()
for _name, _attribute in ATTRIBUTES.items():
    setattr(Value, _name, _attribute)
