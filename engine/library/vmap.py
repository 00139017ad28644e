"""`vmap` (JAX's in_axes/out_axes, torch.func's in_dims/out_dims) as the function run once
per slice and the results stacked, `jit` as the identity, and what the transforms' documented
examples check with: `allclose`, `diag`, `vdot`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.value import Value
from engine.language.calls import call_value
from engine.language.values import Function
from engine.library.transform_inputs import function_of
from engine.library.transforms import SPECIAL, special

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


# --- vmap, jit -----------------------------------------------------------------------------
def take(it: Interpreter, x: Any, axis: int, k: int, call: Any) -> Value:
    v = it.tensor(x, call)
    key = (slice(None),) * axis + (k,)
    return it.op(ops.Index(key), (v,), call)


def axes_for(it: Interpreter, axes: Any, n: int, call: Any) -> list[Any]:
    """in_axes (out_axes) as one axis or None per argument (result)."""
    if isinstance(axes, tuple | list):
        if len(axes) != n:
            raise it.error("vmap_axes", call, "arguments", n=n, m=len(axes))
        return [None if a is None else it.whole(a, call) for a in axes]
    return [None if axes is None else it.whole(axes, call)] * n


def vmap_function(f: Any, in_axes: Any, out_axes: Any) -> Function:
    """vmap(f): f on each slice along the mapped axes, the results stacked along out_axes."""
    name = f"vmap({getattr(f, 'name', 'f')})"

    def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], call: Any) -> Any:
        axes = axes_for(it, in_axes, len(args), call)
        sizes = set()
        for a, ax in zip(args, axes, strict=True):
            if ax is not None:
                shape = it.tensor(a, call).data.shape
                if not -len(shape) <= ax < max(len(shape), 1) or not shape:
                    raise it.error("vmap_axis", call, "shape", axis=ax, shape=str(shape))
                sizes.add(shape[ax])
        if len(sizes) != 1:
            raise it.error("vmap_sizes", call, "shape", sizes=str(sorted(sizes)))
        (n,) = sizes
        it.count("turns", call, n)  # the rows, refused before the first
        results = []
        for k in range(n):
            sliced = [
                a if ax is None else take(it, a, ax % it.tensor(a, call).data.ndim, k, call)
                for a, ax in zip(args, axes, strict=True)
            ]
            results.append(call_value(it, f, sliced, kwargs, call))
        if results and isinstance(results[0], tuple):
            outs = axes_for(it, out_axes, len(results[0]), call)
            return tuple(join(it, [r[i] for r in results], outs[i], call)
                         for i in range(len(results[0])))  # fmt: skip
        return join(it, results, axes_for(it, out_axes, 1, call)[0], call)

    return Function(name, run)


def join(it: Interpreter, parts: list[Any], axis: Any, call: Any) -> Value:
    values = tuple(it.tensor(p, call) for p in parts)
    return it.op(ops.Stack(0 if axis is None else axis, len(values)), values, call)


@special("jax_vmap", "fun", in_axes=0, out_axes=0, axis_name=None, axis_size=None,
         usage="vmap(f, in_axes=0)")  # fmt: skip
def jax_vmap(it: Interpreter, node: Any, fun: Any, in_axes: Any, out_axes: Any,
             axis_name: Any, axis_size: Any) -> Function:  # fmt: skip
    return vmap_function(function_of(it, fun, node), in_axes, out_axes)


@special("func_vmap", "func", in_dims=0, out_dims=0, randomness="error", chunk_size=None,
         usage="vmap(func, in_dims=0)")  # fmt: skip
def func_vmap(it: Interpreter, node: Any, func: Any, in_dims: Any, out_dims: Any,
              randomness: Any, chunk_size: Any) -> Function:  # fmt: skip
    return vmap_function(function_of(it, func, node), in_dims, out_dims)


def jit(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    """jax.jit(f): f itself (compiling changes no number here); options accepted."""
    if len(args) != 1:
        raise it.error("library_usage", node, "arguments", name="jit", usage="jit(f)")
    return function_of(it, args[0], node)


SPECIAL["jax_jit"] = Function("jit", jit)


# --- what the transforms' documented examples check with ----------------------------------
@special("allclose", "input", "other", rtol=1e-05, atol=1e-08, equal_nan=False,
         usage="allclose(a, b)")  # fmt: skip
def allclose(it: Interpreter, node: Any, input: Any, other: Any, rtol: Any, atol: Any,  # noqa: A002
             equal_nan: Any) -> bool:  # fmt: skip
    """torch.allclose / np.allclose: |a − b| ≤ atol + rtol·|b| everywhere (a Python bool)."""
    a, b = (np.asarray(it.tensor(v, node).data) for v in (input, other))
    try:
        return bool(np.allclose(a, b, rtol=float(rtol), atol=float(atol),
                                equal_nan=bool(equal_nan)))  # fmt: skip
    except ValueError:
        raise it.error("shapes_differ", node, "shape", name="allclose",
                       a=str(a.shape), b=str(b.shape)) from None  # fmt: skip


@special("diag", "input", usage="diag(v)")
def diag(it: Interpreter, node: Any, input: Any) -> Value:  # noqa: A002
    """torch.diag: a vector's diagonal matrix (eye·v), or a matrix's diagonal (Σ over eye·M's
    rows), made of the graph's own ops so it differentiates."""
    v = it.tensor(input, node)
    if v.data.ndim not in (1, 2):
        raise it.error("vmap_axis", node, "shape", axis=0, shape=str(v.data.shape))
    n = v.data.shape[0] if v.data.ndim == 1 else min(v.data.shape)
    it.check_shape((n, n), node)
    eye = it.constant(np.eye(n) if v.data.ndim == 1 else np.eye(*v.data.shape), node)
    product = it.op(ops.Mul(), (eye, v), node)
    if v.data.ndim == 1:
        return product
    return it.op(ops.Sum(axis=1 if v.data.shape[0] <= v.data.shape[1] else 0), (product,), node)


@special("vdot", "a", "b", usage="vdot(a, b)")
def vdot(it: Interpreter, node: Any, a: Any, b: Any) -> Value:
    """jnp.vdot / np.vdot: Σ aᵢbᵢ over both flattened (real numbers: no conjugate)."""
    x, y = it.tensor(a, node), it.tensor(b, node)
    if x.data.size != y.data.size:
        raise it.error("shapes_differ", node, "shape", name="vdot",
                       a=str(x.data.shape), b=str(y.data.shape))  # fmt: skip
    flat = [it.op(ops.Reshape((v.data.size,)), (v,), node) for v in (x, y)]
    return it.op(ops.Sum(), (it.op(ops.Mul(), tuple(flat), node),), node)


# Module spellings (names.py adds them to MODULES).
TORCH = {"allclose": "allclose", "diag": "diag"}
