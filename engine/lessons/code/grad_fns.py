"""Facts about ops that the code lesson reads, kept here until they move onto the op classes:
the `grad_fn` PyTorch 2.13 gives each result (AddBackward0, MulBackward0, …), predicted from
the node's op and its inputs only, and the PyTorch and JAX names of each op's function.

Each is read from the op first (`op.grad_fn(inputs)`, `op.torch_name`, `op.jax_name`), so once
the op classes carry them, the tables below go and nothing else changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.autograd.value import Value
from engine.lessons.code.facts import from_number

# The ops whose grad_fn does not follow from the op's name alone (an elementwise function of
# one value is `Exp` → ExpBackward0; the rest depend on the inputs, see predicted).
BACKWARD = {
    "add": "AddBackward0",
    "mul": "MulBackward0",
    "max": "MaximumBackward0",
    "min": "MinimumBackward0",
    "neg": "NegBackward0",
    "softmax": "SoftmaxBackward0",
    "log_softmax": "LogSoftmaxBackward0",
    "cross_entropy": "NllLossBackward0",
    "mse": "MseLossBackward0",  # written as F.mse_loss
    "transpose": "PermuteBackward0",  # written as .permute(…) or .T
    "cat": "CatBackward0",
    "stack": "StackBackward0",
    "clamp": "ClampBackward1",  # clamp(x, min=…, max=…) with numbers, either or both given
    "gather": "IndexBackward0",  # indexing with lists or ranges (advanced indexing)
}
MATMUL = {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4",
          (1, 1): "DotBackward0"}  # fmt: skip

# The functions each op is written with, where it is not `torch.<function>` / `jnp.<function>`.
TORCH_NAMES = {
    "max": "torch.maximum", "min": "torch.minimum", "mse": "F.mse_loss",
    "cross_entropy": "F.cross_entropy", "cat": "torch.cat", "stack": "torch.stack",
    "clamp": "torch.clamp", "transpose": "torch.permute",
}  # fmt: skip
JAX_NAMES = {
    "max": "jnp.maximum", "min": "jnp.minimum", "sigmoid": "jax.nn.sigmoid",
    "relu": "jax.nn.relu", "softmax": "jax.nn.softmax", "log_softmax": "jax.nn.log_softmax",
    "cat": "jnp.concatenate", "stack": "jnp.stack", "clamp": "jnp.clip",
}  # fmt: skip


def grad_fn_of(node: Value) -> str | None:
    """The grad_fn PyTorch gives `node` (None: it has none, or it is not predicted)."""
    if node.op is None or not node.requires_grad:
        return None
    namer = getattr(node.op, "grad_fn", None)
    if callable(namer):
        return namer(node.inputs)  # type: ignore[no-any-return]
    return predicted(node, node.inputs)


def torch_name(op: Any) -> str:
    """`torch.exp`, `F.mse_loss`: the PyTorch function an op class is written with."""
    return str(getattr(op, "torch_name", None) or TORCH_NAMES.get(op.name, f"torch.{op.function}"))


def jax_name(op: Any) -> str:
    """`jnp.exp`, `jax.nn.relu`: the JAX function an op class is written with."""
    return str(getattr(op, "jax_name", None) or JAX_NAMES.get(op.name, f"jnp.{op.function}"))


def predicted(node: Value, inputs: Sequence[Value]) -> str | None:
    """The grad_fn of an op node, from its op and its inputs (a Python number among them is a
    constant that `from_number` recognises: `1 - x` is RsubBackward1, `t - x` SubBackward0)."""
    op: Any = node.op
    name = op.name
    if name in BACKWARD:
        return BACKWARD[name]
    if op.elementwise and op.arity == 1:
        if name == "sqrt" and is_norm(node):
            return "LinalgVectorNormBackward0"  # norm(x): sqrt(sum(x ** 2)) here, one op there
        return str(name).capitalize() + "Backward0"
    if name == "sub":
        return "RsubBackward1" if from_number(inputs[0]) else "SubBackward0"
    if name == "div":  # 2 / x is x.reciprocal() * 2 in PyTorch
        return "MulBackward0" if from_number(inputs[0]) else "DivBackward0"
    if name == "pow":
        if from_number(inputs[1]):
            return "PowBackward0"
        return "PowBackward2" if from_number(inputs[0]) else "PowBackward1"
    if name == "matmul":
        dims = tuple(x.data.ndim for x in inputs)
        return "UnsafeViewBackward0" if max(dims) > 2 else MATMUL.get(dims)  # type: ignore[arg-type]
    if name in ("sum", "mean"):
        return name.capitalize() + ("Backward0" if op.axis is None else "Backward1")
    if name == "reshape":
        return reshaped(inputs[0], node)
    if name == "index":
        return selected(op.key)
    return None


def is_norm(node: Value) -> bool:
    """sqrt(sum(x ** 2)) written at one place: the norm the language computes in three ops."""
    inner = node.inputs[0]
    if inner.op is None or inner.op.name != "sum" or inner.span != node.span:
        return False
    square = inner.inputs[0]
    return square.op is not None and square.op.name == "pow" and square.span == node.span


def reshaped(src: Value, node: Value) -> str | None:
    """A reshape is a view of a contiguous input (ViewBackward0); a transposed input is copied
    first (UnsafeViewBackward0); a strided part of one is not predicted."""
    if src.op is not None and src.op.name == "transpose":
        return None if src.data.shape == node.data.shape else "UnsafeViewBackward0"
    if src.op is not None and src.op.name == "index" and not contiguous(src.op.key):  # type: ignore[attr-defined]
        return None
    return "ViewBackward0"


def contiguous(key: tuple[Any, ...]) -> bool:
    """Is `x[key]` contiguous: whole numbers first, then at most one slice by 1, then only
    whole axes?"""
    rest = list(key)
    while rest and isinstance(rest[0], int):
        rest.pop(0)
    if rest and isinstance(rest[0], slice) and rest[0].step in (None, 1):
        rest.pop(0)
    return all(k == slice(None) for k in rest)


def selected(key: tuple[Any, ...]) -> str | None:
    """x[0] and x[:, 1] select (SelectBackward0); x[1:] and x[0, 1:] slice (SliceBackward0):
    the last part of the key that is not a whole axis decides."""
    for k in reversed(key):
        if isinstance(k, int):
            return "SelectBackward0"
        if k != slice(None):
            return "SliceBackward0"
    return None
