"""The functional transforms, as torch.func, torch.autograd.functional and JAX spell them:
`grad` (argnums, has_aux), `value_and_grad`, `vjp`, `jvp`, `linearize`, `jacrev`/`jacfwd`/
`jacobian`, `hessian`, `hvp`/`vhp`, `vmap`, and `jit` as the identity.

Each runs the program's function on its inputs (leaves where they are not already) and then
differentiates what it built, in one of two ways:
- at the program's level, as passes (engine/tracing/passes.py): a gradient is one backward
  pass, a Jacobian one pass per output element (seeded one-hot), each stepped as `grad`'s is;
  the forward-mode ones (`jvp`, `jacfwd`, `linearize`) carry tangents forward, op by op, with
  each op's own JVP rule;
- inside another transform, as graph nodes (transforms.graph_gradients), so the outer one can
  differentiate them again (`jacfwd(jacrev(f))`, `grad(grad(f))`).
The work of a Jacobian (rows × the graph) is charged against max_ops before the first row.
The torch.autograd.functional spellings are functional_torch.py; vmap and jit, vmap.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.graph import dfs_order
from engine.autograd.value import Value
from engine.language.calls import argument_node, call_value
from engine.language.values import Function, describe
from engine.library.transform_inputs import (
    function_of,
    inputs,
    is_tree,
    output,
    regroup,
    run_inside,
    shown,
    split_aux,
)
from engine.library.transforms import graph_gradients, special

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


# --- reverse mode --------------------------------------------------------------------------
def pullback(
    it: Interpreter, y: Value, xs: list[Value], seed: np.ndarray | None, call: Any, graph: bool
) -> list[Value]:
    """vᵀ·∂y/∂x for each x (v the seed, ones for a scalar y): one pass, or graph nodes."""
    if not y.requires_grad:
        return [it.constant(np.zeros(x.data.shape), call) for x in xs]
    if graph:
        target = y
        if seed is not None:
            target = it.op(ops.Sum(), (it.op(ops.Mul(), (y, it.constant(seed, call)), call),), call)
        return graph_gradients(it, target, xs, call)
    v = None if seed is None else it.constant(np.array(seed, dtype=np.float64), call)
    found = it.passes.gradients(y, xs, v, True, call)
    return [
        it.constant(np.zeros(x.data.shape) if g is None else np.array(g), call)
        for g, x in zip(found, xs, strict=True)
    ]


def charge(it: Interpreter, rows: int, ys: list[Value], call: Any) -> None:
    """A Jacobian's work (a pass per row through the graph), refused before the first row."""
    size = sum(len(dfs_order(y)) for y in ys)
    total = it.counted["ops"] + rows * size
    if total > it.limits.max_ops:
        raise it.over("max_ops", call, n=total)
    it.count("turns", call, rows)


def jacobian_rows(
    it: Interpreter, y: Value, xs: list[Value], call: Any, graph: bool
) -> list[Value]:
    """∂y/∂x for each x, of shape y.shape + x.shape: one pullback per element of y."""
    for x in xs:  # the answer's size, before the first row
        it.check_shape(y.data.shape + x.data.shape, call)
    charge(it, y.data.size, [y], call)
    rows: list[list[Value]] = []
    for k in np.ndindex(y.data.shape):
        if graph:
            yk = it.op(ops.Index(tuple(int(i) for i in k)), (y,), call) if k else y
            rows.append(pullback(it, yk, xs, None, call, True))
        else:
            seed = np.zeros(y.data.shape)
            seed[k] = 1.0
            rows.append(pullback(it, y, xs, seed, call, False))
    out = []
    for j, x in enumerate(xs):
        shape = y.data.shape + x.data.shape
        col = [r[j] for r in rows]
        if not graph:
            data = np.stack([c.data for c in col]).reshape(shape)
            out.append(it.constant(data, call))
        elif len(col) == 1 and not y.data.shape:
            out.append(col[0])
        else:
            stacked = it.op(ops.Stack(0, len(col)), tuple(col), call)
            out.append(it.op(ops.Reshape(shape), (stacked,), call))
    return out


