"""What every lesson needs besides the run program (engine.program.Run: its graph, ids and
trace): numbers as JSON, and a plain reverse walk that a lesson can bend (a chosen seed, a
dropped local backward)."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.graph import topological_order
from engine.autograd.ops import ARRAY_MATH
from engine.autograd.value import Value
from engine.tracing.trace_json import to_json


def number(a: np.ndarray | float | None) -> Any:
    """A scalar as a number, a tensor as nested lists (the trace's convention). A lesson can
    meet values the trace never holds (a nudged forward pass, an SGD step that overflows):
    an inf or NaN goes as null, never as a token that is not JSON."""
    if a is None:
        return None
    arr = np.asarray(a, dtype=np.float64)
    if np.isfinite(arr).all():
        return to_json(arr)
    if arr.ndim == 0:
        return None
    # None in an object array, null in JSON (NumPy's stubs accept numbers only there).
    return np.where(np.isfinite(arr), arr, None).tolist()  # type: ignore[call-overload]


def close(a: Any, b: Any, rtol: float = 1e-9, atol: float = 1e-12) -> bool:
    if a is None or b is None:
        return a is b
    return bool(
        np.allclose(
            np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=rtol, atol=atol
        )
    )


def local_backward(node: Value, g: np.ndarray) -> list[np.ndarray | None]:
    """One op node's local backward on arrays: the contribution for each input (None where no
    gradient is needed)."""
    assert node.op is not None
    needs = [x.requires_grad for x in node.inputs]
    with np.errstate(all="ignore"):
        grads = node.op.gradient(g, [x.data for x in node.inputs], node.data, needs, ARRAY_MATH)
    return [
        None if c is None or not needs[i] else np.asarray(c, dtype=np.float64)
        for i, c in enumerate(grads)
    ]


def reverse_walk(
    root: Value,
    seed: np.ndarray | None = None,
    *,
    order: str = "dfs",
    accumulate: str = "add",
    skip: frozenset[int] = frozenset(),
) -> tuple[dict[int, np.ndarray], list[Value]]:
    """backward() written out for lessons: grads by node seq, and the topological order.

    `seed` replaces the ones the output starts from (a chosen upstream vector); `skip` holds
    the seqs of op nodes whose local backward is missing (they pass nothing on)."""
    topo = topological_order(root, order)
    grads = {n.seq: np.zeros(n.data.shape) for n in topo if n.requires_grad}
    grads[root.seq] = np.ones(root.data.shape) if seed is None else np.asarray(seed, float)
    for node in reversed(topo):
        if node.op is None or not node.requires_grad or node.seq in skip:
            continue
        for x, c in zip(node.inputs, local_backward(node, grads[node.seq]), strict=True):
            if c is None:
                continue
            grads[x.seq] = c.copy() if accumulate == "assign" else grads[x.seq] + c
    return grads, topo


def op_work(node: Value) -> int:
    """About how many multiply-adds evaluating one op node takes: its largest array for an
    elementwise op or a reduction, m·k·n for a matrix product (which dominates: 128³ = 2M)."""
    if node.op is None:
        return 0
    sizes = [node.data.size] + [x.data.size for x in node.inputs]
    if node.op.name == "matmul" and len(node.inputs) == 2:
        a = node.inputs[0].data
        k = a.shape[-1] if a.ndim else 1
        return max(max(sizes), int(node.data.size) * int(k))
    return int(max(sizes))


def op_nodes(topo: list[Value]) -> list[Value]:
    """The op nodes whose local backward runs (they need a gradient)."""
    return [n for n in topo if n.op is not None and n.requires_grad]
