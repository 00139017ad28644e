"""The ops: one class per operation, with its maths in its docstring, a forward `compute` and
a local `gradient` (the contract is engine.autograd.ops.base's docstring), grouped by family:

    base        the Op contract, the Math namespaces (ArrayMath, ScalarMath), shapes, OpError
    forward     apply(op, *inputs): one op forward, its scalar fast path, quiet()
    binary      + − · / ** max min          unary    −x exp log sqrt sin cos tanh sigmoid relu abs
    linalg      @                           reduce   sum mean
    join        cat stack                   gather   x[[0, 2]], p[range(N), y]; clamp
    shape       reshape transpose x[key]    nn       softmax log_softmax cross_entropy mse
    registry    OPS, the one list of ops, and the language's tables derived from it;
                GRADIENT_OPS, the ops only gradients make (gradients.py, gather.py)
    operators   Value's operators and methods, from the registry; const/detach

Every name is importable from here: `from engine.autograd.ops import OPS, apply, mul`.
"""

from engine.autograd.ops.base import (
    ARRAY_MATH,
    SCALAR_MATH,
    Array,
    ArrayMath,
    Grads,
    Math,
    Needs,
    Op,
    ScalarMath,
    is_finite,
)
from engine.autograd.ops.binary import (
    Add,
    Binary,
    Div,
    Maximum,
    Minimum,
    Mul,
    Pow,
    Sub,
    add,
    div,
    maximum,
    minimum,
    mul,
    power,
    sub,
)
from engine.autograd.ops.clamp import Clamp, clamp
from engine.autograd.ops.forward import apply, apply1, apply2, non_finite, quiet
from engine.autograd.ops.gather import Gather, ScatterAdd, gather
from engine.autograd.ops.join import Cat, Stack, cat, stack
from engine.autograd.ops.linalg import MatMul, matmul
from engine.autograd.ops.nn import (
    CrossEntropy,
    LogSoftmax,
    Mse,
    Softmax,
    cross_entropy,
    log_softmax,
    mse,
    softmax,
)
from engine.autograd.ops.operators import const, detach
from engine.autograd.ops.reduce import Mean, Sum, mean, normalise_axes, sum
from engine.autograd.ops.registry import (
    BINARY_FUNCTIONS,
    BINARY_OPERATORS,
    FUNCTIONS,
    GRADIENT_OPS,
    METHODS,
    OPS,
    UNARY_FUNCTIONS,
)
from engine.autograd.ops.shape import (
    Index,
    Reshape,
    Transpose,
    constant_index,
    index,
    index_text,
    reshape,
    transpose,
)
from engine.autograd.ops.shapes import (
    MAX_RANK,
    OpError,
    broadcast_shape,
    footprint,
    shape_text,
)
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
    Unary,
    absolute,
    cos,
    exp,
    log,
    neg,
    relu,
    sigmoid,
    sin,
    softplus,
    sqrt,
    tanh,
)

__all__ = [
    "ARRAY_MATH", "BINARY_FUNCTIONS", "BINARY_OPERATORS", "FUNCTIONS", "GRADIENT_OPS", "MAX_RANK",
    "METHODS",
    "OPS", "SCALAR_MATH", "UNARY_FUNCTIONS",
    "Abs", "Add", "Array", "ArrayMath", "Binary", "Cat", "Clamp", "Cos", "CrossEntropy", "Div",
    "Exp", "Gather", "Grads", "Index", "Log", "LogSoftmax", "MatMul", "Math", "Maximum", "Mean",
    "Minimum", "Mse", "Mul", "Needs", "Neg", "Op", "OpError", "Pow", "Relu", "Reshape",
    "ScalarMath", "ScatterAdd", "Sigmoid", "Sin", "Softmax", "Softplus", "Sqrt", "Stack", "Sub",
    "Sum", "Tanh", "Transpose", "Unary",
    "absolute", "add", "apply", "apply1", "apply2", "broadcast_shape", "cat", "clamp", "const",
    "constant_index", "cos", "cross_entropy", "detach", "div", "exp", "footprint", "gather",
    "index", "index_text", "is_finite", "log", "log_softmax", "matmul", "maximum", "mean",
    "minimum", "mse", "mul", "neg", "non_finite", "normalise_axes", "power", "quiet",
    "relu", "reshape", "shape_text", "sigmoid", "sin", "softmax", "softplus", "sqrt", "stack",
    "sub", "sum", "tanh", "transpose",
]  # fmt: skip