# --- forward mode --------------------------------------------------------------------------
def tangents_of(
    it: Interpreter, ys: list[Value], xs: list[Value], ts: list[np.ndarray], call: Any
) -> list[np.ndarray]:
    """One forward-mode pass: the tangent of each y, given each x's, by each op's JVP rule."""
    seed = {x.seq: t for x, t in zip(xs, ts, strict=True)}
    order: list[Value] = []
    seen: set[int] = set()
    for y in ys:
        for n in dfs_order(y):
            if n.seq not in seen:
                seen.add(n.seq)
                order.append(n)
    it.count("ops", call, len(order))
    tangent: dict[int, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for n in order:
            if n.seq in seed:
                tangent[n.seq] = seed[n.seq]
            elif n.op is None or not any(x.seq in tangent for x in n.inputs):
                continue
            else:
                given = [tangent.get(x.seq, np.zeros(x.data.shape)) for x in n.inputs]
                raw = n.op.jvp([x.data for x in n.inputs], given, n.data)
                tangent[n.seq] = np.broadcast_to(np.asarray(raw, np.float64), n.data.shape).copy()
    record_tangents(it, order, seed, tangent, call)
    return [tangent.get(y.seq, np.zeros(y.data.shape)) for y in ys]


SHOWN_TANGENT_PASSES = 12  # tangent passes a trace keeps for the page (as the lesson's)


def record_tangents(
    it: Interpreter, order: list[Value], seed: dict[int, np.ndarray],
    tangent: dict[int, np.ndarray], call: Any,
) -> None:  # fmt: skip
    """Keep a forward-mode pass for the trace (trace_json's `tangent_passes`): its nodes in
    topological order, the seeded leaves and every node's tangent (0 where none reached)."""
    kept = it.passes.tangent_passes
    if len(kept) >= SHOWN_TANGENT_PASSES:
        return
    line = getattr(call, "lineno", None)
    full = {n.seq: tangent.get(n.seq, np.zeros(n.data.shape)) for n in order}
    kept.append({"order": list(order), "seed": list(seed), "tangents": full, "line": line})


def push(
    it: Interpreter, ys: list[Value], xs: list[Value], ts: list[Any], call: Any, graph: bool
) -> list[Value]:
    """J·t for each y: a forward pass at the top; inside a transform, J built and applied."""
    tangents = []
    for x, t in zip(xs, ts, strict=True):
        tv = it.tensor(t, call)
        if tv.data.shape != x.data.shape:
            raise it.error("transform_tangent_shape", call, "shape",
                           a=str(tuple(tv.data.shape)), b=str(tuple(x.data.shape)))  # fmt: skip
        tangents.append(tv)
    if not graph:
        found = tangents_of(it, ys, xs, [np.array(t.data) for t in tangents], call)
        return forward_made(it, ys[0], [it.constant(t, call) for t in found])
    out = []
    for y in ys:
        total: Any = None
        for J, x, t in zip(jacobian_rows(it, y, xs, call, True), xs, tangents, strict=True):
            flat = it.op(ops.Reshape((y.data.size, x.data.size)), (J,), call)
            tv = it.op(ops.Reshape((x.data.size,)), (t,), call)
            term = it.op(ops.Reshape(y.data.shape), (it.op(ops.MatMul(), (flat, tv), call),), call)
            total = term if total is None else it.op(ops.Add(), (total, term), call)
        out.append(total)
    return out


# --- the transforms ------------------------------------------------------------------------
def gradient_function(f: Any, argnums: Any, has_aux: bool, how: str, node: Any) -> Function:
    """grad(f), value_and_grad(f), grad_and_value(f): the function of f's arguments."""
    name = f"{how}({getattr(f, 'name', 'f')})"

    def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], call: Any) -> Any:
        if not args:
            raise it.error("grad_needs_point", call, "arguments", name=name)
        graph = it.passes.transforming > 0
        args, xs, shape = inputs(it, f, args, argnums, call, node)
        y, aux = split_aux(it, run_inside(it, f, args, kwargs, call), has_aux, call)
        y = output(it, y, f, call)
        if y.data.size != 1:
            raise it.error("grad_scalar_output", call, "shape", shape=str(tuple(y.data.shape)))
        g = regroup(pullback(it, y, xs, None, call, graph), shape, argnums)
        value = shown(it, y, call, graph)
        if how == "value_and_grad":
            return ((value, aux) if has_aux else value), g
        if how == "grad_and_value":
            return g, ((value, aux) if has_aux else value)
        return (g, aux) if has_aux else g

    return Function(name, run)


for _how in ("grad", "value_and_grad", "grad_and_value"):

    def _make(how: str) -> None:
        @special(f"func_{how}", "f", argnums=0, has_aux=False, usage=f"{how}(f)")
        def make(it: Interpreter, node: Any, f: Any, argnums: Any, has_aux: Any) -> Function:
            return gradient_function(function_of(it, f, node), argnums, bool(has_aux), how, node)

    _make(_how)


def cotangent(it: Interpreter, v: Any, like: Value, call: Any) -> np.ndarray:
    t = np.array(it.tensor(v, call).data, dtype=np.float64)
    if t.shape != like.data.shape:
        raise it.error("transform_tangent_shape", call, "shape",
                       a=str(t.shape), b=str(tuple(like.data.shape)))  # fmt: skip
    return t


