"""The words of the language: the functions and methods a program may call, and its operators.

Those that make an op are read from the op registry (engine.autograd.ops.registry: each op
says its function, arity, keywords, operator and whether it is a method); what only the
language has (the constructors, `const`, `detach`, `grad`, `seed`) is listed here, once, with
the other spellings of the same functions (`np.dot`, `x.view`, `dim=`); the modules that may
be imported, and their functions, are in modules.py.
"""

from __future__ import annotations

import ast

from engine.autograd.ops import BINARY_FUNCTIONS, BINARY_OPERATORS, OPS, UNARY_FUNCTIONS
from engine.autograd.ops import FUNCTIONS as OP_FUNCTIONS
from engine.autograd.ops import METHODS as OP_METHODS

UNARY = set(UNARY_FUNCTIONS)  # elementwise, one value: exp(x)
BINARY = set(BINARY_FUNCTIONS)  # two values: max(a, b), matmul(a, b)
# function -> keywords it takes
KEYWORDS: dict[str, tuple[str, ...]] = {f: op.keywords for f, op in OP_FUNCTIONS.items()}
KEYWORDS["norm"] = KEYWORDS["sum"]  # sqrt(sum(x ** 2, axis, keepdims)): calls.py builds it

# What only the language has: values made from a shape (`zeros(2, 3)`), and the rest.
CONSTRUCTORS = {"randn", "rand", "zeros", "ones", "full", "arange"}
LANGUAGE_ONLY = {"const", "detach", "seed", "grad"}
FUNCTIONS = set(OP_FUNCTIONS) | CONSTRUCTORS | LANGUAGE_ONLY
# Other names for the language's own functions, as NumPy and PyTorch spell them. They are
# functions only where called: a program may still name a value `dot` (CS231n does).
ALIASES = {
    "dot": "matmul", "maximum": "max", "minimum": "min", "concatenate": "cat",
    "concat": "cat", "clip": "clamp", "pow": "pow", "linspace": "linspace", "norm": "norm",
    "square": "square",
}  # fmt: skip
# Methods as NumPy and PyTorch spell them, and the function each is (`x.view(2, 3)`).
METHOD_ALIASES = {
    "dot": "matmul", "matmul": "matmul", "mm": "matmul", "pow": "pow", "view": "reshape",
    "t": "transpose", "permute": "transpose", "clamp": "clamp", "clip": "clamp",
    "maximum": "max", "minimum": "min", "norm": "norm", "square": "square",
}  # fmt: skip
# Keywords as PyTorch and NumPy's clip spell them, and the language's own.
KEYWORD_ALIASES = {"dim": "axis", "keepdim": "keepdims", "a_min": "min", "a_max": "max"}
# Keywords accepted and ignored: every value is float64, and every grad() builds its graph.
IGNORED_KEYWORDS = {"dtype", "device", "create_graph", "retain_graph"}
METHODS = set(OP_METHODS) | {"detach"} | set(METHOD_ALIASES)  # x.tanh(), x.sum(1), x.detach()
# `x.T`: the attributes that stand for a function of x.
ATTRIBUTES = {
    op.operator[1:]: op.function
    for op in OPS.values()
    if op.operator and op.operator.startswith(".") and op.function
}

# Python's binary operators as written, for the ops they make and the error that refuses one.
SYMBOLS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
}
# ast operator -> the name of the op it makes (`a + b` makes "add")
BIN_OPS = {a: BINARY_OPERATORS[s].name for a, s in SYMBOLS.items() if s in BINARY_OPERATORS}
# The operators of whole-number expressions (shapes, indices, loop bounds: `x[i + 1]`).
STATIC_OPS = {a: s for a, s in SYMBOLS.items() if s in ("+", "-", "*", "//", "**")}
