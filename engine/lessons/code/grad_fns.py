"""What the code lesson reads of each op, all of it on the op's class (engine/autograd/ops):
the `grad_fn` PyTorch 2.13 gives a result (`op.grad_fn(inputs)`: AddBackward0, RsubBackward1,
MvBackward0, …) and the PyTorch and JAX functions an op is written with.
"""

from __future__ import annotations

from typing import Any

from engine.autograd.value import Value


def grad_fn_of(node: Value) -> str | None:
    """The grad_fn PyTorch gives `node` (None: it has none, or it is not predicted)."""
    if node.op is None or not node.requires_grad:
        return None
    return node.op.grad_fn(node.inputs)


def torch_name(op: Any) -> str:
    """`torch.exp`, `F.mse_loss`: the PyTorch function an op class is written with."""
    return str(op.torch_name or f"torch.{op.function or op.name}")


def jax_name(op: Any) -> str:
    """`jnp.exp`, `jax.nn.relu`: the JAX function an op class is written with."""
    return str(op.jax_name or f"jnp.{op.function or op.name}")
