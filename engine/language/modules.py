"""The modules a program may import, and what their functions mean in the language.

`import torch`, `import numpy as np`, `import torch.nn.functional as F`, `from jax import
numpy as jnp`, `from math import exp`, … are accepted for the modules below and do nothing
else; `torch.exp`, `np.exp`, `math.exp`, `F.relu`, `jnp.tanh` then mean the language's `exp`,
`relu`, `tanh`. FUNCTIONS maps each qualified name to the language's function; a name it lacks
is refused with the list of those that work, and another module with the list of modules.
"""

from __future__ import annotations

# Module path -> what `import` brings in. A path not here cannot be imported.
MODULES = (
    "torch", "torch.nn", "torch.nn.functional", "torch.autograd", "torch.linalg", "numpy",
    "numpy.random", "numpy.linalg", "math", "jax", "jax.numpy", "jax.numpy.linalg", "jax.nn",
    "jax.lax",
)  # fmt: skip
# The modules a message names, and the import a well-known short name needs.
NAMED = "torch, torch.nn.functional, numpy, math, jax and jax.numpy"
STANDARD = {
    "torch": "import torch", "np": "import numpy as np", "numpy": "import numpy",
    "F": "import torch.nn.functional as F", "nn": "import torch.nn as nn",
    "jnp": "import jax.numpy as jnp", "jax": "import jax", "math": "import math",
}  # fmt: skip

_ELEMENTWISE = ("exp", "log", "sqrt", "sin", "cos", "tanh")
_ARRAY = (
    *_ELEMENTWISE, "abs", "sum", "mean", "matmul", "dot", "reshape", "transpose",
    "maximum", "minimum", "zeros", "ones", "full", "arange", "linspace", "stack", "square",
)  # fmt: skip
_NUMPY = {
    **{f: f for f in _ARRAY}, "absolute": "abs", "power": "pow", "concatenate": "cat",
    "clip": "clamp", "array": "tensor", "asarray": "tensor", "zeros_like": "zeros_like",
    "ones_like": "ones_like",
}  # fmt: skip
_FUNCTIONAL = {
    "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "softmax": "softmax",
    "log_softmax": "log_softmax", "cross_entropy": "cross_entropy", "mse_loss": "mse",
}  # fmt: skip
_TORCH = {
    **{f: f for f in _ARRAY}, "sigmoid": "sigmoid", "relu": "relu", "softmax": "softmax",
    "log_softmax": "log_softmax", "mm": "matmul", "pow": "pow", "max": "max", "min": "min",
    "cat": "cat", "concat": "cat", "concatenate": "cat", "clamp": "clamp", "clip": "clamp",
    "randn": "randn", "rand": "rand", "tensor": "tensor", "as_tensor": "tensor",
    "detach": "detach", "t": "transpose", "permute": "transpose", "zeros_like": "zeros_like",
    "ones_like": "ones_like", "randn_like": "randn_like", "rand_like": "rand_like",
    **{f"nn.functional.{f}": g for f, g in _FUNCTIONAL.items()},
    "autograd.grad": "grad", "Tensor": "tensor", "norm": "norm", "linalg.norm": "norm",
}  # fmt: skip
_TORCH.pop("transpose")  # torch.transpose(x, 0, 1) swaps two axes: not NumPy's transpose

FUNCTIONS: dict[str, str] = {
    **{f"torch.{f}": g for f, g in _TORCH.items()},
    **{f"numpy.{f}": g for f, g in _NUMPY.items()},
    "numpy.random.randn": "randn", "numpy.random.rand": "rand",
    **{f"jax.numpy.{f}": g for f, g in _NUMPY.items() if g != "tensor" or f == "array"},
    **{f"jax.nn.{f}": g for f, g in _FUNCTIONAL.items() if f in ("relu", "sigmoid", "softmax",
                                                                  "log_softmax")},
    "jax.grad": "grad", "jax.lax.stop_gradient": "const",
    "numpy.linalg.norm": "norm", "jax.numpy.linalg.norm": "norm",
    **{f"math.{f}": f for f in _ELEMENTWISE}, "math.fabs": "abs", "math.pow": "pow",
}  # fmt: skip
# The numbers a module names: `math.pi`, `np.e`.
CONSTANTS = {
    f"{m}.{c}": v
    for m in ("math", "numpy", "torch", "jax.numpy")
    for c, v in (("pi", 3.141592653589793), ("e", 2.718281828459045))
}
# The seed statements of each library, which mean the language's seed(n).
SEEDS = {"numpy.random.seed", "torch.manual_seed"}
# What only a PyTorch tensor has: without requires_grad=True it is a constant.
TORCH_MADE = {"tensor", "randn", "rand", "zeros", "ones", "full", "arange", "linspace",
              "zeros_like", "ones_like", "randn_like", "rand_like"}  # fmt: skip


def is_module(path: str) -> bool:
    return path in MODULES


def module_error(path: str) -> str:
    """Why `import path` is refused."""
    root = path.split(".")[0]
    if root in ("torch", "numpy", "jax") and path not in MODULES:
        return (
            f"importing {path} is not supported; gradtrace understands {NAMED} "
            f"(from {root}, only the functions listed for it)"
        )
    return f"importing {path} is not supported; gradtrace understands {NAMED}"


def function_error(path: str) -> str:
    """Why `path(…)` is refused: the functions of its module that work, listed."""
    module, _, name = path.rpartition(".")
    if module not in MODULES:  # `torch.fft.fft`: name the first part that is not a module
        parts = path.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in MODULES:
                module, name = ".".join(parts[:i]), parts[i]
                break
    works = sorted(
        (k[len(module) + 1 :] for k in FUNCTIONS if k.startswith(module + ".")), key=str.lower
    )
    listed = ", ".join(w for w in works if "." not in w) or "none"
    return f"{module}.{name} is not supported; the functions of {module} that work are: {listed}"


def not_imported(name: str) -> str:
    return f"'{name}' is not imported: add `{STANDARD[name]}` at the top of the program"
