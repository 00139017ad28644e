"""The names a program may use: its own (scopes, then the program's), the free names (leaves
with the values given), the language's functions and Python's builtins, and the modules it may
import (`torch`, `numpy`, `math`, `jax` and their parts), each attribute of one a function of
the library, a submodule or a constant. What is not here is refused by name, with the list of
what works.

MODULES is the table of spellings: module path -> {attribute: the library's name for it}.
Its elementwise functions come from the op registry (every op with a function name is spelled
the same way under torch, numpy and jax.numpy), so a new op needs no row here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.ops import OPS, UNARY_FUNCTIONS
from engine.autograd.value import Value
from engine.language.values import (
    Array,
    Function,
    Grad,
    Ints,
    Module,
    Opaque,
    Pending,
    describe,
    is_number,
)
from engine.library import (
    constructors,  # noqa: F401  (the tensors a program makes register)
    draws,  # noqa: F401  (the seeded draws register)
    extremes,
    functional,
    functional_torch,
    jax_random,
    methods,
    spellings,
    tape,
    vmap,
)
from engine.library.builtins import BUILTINS, print_call
from engine.library.functions import FUNCTIONS
from engine.library.transforms import SPECIAL

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

BUILTINS["print"] = Function("print", print_call)
# What torch, NumPy and JAX all spell alike besides the ops (which spell_ops adds, below).
_ARRAY = ("zeros", "ones", "full", "square", "eye", "zeros_like", "ones_like", "transpose")
_NUMPY = {
    **{f: f for f in _ARRAY}, "dot": "matmul", "absolute": "abs", "power": "pow", "pow": "pow",
    "concatenate": "cat", "clip": "clamp", "array": "tensor", "asarray": "tensor",
    "arange": "arange", "linspace": "linspace", "max": "maximum", "min": "minimum",
}  # fmt: skip
_FUNCTIONAL = {
    "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "softmax": "softmax",
    "log_softmax": "log_softmax", "cross_entropy": "cross_entropy", "mse_loss": "mse",
}  # fmt: skip
_TORCH = {
    **{f: f for f in _ARRAY}, "softmax": "softmax", "log_softmax": "log_softmax",
    "mm": "matmul", "dot": "matmul", "pow": "pow", "max": "maximum", "min": "minimum",
    "cat": "cat", "concat": "cat", "concatenate": "cat", "clamp": "clamp", "clip": "clamp",
    "randn": "torch_randn", "rand": "torch_rand", "tensor": "tensor", "as_tensor": "tensor",
    "Tensor": "Tensor",
    "detach": "const", "t": "t", "permute": "transpose", "transpose": "swapaxes",
    "randn_like": "torch_randn_like", "rand_like": "torch_rand_like", "norm": "norm",
    "arange": "torch_arange",
    "linspace": "torch_linspace", "manual_seed": "manual_seed", "no_grad": "no_grad",
    "enable_grad": "enable_grad", "set_printoptions": "print_settings",
    "set_default_dtype": "default_dtype", "square": "square",
}  # fmt: skip
# --- issue 25 (seeded draws, wt-tf25): torch's generator and NumPy's legacy RandomState ---
_TORCH.update({
    "randint": "torch_randint", "normal": "torch_normal", "empty": "zeros",
    "Generator": "torch_generator_object",
})  # fmt: skip
_EXTREMES = {  # a max over an axis, argmax, where: engine/library/extremes.py
    "max": "np_max", "min": "np_min", "amax": "np_max", "amin": "np_min",
    "argmax": "np_argmax", "argmin": "np_argmin", "where": "where",
}  # fmt: skip
_NUMPY.update(_EXTREMES)
_TORCH.update({
    "max": "torch_max", "min": "torch_min", "argmax": "torch_argmax", "argmin": "torch_argmin",
    "amax": "np_max", "amin": "np_min", "where": "where",
})  # fmt: skip
_FUNCTIONAL.update({f: f for f in ("binary_cross_entropy", "binary_cross_entropy_with_logits")})
_NUMPY_RANDOM = {
    "seed": "np_seed", **{f: f"np_{f}" for f in ("randn", "rand", "random", "random_sample",
                                                 "standard_normal", "normal", "uniform",
                                                 "randint")},
}  # fmt: skip
# TensorFlow's spelling (engine/library/tape.py): the tape, Variables, its math under tf,
# tf.math and tf.nn
_TF_MATH = {
    **{f: f for f in ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "abs", "square",
                      "pow", "maximum", "minimum", "softplus", "add")},
    "subtract": "sub", "multiply": "mul", "divide": "div",
    "reduce_sum": "sum", "reduce_mean": "mean", "reduce_max": "np_max", "reduce_min": "np_min",
    "argmax": "np_argmax", "argmin": "np_argmin",
}  # fmt: skip
_TENSORFLOW = {
    **_TF_MATH, "Variable": "tf_variable", "constant": "tf_constant",
    "convert_to_tensor": "tf_constant", "GradientTape": "gradient_tape", "matmul": "matmul",
    "reshape": "reshape", "transpose": "transpose", "ones": "ones", "zeros": "zeros",
    "ones_like": "ones_like", "zeros_like": "zeros_like", "stack": "stack", "concat": "cat",
    "where": "where", "stop_gradient": "const", "eye": "eye", "linspace": "linspace",
}  # fmt: skip
_TF_NN = {f: f for f in ("relu", "sigmoid", "softmax", "log_softmax", "tanh", "softplus")}
# leaves only where asked: requires_grad, tf.Variable, micrograd's Value
EXPLICIT = frozenset({"torch", "tensorflow", "micrograd", "tinygrad"})
# --- end issue 25 (wt-tf25) ---
MODULES: dict[str, dict[str, Any]] = {
    "torch": _TORCH,
    "torch.nn": {},
    "torch.nn.functional": _FUNCTIONAL,
    "torch.autograd": {"grad": "autograd_grad"},
    "torch.linalg": {"norm": "norm"},
    "torch.optim": {"SGD": "SGD", "Adam": "Adam"},
    "torch.func": {"grad": "jax_grad"},
    "numpy": {
        **_NUMPY,
        "set_printoptions": "print_settings",
        "round": "round_to",
        "around": "round_to",
    },
    "numpy.random": {"default_rng": "default_rng", **_NUMPY_RANDOM},
    "numpy.linalg": {"norm": "norm"},
    "math": {
        **{f: f for f in ("exp", "log", "sqrt", "sin", "cos", "tanh")},
        "fabs": "abs",
        "pow": "pow",
    },  # fmt: skip
    "jax": {"grad": "jax_grad"},
    "jax.numpy": _NUMPY,
    "jax.numpy.linalg": {"norm": "norm"},
    "jax.nn": {f: f for f in ("relu", "sigmoid", "softmax", "log_softmax")},
    "jax.lax": {"stop_gradient": "const"},
    "jax.config": {"update": "jax_config_update"},
    "tensorflow": _TENSORFLOW,  # issue 25 (wt-tf25)
    "tensorflow.math": _TF_MATH,
    "tensorflow.nn": _TF_NN,
    "tensorflow.random": {"normal": "tf_normal", "uniform": "tf_uniform"},
    # HIPS autograd, micrograd, tinygrad (engine/library/spellings.py)
    "autograd": spellings.HIPS,
    "autograd.numpy": _NUMPY,
    "micrograd": {},
    "micrograd.engine": spellings.MICROGRAD,
    "tinygrad": {},
    "tinygrad.tensor": {},
    "tinygrad.Tensor": spellings.TINYGRAD_TENSOR,
    "tinygrad.tensor.Tensor": spellings.TINYGRAD_TENSOR,
}
# --- issue 25: the functional transforms (functional.py, functional_torch.py, vmap.py), jax.random
MODULES["torch.func"] = {**MODULES["torch.func"], **functional.TORCH_FUNC}
MODULES["torch.autograd.functional"] = dict(functional_torch.AUTOGRAD_FUNCTIONAL)
MODULES["jax"] = {**MODULES["jax"], **functional.JAX}
MODULES["jax.random"] = dict(jax_random.JAX_RANDOM)
_TORCH.update(vmap.TORCH)
for _m in ("numpy", "jax.numpy"):
    MODULES[_m].update({"allclose": "allclose", "vdot": "vdot"})
# --- end of issue 25's transforms ---
# Where the ops' own spellings live (each op says its torch_name and jax_name): the modules
# whose attribute of that name is the op, and the library's name for the op where it is not
# the op's own (max and min of two values are maximum and minimum).
SPELLED_IN = {
    "torch": ("torch",), "F": ("torch.nn.functional",), "jnp": ("jax.numpy", "numpy"),
    "jax.nn": ("jax.nn",),
}  # fmt: skip
LIBRARY_NAME = {"max": "maximum", "min": "minimum"}


def spell_ops() -> None:
    """Every op under its torch and JAX names (and NumPy's, which are JAX's): one table, from
    the op registry, so a new op is spelled in every module by its class alone."""
    for cls in OPS.values():
        own = LIBRARY_NAME.get(cls.function or cls.name, cls.function or cls.name)
        if own not in FUNCTIONS:
            continue
        for spelled in (cls.torch_name, cls.jax_name):
            prefix, _, attr = (spelled or "").rpartition(".")
            for module in SPELLED_IN.get(prefix, ()):
                MODULES[module].setdefault(attr, own)


spell_ops()
for _f in UNARY_FUNCTIONS:  # torch.sin_(x): x's numbers changed in place (methods.in_place)
    FUNCTIONS[_f + "_"] = Function(_f + "_", methods.in_place)
    _TORCH[_f + "_"] = _f + "_"
CONSTANTS = {"pi": 3.141592653589793, "e": 2.718281828459045, "inf": float("inf")}
CONSTANT_MODULES = ("math", "numpy", "torch", "jax.numpy")
DTYPES = ("float64", "float32", "double", "float", "long", "int64", "int32", "bool", "float16")
NAMED = (
    "torch, torch.nn.functional, numpy, math, jax, jax.numpy, tensorflow, autograd "
    "(HIPS), micrograd and tinygrad"
)
STANDARD = {
    "torch": "import torch", "np": "import numpy as np", "numpy": "import numpy",
    "F": "import torch.nn.functional as F", "nn": "import torch.nn as nn",
    "jnp": "import jax.numpy as jnp", "jax": "import jax", "math": "import math",
    "tf": "import tensorflow as tf",
}  # fmt: skip
# The language's functions by their bare names (`exp(x)`, `grad(L, x)`), and its other names
# as NumPy and PyTorch spell them (`dot`, `concatenate`).
BARE = {
    **{f: f for f in FUNCTIONS
       if f not in ("swapaxes", "t") and not f.startswith("torch_") and not f.endswith("_")},
    "dot": "matmul", "concatenate": "cat", "concat": "cat", "clip": "clamp", "grad": "grad",
}  # fmt: skip
BUILTIN_NAMES = frozenset(BARE) | frozenset(BUILTINS)
# Methods called for what they do, whose value a notebook line does not show.
EFFECTS = frozenset({"append", "extend", "backward", "step", "zero_grad", "seed", "manual_seed"})


def every_function() -> dict[str, str]:
    """Every module function a program may call, by its full path, and the library's name
    for it ("torch.exp" -> "exp")."""
    return {f"{m}.{a}": f for m, table in MODULES.items() for a, f in table.items()}


def function_named(name: str) -> Any:
    return SPECIAL.get(name) or FUNCTIONS.get(name) or BUILTINS.get(name)


# --- modules ------------------------------------------------------------------------------
def module_attribute(it: Interpreter, path: str, node: Any, code: str = "") -> Any:
    if path in MODULES:
        return Module(path)
    module, _, attr = path.rpartition(".")
    if module in MODULES and attr in MODULES[module]:
        return function_named(MODULES[module][attr])
    if module in CONSTANT_MODULES and attr in CONSTANTS:
        return CONSTANTS[attr]
    if module == "torch" and attr in DTYPES:
        return Opaque("dtype", {"name": f"torch.{attr}"})
    if module in ("numpy", "jax.numpy", "tensorflow") and attr in DTYPES:
        return Opaque("dtype", {"name": f"numpy.{attr}"})
    if not code:
        code = "unknown_function" if id(node) in it.scan.call_funcs else "attribute"
    raise function_error(it, path, node, code)


def function_error(it: Interpreter, path: str, node: Any, code: str = "unknown_function") -> Any:
    """Why `path` is refused: the functions of its module that work, listed."""
    module, _, name = path.rpartition(".")
    if module not in MODULES:  # `torch.fft.fft`: name the first part that is not a module
        parts = path.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in MODULES:
                module, name = ".".join(parts[:i]), parts[i]
                break
    works = sorted(  # the in-place forms (torch.sin_) go without saying
        (k for k in MODULES.get(module, {}) if k[0] not in "_(" and k[-1] != "_"), key=str.lower
    )
    return it.error("module_lacks", node, code, module=module, name=name[:40],
                    listed=", ".join(works) or "none")  # fmt: skip


def imported(it: Interpreter, node: ast.Import | ast.ImportFrom) -> list[tuple[str, Any]]:
    """What an import binds: modules under their names, or the functions it names."""
    out: list[tuple[str, Any]] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name not in MODULES:
                raise module_refused(it, alias.name, node)
            local = alias.asname or alias.name.split(".")[0]
            out.append((local, Module(alias.name if alias.asname else local)))
        return out
    module = node.module or ""
    if node.level or module not in MODULES:
        raise module_refused(it, "." * node.level + module, node)
    for alias in node.names:
        if alias.name == "*":
            raise it.error("import_star", node, "invalid")
        full = f"{module}.{alias.name}"
        local = alias.asname or alias.name
        if full in MODULES:
            out.append((local, Module(full)))
        elif alias.name in MODULES[module] or alias.name in CONSTANTS:
            out.append((local, module_attribute(it, full, node, "import")))
        elif alias.name.startswith("_") or local in names_read(it):
            raise function_error(it, full, node, "import")
        # else: a name of an allowed module the program never uses (issue 25): accepted
    return out


def names_read(it: Interpreter) -> frozenset[str]:
    """Every name the program reads somewhere (an import it never reads does nothing)."""
    tree = it.src.tree
    return frozenset(
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )


def module_refused(it: Interpreter, path: str, node: Any) -> Any:
    root = path.split(".")[0]
    key = "module_part_refused" if root in ("torch", "numpy", "jax") else "module_refused"
    return it.error(key, node, "import", path=path[:60], root=root, named=NAMED)


# --- attributes of values -----------------------------------------------------------------
def attribute(it: Interpreter, owner: Any, attr: str, node: Any) -> Any:
    if attr.startswith("_"):
        raise it.error("attribute_access", node, "attribute", attr=attr[:40])
    if isinstance(owner, Module):
        return module_attribute(it, f"{owner.path}.{attr}", node)
    if isinstance(owner, Value | Pending):
        if spellings.is_micrograd(it):  # micrograd's .data and .grad: numbers
            number = spellings.micrograd_attribute(it, owner, attr, node)
            if number is not None:
                return number
        return methods.tensor_attribute(it, owner, attr, node)
    if isinstance(owner, Grad):
        return methods.grad_attribute(it, owner, attr, node)
    if isinstance(owner, Ints):
        return methods.ints_attribute(it, owner, attr, node)
    if isinstance(owner, Opaque):
        return methods.opaque_attribute(it, owner, attr, node)
    if isinstance(owner, Array):
        return methods.array_attribute(it, owner, attr, node)
    if isinstance(owner, list) and attr in ("append", "extend"):
        return Function(attr, methods.list_method).bind(owner)
    if isinstance(owner, dict) and attr in ("items", "keys", "values"):
        return Function(attr, methods.dict_method).bind(owner)
    if isinstance(owner, str) and attr in ("format", "join", "upper", "lower", "strip"):
        return Function(attr, methods.text_method).bind(owner)
    from engine.language.values import numbers_list

    is_value = (is_number(owner) and not isinstance(owner, bool)) or numbers_list(owner)
    if is_value and not it.torch and attr not in ("append", "extend"):
        return methods.tensor_attribute(it, it.tensor(owner, node), attr, node)  # numbers: a value
    if isinstance(owner, extremes.Extremes) and attr in ("values", "indices"):
        return owner[0 if attr == "values" else 1]
    if isinstance(owner, tuple) and attr in ("count", "index"):
        raise it.error("attribute_of", node, "attribute", attr=attr, v=describe(owner))
    raise it.error("attribute_of", node, "attribute", attr=attr[:40], v=describe(owner))


def set_attribute(it: Interpreter, owner: Any, attr: str, value: Any, node: Any) -> None:
    if attr.startswith("_"):
        raise it.error("assign_attribute_dunder", node, "unsupported", attr=attr[:40])
    if spellings.is_micrograd(it) and spellings.set_micrograd(it, owner, attr, value, node):
        return
    methods.set_tensor_attribute(it, owner, attr, value, node)


def is_effect(node: ast.expr) -> bool:
    """A call made for what it does (`w.grad.zero_()`, `opt.step()`, `xs.append(v)`): a
    notebook line of one shows nothing here."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name.endswith("_") or name in EFFECTS


def enter(it: Interpreter, manager: Any, node: Any, body: Callable[[], None],
          name: str | None = None) -> None:  # fmt: skip
    """Run `body` inside a `with` block's manager (bound to `name` if `as name` is written):
    no_grad, enable_grad, tf.GradientTape (engine/library/tape.py)."""
    if name is not None:
        it.set_var(name, manager, node)
    if isinstance(manager, Opaque) and manager.kind == "tape":
        return tape.enter(it, manager, body)
    if isinstance(manager, Opaque) and manager.kind in ("no_grad", "enable_grad"):
        before = it.grad_enabled
        it.grad_enabled = manager.kind == "enable_grad"
        try:
            body()
        finally:
            it.grad_enabled = before
        return
    raise it.error("with_only", node, "unsupported")


# What a bare name holds when the program has not bound it: Python's builtins, then the
# language's functions.
GLOBALS: dict[str, Any] = {
    **{n: f for n, f in ((n, function_named(f)) for n, f in BARE.items()) if f is not None},
    **BUILTINS,
}

__all__ = ["GLOBALS", "MODULES", "np"]
