"""The one list of ops, `OPS` (name → class), and the tables derived from it that the language,
the code lesson and the drawing read.

Each op class says how it is written (see engine.autograd.ops.base.Op):

    name      "pow"       the trace's and the drawing's name for it; OPS's key
    symbol    "**"        what the drawing writes in its op node
    arity     2           how many values it takes (1 or 2; labels, axes, shapes are params;
                          0 for any number, written as one list: cat([a, b]))
    operator  "**"        its Python operator: "+", "-", "*", "/", "**", "@" between two
                          values; "-" before one; "[]" (`x[key]`) and ".T" (`x.T`) after one
    function  "max"       the language's function for it (`max(a, b)`, `exp(x)`); None if none
    keywords  ("axis",)   the keywords that function takes
    method    True        `x.exp()`, `x.sum(axis=0)`: the function is a Value method as well
    api       "power"     its lower-case function in engine.autograd.ops, when not `name`

and what every lesson reads of it (its JVP, what it saves, its grad_fn, its PyTorch and JAX
functions, its kinks: see Op's docstring). GRADIENT_OPS lists the ops only gradients make,
which have the same facts.

Tables: FUNCTIONS (language function → class), UNARY_FUNCTIONS (the elementwise functions of
one value: exp, log, …), BINARY_FUNCTIONS (max, min, matmul, mse), BINARY_OPERATORS ("+" →
Add, …) and METHODS (Value method → class). engine.autograd.ops.operators gives Value its
operators and methods from the same list.
"""

from __future__ import annotations

from engine.autograd.ops.base import Op
from engine.autograd.ops.binary import Add, Div, Maximum, Minimum, Mul, Pow, Sub
from engine.autograd.ops.clamp import Clamp
from engine.autograd.ops.gather import Gather, ScatterAdd
from engine.autograd.ops.gradients import BroadcastTo, Scatter, Where
from engine.autograd.ops.join import Cat, Stack
from engine.autograd.ops.linalg import MatMul
from engine.autograd.ops.nn import CrossEntropy, LogSoftmax, Mse, Softmax
from engine.autograd.ops.reduce import Mean, Sum
from engine.autograd.ops.shape import Index, Reshape, Transpose
from engine.autograd.ops.unary import (
    Abs,
    Cos,
    Exp,
    Log,
    Neg,
    Relu,
    Sigmoid,
    Sin,
    Softplus,
    Sqrt,
    Tanh,
)

OPS: dict[str, type[Op]] = {
    cls.name: cls
    for cls in (
        Add, Sub, Mul, Div, Pow, Maximum, Minimum, Neg, Exp, Log, Sqrt, Sin, Cos, Tanh,
        Sigmoid, Softplus, Relu, Abs, MatMul, Sum, Mean, Reshape, Transpose, Index, Softmax,
        LogSoftmax, CrossEntropy, Mse, Cat, Stack, Clamp, Gather,
    )
}  # fmt: skip

# The ops only gradients make (grad()'s graphs): no spelling in the language, the same facts.
GRADIENT_OPS: dict[str, type[Op]] = {
    cls.name: cls for cls in (BroadcastTo, Scatter, Where, ScatterAdd)
}

FUNCTIONS: dict[str, type[Op]] = {cls.function: cls for cls in OPS.values() if cls.function}
UNARY_FUNCTIONS = {f: cls for f, cls in FUNCTIONS.items() if cls.elementwise and cls.arity == 1}
BINARY_FUNCTIONS = {f: cls for f, cls in FUNCTIONS.items() if cls.arity == 2}
BINARY_OPERATORS: dict[str, type[Op]] = {
    cls.operator: cls for cls in OPS.values() if cls.operator and cls.arity == 2
}
METHODS: dict[str, type[Op]] = {f: cls for f, cls in FUNCTIONS.items() if cls.method}