@special("func_vjp", "f", "*primals", has_aux=False, usage="vjp(f, *primals)")
def func_vjp(it: Interpreter, node: Any, f: Any, primals: Any, has_aux: Any) -> Any:
    """vjp(f, *primals) → (f(*primals), vjp_fn); vjp_fn(v) → vᵀJ for each primal (a tuple)."""
    f = function_of(it, f, node)
    graph = it.passes.transforming > 0
    nums = tuple(range(len(primals)))
    args, xs, shape = inputs(it, f, list(primals), nums, node)
    y, aux = split_aux(it, run_inside(it, f, args, {}, node), has_aux, node)
    many = isinstance(y, tuple)  # f of several outputs: a cotangent for each
    ys = [output(it, v, f, node) for v in (y if many else (y,))]

    def back(it: Interpreter, vs: list[Any], kwargs: dict[str, Any], call: Any) -> Any:
        if len(vs) != 1:
            raise it.error("grad_needs_point", call, "arguments", name="vjp_fn")
        given = tuple_of(it, vs[0], call, "cotangents") if many else (vs[0],)
        if len(given) != len(ys):
            raise it.error("transform_tangents", call, "arguments", n=len(ys), m=len(given))
        seeds = [cotangent(it, v, yi, call) for v, yi in zip(given, ys, strict=True)]
        if not many:
            return regroup(pullback(it, ys[0], xs, seeds[0], call, graph), shape, nums)
        total: Any = None  # Σ ⟨yᵢ, vᵢ⟩: one pass back through every output at once
        for yi, seed in zip(ys, seeds, strict=True):
            term = it.op(ops.Sum(), (it.op(ops.Mul(), (yi, it.constant(seed, call)), call),), call)
            total = term if total is None else it.op(ops.Add(), (total, term), call)
        return regroup(pullback(it, total, xs, None, call, graph), shape, nums)

    fn = Function(f"vjp({f.name})", back)
    out = tuple(shown(it, v, node, graph) for v in ys) if many else shown(it, ys[0], node, graph)
    return (out, fn, aux) if has_aux else (out, fn)


def tuple_of(it: Interpreter, v: Any, node: Any, what: str) -> tuple:
    if not isinstance(v, tuple | list):
        raise it.error("transform_needs_tuple", node, "arguments", what=what, v=describe(v))
    return tuple(v)


@special("func_jvp", "f", "primals", "tangents", has_aux=False, usage="jvp(f, primals, tangents)")
def func_jvp(it: Interpreter, node: Any, f: Any, primals: Any, tangents: Any, has_aux: Any) -> Any:
    """jvp(f, primals, tangents) → (f(*primals), J·t): one forward-mode pass."""
    f = function_of(it, f, node)
    primals = tuple_of(it, primals, argument_node(node, 1), "primals")
    tangents = tuple_of(it, tangents, argument_node(node, 2), "tangents")
    if len(primals) != len(tangents):
        raise it.error("transform_tangents", node, "arguments", n=len(primals), m=len(tangents))
    graph = it.passes.transforming > 0
    args, xs, _ = inputs(it, f, list(primals), tuple(range(len(primals))), node)
    y, aux = split_aux(it, run_inside(it, f, args, {}, node), has_aux, node)
    y = output(it, y, f, node)
    ts = [t for tv in tangents for t in (tv if is_tree(tv) else [tv])]
    (tout,) = push(it, [y], xs, ts, node, graph)
    out = (shown(it, y, node, graph), tout)
    return (*out, aux) if has_aux else out


@special("jax_linearize", "f", "*primals", usage="linearize(f, *primals)")
def jax_linearize(it: Interpreter, node: Any, f: Any, primals: Any) -> Any:
    """jax.linearize(f, *primals) → (f(*primals), f_jvp); f_jvp(*tangents) → J·t."""
    f = function_of(it, f, node)
    graph = it.passes.transforming > 0
    args, xs, _ = inputs(it, f, list(primals), tuple(range(len(primals))), node)
    y = output(it, run_inside(it, f, args, {}, node), f, node)

    def forward(it: Interpreter, ts: list[Any], kwargs: dict[str, Any], call: Any) -> Any:
        if len(ts) != len(xs):
            raise it.error("transform_tangents", call, "arguments", n=len(xs), m=len(ts))
        return push(it, [y], xs, list(ts), call, graph)[0]

    return shown(it, y, node, graph), Function(f"linearize({f.name})", forward)


