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
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.graph import dfs_order
from engine.autograd.value import Value
from engine.errors import Msg
from engine.language.calls import argument_node, call_value, keyword_node
from engine.language.values import Closure, Function, Pending, describe, numbers_list
from engine.library.transforms import SPECIAL, graph_gradients, special

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


# --- the inputs and the function's run ----------------------------------------------------
def function_of(it: Interpreter, f: Any, node: Any) -> Any:
    if not isinstance(f, Closure | Function):
        func = getattr(node, "func", None)
        name = it.src.segment(it.where(func)) if func is not None else "grad"
        raise it.error("transform_needs_function", argument_node(node, 0), "arguments",
                       name=name[:40], v=describe(f))  # fmt: skip
    return f


def parameter(f: Any, i: int) -> str:
    if isinstance(f, Closure) and i < len(f.params):
        return f.params[i]
    return "x"


def as_input(it: Interpreter, x: Any, call: Any, name: str, f: Any = None) -> Value:
    """x as a value to differentiate at: itself where it is one already (its pass shown on
    it), else a leaf; a fresh leaf too where f also reads x by a name of its own (`a = b`
    and f(t) = t·b: b is a constant to JAX's grad, not the point differentiated at)."""
    if isinstance(x, Pending):
        x = it.materialize(x, call)
    if isinstance(x, Value) and x.requires_grad and not closes_over(it, f, x):
        return x
    data = np.array(it.tensor(x, call).data, dtype=np.float64)
    return it.leaf(data, call, name=name)


def closes_over(it: Interpreter, f: Any, x: Value) -> bool:
    """Does f's body read x by a name from outside it (its scopes, then the program's)?"""
    if not isinstance(f, Closure):
        return False
    outside = {
        n.id
        for n in ast.walk(f.node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in f.own
    }
    scope = f.scope
    while scope is not None:
        if any(same_value(scope.vars[n], x) for n in outside & set(scope.vars)):
            return True
        outside -= set(scope.vars)
        scope = scope.parent
    return any(same_value(it.env[n], x) for n in outside & set(it.env))


def same_value(v: Any, x: Value) -> bool:
    return v is x or (isinstance(v, Pending) and v.node is x)


def is_tree(v: Any) -> bool:
    """A tuple or list of values (JAX's pytree, one level), not a list of numbers."""
    return isinstance(v, dict) or isinstance(v, list | tuple) and not numbers_list(v)


def inputs(
    it: Interpreter, f: Any, args: list[Any], argnums: Any, call: Any, made: Any = None
) -> tuple:
    """The arguments with those at `argnums` made inputs; the inputs flat; their shape.
    `made`: the call that made the transform, where a wrong argnums is shown."""
    nums = argnums if isinstance(argnums, tuple | list) else (argnums,)
    args = list(args)
    flat: list[Any] = []
    shape: list[int | tuple[Any, ...] | None] = []
    for i in nums:
        if not isinstance(i, int) or isinstance(i, bool) or not -len(args) <= i < len(args):
            where = keyword_node(made, "argnums") if made is not None else None
            where = getattr(where, "value", None) or made or call
            raise it.error("transform_argnums", where, "arguments", i=str(i), n=len(args))
        a, name = args[i], parameter(f, i % len(args))
        if isinstance(a, dict):  # JAX's pytree of named parameters: {"W": W, "b": b}
            made_of = {k: as_input(it, x, call, str(k), f) for k, x in a.items()}
            args[i] = made_of
            shape.append(tuple(made_of))
            flat.extend(made_of.values())
        elif is_tree(a):
            made = [as_input(it, x, call, f"{name}[{j}]", f) for j, x in enumerate(a)]
            args[i] = type(a)(made)
            shape.append(len(made))
            flat.extend(made)
        else:
            args[i] = as_input(it, a, call, name, f)
            shape.append(None)
            flat.append(args[i])
    return args, flat, shape


def regroup(found: list[Any], shape: list[Any], argnums: Any) -> Any:
    """Flat results in the inputs' shape: one per argnum (a tuple of them for a tuple)."""
    out, k = [], 0
    for n in shape:
        if n is None:
            out.append(found[k])
            k += 1
        elif isinstance(n, tuple):  # a dict's keys: the grads under them, sorted as JAX's
            got = dict(zip(n, found[k : k + len(n)], strict=True))  # pytrees sort a dict's keys
            out.append({key: got[key] for key in sorted(got, key=str)})
            k += len(n)
        else:
            out.append(tuple(found[k : k + n]))
            k += n
    return tuple(out) if isinstance(argnums, tuple | list) else out[0]


def run_inside(it: Interpreter, f: Any, args: list[Any], kwargs: dict[str, Any], call: Any) -> Any:
    """f's value, computed as the body of a transform (a transform in it builds a graph)."""
    it.passes.transforming += 1
    try:
        return call_value(it, f, args, kwargs, call)
    finally:
        it.passes.transforming -= 1


def output(it: Interpreter, y: Any, f: Any, call: Any) -> Value:
    return it.tensor(y, call, Msg("what_result", {"name": getattr(f, "name", "f")}))


def split_aux(it: Interpreter, y: Any, has_aux: Any, call: Any) -> tuple[Any, Any]:
    if not has_aux:
        return y, None
    if not (isinstance(y, tuple | list) and len(y) == 2):
        raise it.error("transform_aux", call, "arguments", v=describe(y))
    return y[0], y[1]


def shown(it: Interpreter, v: Value, call: Any, graph: bool) -> Value:
    """A result given back: the node itself inside a transform, its numbers at the top."""
    return v if graph else it.constant(np.array(v.data), call)


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


# --- torch.autograd.functional: f and its inputs in one call ---------------------------------
def af_inputs(it: Interpreter, inputs: Any) -> tuple[list[Any], Any]:
    """The inputs as arguments, and the argnums that gives PyTorch's shape of the answer."""
    if isinstance(inputs, tuple | list) and not numbers_list(inputs):
        return list(inputs), tuple(range(len(inputs)))
    return [inputs], 0


@special("af_jacobian", "func", "inputs", create_graph=False, strict=False, vectorize=False,
         strategy="reverse-mode", usage="jacobian(func, inputs)")  # fmt: skip
def af_jacobian(it: Interpreter, node: Any, func: Any, inputs: Any, create_graph: Any,
                strict: Any, vectorize: Any, strategy: Any) -> Any:  # fmt: skip
    args, nums = af_inputs(it, inputs)
    how = "jacfwd" if strategy == "forward-mode" else "jacrev"
    return call_value(it, jacobian_function(function_of(it, func, node), nums, False, how),
                      args, {}, node)  # fmt: skip


@special("af_hessian", "func", "inputs", create_graph=False, strict=False, vectorize=False,
         outer_jacobian_strategy="reverse-mode", usage="hessian(func, inputs)")  # fmt: skip
def af_hessian(it: Interpreter, node: Any, func: Any, inputs: Any, create_graph: Any,
               strict: Any, vectorize: Any, outer_jacobian_strategy: Any) -> Any:  # fmt: skip
    args, nums = af_inputs(it, inputs)
    return hessian_of(it, function_of(it, func, node), args, nums, node)[1]


@special("af_vjp", "func", "inputs", "v?", create_graph=False, strict=False,
         usage="vjp(func, inputs, v)")  # fmt: skip
def af_vjp(it: Interpreter, node: Any, func: Any, inputs: Any, v: Any, create_graph: Any,
           strict: Any) -> Any:  # fmt: skip
    """torch.autograd.functional.vjp → (func(inputs), vᵀJ) (v may be left out for a scalar)."""
    f = function_of(it, func, node)
    graph = it.passes.transforming > 0
    args, nums = af_inputs(it, inputs)
    args, xs, shape = inputs_of(it, f, args, nums, node)
    y = output(it, run_inside(it, f, args, {}, node), f, node)
    seed = None if v is None else cotangent(it, v, y, node)
    if seed is None and y.data.size != 1:
        raise it.error("backward_not_scalar", node, "backward", name="func(inputs)",
                       shape=str(tuple(y.data.shape)))  # fmt: skip
    return shown(it, y, node, graph), regroup(pullback(it, y, xs, seed, node, graph), shape, nums)


inputs_of = inputs


@special("af_jvp", "func", "inputs", "v?", create_graph=False, strict=False,
         usage="jvp(func, inputs, v)")  # fmt: skip
def af_jvp(it: Interpreter, node: Any, func: Any, inputs: Any, v: Any, create_graph: Any,
           strict: Any) -> Any:  # fmt: skip
    """torch.autograd.functional.jvp → (func(inputs), J·v)."""
    f = function_of(it, func, node)
    graph = it.passes.transforming > 0
    args, nums = af_inputs(it, inputs)
    args, xs, _ = inputs_of(it, f, args, nums, node)
    y = output(it, run_inside(it, f, args, {}, node), f, node)
    if v is None:
        if not all(x.data.size == 1 for x in xs):
            raise it.error("transform_tangents", node, "arguments", n=len(xs), m=0)
        ones = tuple(np.ones(x.data.shape) for x in xs)
        v = ones if isinstance(nums, tuple) else ones[0]
    ts = list(v) if isinstance(nums, tuple) else [v]
    ts = [it.constant(t, node) if isinstance(t, np.ndarray) else t for t in ts]
    (tout,) = push(it, [y], xs, ts, node, graph)
    return shown(it, y, node, graph), tout


def hessian_vector(name: str) -> None:
    @special(name, "func", "inputs", "v?", create_graph=False, strict=False,
             usage=f"{name[3:]}(func, inputs, v)")  # fmt: skip
    def run(it: Interpreter, node: Any, func: Any, inputs: Any, v: Any, create_graph: Any,
            strict: Any) -> Any:  # fmt: skip
        """hvp → (func(inputs), H·v); vhp → (func(inputs), vᵀH): the same numbers, H being
        symmetric; each is the Jacobian of the gradient applied to v."""
        f = function_of(it, func, node)
        args, nums = af_inputs(it, inputs)
        y, H = hessian_of(it, f, args, nums, node)
        vs = list(v) if isinstance(nums, tuple) else [v]
        Hs = H if isinstance(nums, tuple) else ((H,),)
        xs_shape = [np.asarray(it.tensor(a, node).data).shape for a in args]
        out = []
        for i in range(len(Hs)):
            total = np.zeros(xs_shape[i])
            for j in range(len(Hs)):
                vj = np.array(it.tensor(vs[j], node).data, dtype=np.float64)
                h = np.array(Hs[i][j].data).reshape(total.size, vj.size)
                total = total + (h @ vj.reshape(-1)).reshape(total.shape)
            out.append(it.constant(total, node))
        result = tuple(out) if isinstance(nums, tuple) else out[0]
        return it.constant(np.array(y.data), node), result


hessian_vector("af_hvp")
hessian_vector("af_vhp")


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


# Module spellings of these (names.py adds them to MODULES).
TORCH = {"allclose": "allclose", "diag": "diag"}
TORCH_FUNC = {
    "grad": "func_grad", "grad_and_value": "func_grad_and_value", "vjp": "func_vjp",
    "jvp": "func_jvp", "jacrev": "func_jacrev", "jacfwd": "func_jacfwd",
    "hessian": "func_hessian", "vmap": "func_vmap",
}  # fmt: skip
AUTOGRAD_FUNCTIONAL = {
    "jacobian": "af_jacobian", "hessian": "af_hessian", "vjp": "af_vjp", "jvp": "af_jvp",
    "hvp": "af_hvp", "vhp": "af_vhp",
}  # fmt: skip
JAX = {
    "grad": "func_grad", "value_and_grad": "func_value_and_grad", "vjp": "func_vjp",
    "jvp": "func_jvp", "linearize": "jax_linearize", "jacfwd": "func_jacfwd",
    "jacrev": "func_jacrev", "jacobian": "func_jacrev", "hessian": "func_hessian",
    "vmap": "jax_vmap", "jit": "jax_jit",
}  # fmt: skip