def jacobian_function(f: Any, argnums: Any, has_aux: bool, how: str, node: Any = None) -> Function:
    """jacrev(f), jacfwd(f): the function giving ∂f/∂x, of shape f's + x's (per output of a
    tuple, per argnum of a tuple); forward mode one pass per input element."""
    name = f"{how}({getattr(f, 'name', 'f')})"

    def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], call: Any) -> Any:
        if not args:
            raise it.error("grad_needs_point", call, "arguments", name=name)
        graph = it.passes.transforming > 0
        args, xs, shape = inputs(it, f, args, argnums, call, node)
        y, aux = split_aux(it, run_inside(it, f, args, kwargs, call), has_aux, call)
        many = isinstance(y, tuple | list)
        ys = [output(it, v, f, call) for v in (y if many else [y])]
        per = [
            regroup(forward_jacobian(it, v, xs, call, graph) if how == "jacfwd" and not graph
                    else jacobian_rows(it, v, xs, call, graph), shape, argnums)
            for v in ys
        ]  # fmt: skip
        J = tuple(per) if many else per[0]
        return (J, aux) if has_aux else J

    return Function(name, run)


def forward_jacobian(it: Interpreter, y: Value, xs: list[Value], call: Any, graph: bool) -> list:
    """∂y/∂x by forward mode: one tangent pass per element of each x, seeded one-hot."""
    for x in xs:
        it.check_shape(y.data.shape + x.data.shape, call)
    charge(it, sum(x.data.size for x in xs), [y], call)
    out = []
    for j, x in enumerate(xs):
        cols = []
        for k in np.ndindex(x.data.shape):
            ts = [np.zeros(v.data.shape) for v in xs]
            ts[j][k] = 1.0
            cols.append(tangents_of(it, [y], xs, ts, call)[0])
        data = np.stack(cols, axis=-1) if cols else np.zeros(y.data.shape + (0,))
        out.append(it.constant(data.reshape(y.data.shape + x.data.shape), call))
    return forward_made(it, y, out)


def forward_made(it: Interpreter, y: Value, made: list[Value]) -> list[Value]:
    """What a forward-mode transform gave, at the program's level: constants. A program that
    makes no backward pass and ends on one (or on a tuple holding it) is drawn as f's graph,
    y its output, so that the page steps the nodes whose tangents the pass computed."""
    if it.passes.forward_output is None:
        it.passes.forward_output = y
    it.passes.forward_made.update(v.seq for v in made)
    return made


for _how in ("jacrev", "jacfwd"):

    def _make_jac(how: str) -> None:
        @special(f"func_{how}", "f", argnums=0, has_aux=False, usage=f"{how}(f)")
        def make(it: Interpreter, node: Any, f: Any, argnums: Any, has_aux: Any) -> Function:
            return jacobian_function(function_of(it, f, node), argnums, bool(has_aux), how, node)

    _make_jac(_how)


def hessian_of(
    it: Interpreter, f: Any, args: list[Any], argnums: Any, call: Any
) -> tuple[Value, Any]:
    """f's value and ∂²f/∂xᵢ∂xⱼ (the gradient built as a graph, then its Jacobian)."""
    graph = it.passes.transforming > 0
    args, xs, shape = inputs(it, f, args, argnums, call)
    it.passes.transforming += 1
    try:
        y = output(it, call_value(it, f, args, {}, call), f, call)
        if y.data.size != 1:
            raise it.error("grad_scalar_output", call, "shape", shape=str(tuple(y.data.shape)))
        gs = pullback(it, y, xs, None, call, True)
    finally:
        it.passes.transforming -= 1
    rows = [regroup(jacobian_rows(it, g, xs, call, graph), shape, argnums) for g in gs]
    H = regroup(rows, shape, argnums)
    return y, H


@special("func_hessian", "f", argnums=0, usage="hessian(f)")
def func_hessian(it: Interpreter, node: Any, f: Any, argnums: Any) -> Function:
    f = function_of(it, f, node)

    def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], call: Any) -> Any:
        if not args:
            raise it.error("grad_needs_point", call, "arguments", name=f"hessian({f.name})")
        return hessian_of(it, f, args, argnums, call)[1]

    return Function(f"hessian({f.name})", run)


# Module spellings of these (names.py adds them to MODULES).
TORCH_FUNC = {
    "grad": "func_grad", "grad_and_value": "func_grad_and_value", "vjp": "func_vjp",
    "jvp": "func_jvp", "jacrev": "func_jacrev", "jacfwd": "func_jacfwd",
    "hessian": "func_hessian", "vmap": "func_vmap",
}  # fmt: skip
JAX = {
    "grad": "func_grad", "value_and_grad": "func_value_and_grad", "vjp": "func_vjp",
    "jvp": "func_jvp", "linearize": "jax_linearize", "jacfwd": "func_jacfwd",
    "jacrev": "func_jacrev", "jacobian": "func_jacrev", "hessian": "func_hessian",
    "vmap": "jax_vmap", "jit": "jax_jit",
}  # fmt: skip
