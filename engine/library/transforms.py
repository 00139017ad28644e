"""What differentiates and updates: `L.backward()`, `torch.autograd.grad`, `jax.grad(f)(x)`
(passes, run where they stand: engine/tracing/passes.py), the language's own `grad(L, x)` and
`grad(f)` (the gradient built as graph nodes, so it can be differentiated again), `no_grad`,
the optimizers (`torch.optim.SGD`, `Adam`: engine/autograd/optim.py), NumPy's generator, and
the settings a pasted notebook makes (`torch.set_printoptions`), which change nothing here.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.ops import OpError
from engine.autograd.value import Value
from engine.errors import Msg
from engine.language.calls import Signature, argument_node, call_value, keyword_node
from engine.language.values import (
    Array,
    Closure,
    Function,
    Grad,
    Ints,
    Opaque,
    Pending,
    Size,
    describe,
)
from engine.library.functions import FUNCTIONS

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


# The library's functions that are not plain ones (passes, optimizers, blocks), by name.
SPECIAL: dict[str, Function] = {}


def special(name: str, *positional: str, usage: str = "", **defaults: Any) -> Any:
    sig = Signature(name, positional, tuple(defaults.items()), usage or f"{name}(…)")

    def register(impl: Any) -> Any:
        def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
            return impl(it, node, **sig.bind(it, args, kwargs, node))

        SPECIAL[name] = Function(name, run)
        return impl

    return register


# --- passes ------------------------------------------------------------------------------
def backward(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> None:
    sig = Signature("backward", ("self", "gradient?"), (("retain_graph", None),
                    ("create_graph", False), ("inputs", None)))  # fmt: skip
    a = sig.bind(it, args, kwargs, node)
    root = it.tensor(a["self"], node)
    seed = None if a["gradient"] is None else it.tensor(a["gradient"], node)
    for kw in ("retain_graph", "create_graph"):
        if not isinstance(a[kw], bool | int | None):
            raise it.error(
                "flag_value", keyword_node(node, kw), "keyword", kw=kw, v=describe(a[kw])
            )
    retain = bool(a["retain_graph"]) if a["retain_graph"] is not None else bool(a["create_graph"])
    it.passes.backward(root, seed, retain, node)


@special("autograd_grad", "outputs", "inputs", "grad_outputs?", retain_graph=None,
         create_graph=False, allow_unused=False, usage="torch.autograd.grad(y, x)")  # fmt: skip
def autograd_grad(
    it: Interpreter, node: Any, outputs: Any, inputs: Any, grad_outputs: Any,
    retain_graph: Any, create_graph: Any, allow_unused: Any,
) -> tuple[Any, ...]:  # fmt: skip
    """torch.autograd.grad: a pass whose grads are returned (a tuple, as PyTorch's), not added
    into the leaves' .grad; with create_graph=True each is a graph, to differentiate again."""
    outs = outputs if isinstance(outputs, list | tuple) else [outputs]
    wrt = inputs if isinstance(inputs, list | tuple) else [inputs]
    if len(outs) != 1:
        raise it.error("autograd_one_output", node, "arguments")
    root = it.tensor(outs[0], node)
    xs = [it.tensor(x, node) for x in wrt]
    g0 = grad_outputs[0] if isinstance(grad_outputs, list | tuple) else grad_outputs
    seed = None if g0 is None else it.tensor(g0, node)
    retain = bool(retain_graph) if retain_graph is not None else bool(create_graph)
    found = it.passes.gradients(root, xs, seed, retain, node)
    results: list[Any] = []
    for i, g in enumerate(found):
        if g is None and not allow_unused:
            raise it.error("autograd_unused", node, "backward", i=i)
        results.append(None if g is None else it.constant(np.array(g), node))
    if create_graph:
        results = list(graph_gradients(it, root, xs, node))
    return tuple(results)


def graph_gradients(it: Interpreter, output: Value, wrt: list[Value], node: Any) -> list[Value]:
    """∂output/∂w as graph nodes (engine/autograd/higher.py), each placed at the call."""
    from engine.autograd.higher import describe as formula
    from engine.autograd.higher import grad

    made: list[Value] = []
    try:
        results = grad(
            output, wrt, on_node=made.append,
            max_new=max(1, it.limits.max_nodes - len(it.registered)),
            max_elements=it.limits.max_tensor_elements,
            max_new_elements=max(1, it.limits.max_total_elements - it.elements),
        )  # fmt: skip
    except OpError as err:
        inner = err.msg
        if err.limit is not None:  # the program's setting, not the part of it left for grad()
            inner = Msg(inner.key, {**inner.params, "max": getattr(it.limits, err.limit)})
        raise it.error("grad_failed", node, err.code, limit=err.limit, inner=inner) from None
    for n in made:
        it.count("ops", node)
        if not np.isfinite(n.data).all():
            raise it.error("grad_not_finite", node, "non_finite")
        it.register(n, node)
        n.text = formula(n) if n.op is not None else None
    for w, r in zip(wrt, results, strict=True):
        it.passes.grads_built.append(
            {"output": output, "wrt": w, "result": r, "nodes": made, "span": it.where(node)}
        )
    return results


@special("grad", "f", "x?", argnums=0, has_aux=False, usage="grad(L, x) or grad(f)")
def language_grad(it: Interpreter, node: Any, f: Any, x: Any, argnums: Any, has_aux: Any) -> Any:
    """grad(L, x): ∂L/∂x built as graph nodes; grad(f): the function x ↦ ∂f(x)/∂x, built so."""
    if argnums != 0 or has_aux:
        where = keyword_node(node, "argnums" if argnums else "has_aux")
        raise it.error("grad_options", where, "keyword")
    if x is None:
        return transform(it, f, node, as_pass=False)
    if isinstance(x, list | tuple) and len(x) == 1:
        x = x[0]
    written = argument_node(node, 1)
    if isinstance(written, ast.List | ast.Tuple) and len(written.elts) == 1:
        written = written.elts[0]
    if not isinstance(written, ast.Name):
        raise it.error("grad_wrt_name", written, "arguments")
    output, wrt = it.tensor(f, node), it.tensor(x, node)
    if not wrt.requires_grad:
        raise it.error("grad_of_constant", node, "arguments")
    return graph_gradients(it, output, [wrt], node)[0]


@special("jax_grad", "f", argnums=0, has_aux=False, usage="jax.grad(f)")
def jax_grad(it: Interpreter, node: Any, f: Any, argnums: Any, has_aux: Any) -> Any:
    """jax.grad(f) and torch.func.grad(f): called at the program's level, a pass (its
    backward steps are the trace's); inside another transform, a graph to differentiate."""
    if argnums != 0 or has_aux:
        where = keyword_node(node, "argnums" if argnums else "has_aux")
        raise it.error("grad_options", where, "keyword")
    return transform(it, f, node, as_pass=True)


def transform(it: Interpreter, f: Any, node: Any, as_pass: bool) -> Function:
    if not isinstance(f, Closure | Function):
        where = argument_node(node, 0)
        raise it.error("grad_needs_function", where, "arguments", v=describe(f))
    name = f"grad({f.name})"

    def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], call: Any) -> Any:
        if not args:
            raise it.error("grad_needs_point", call, "arguments", name=name)
        x = args[0]
        if isinstance(x, Pending):
            x = it.materialize(x, call)  # a leaf already: differentiated where it is
        if not isinstance(x, Value) or not x.requires_grad:
            data = np.array(it.tensor(x, call).data, dtype=np.float64)
            x = it.leaf(data, call, name=first_parameter(f))
        nested = it.passes.transforming
        it.passes.transforming += 1
        try:
            y = call_value(it, f, [x, *args[1:]], kwargs, call)
        finally:
            it.passes.transforming -= 1
        y = it.tensor(y, call, Msg("what_result", {"name": f.name}))
        if y.data.size != 1:
            raise it.error("grad_scalar_output", call, "shape", shape=str(tuple(y.data.shape)))
        if as_pass and not nested:
            (g,) = it.passes.gradients(y, [x], None, False, call)
            return it.constant(np.array(0.0 if g is None else g), call)
        return graph_gradients(it, y, [x], call)[0]

    return Function(name, run)


def first_parameter(f: Any) -> str:
    if isinstance(f, Closure) and f.params:
        return f.params[0]
    return "x"


def array_as(it: Interpreter, data: np.ndarray, how: str, node: Any) -> Any:
    """`item()`, `tolist()`, `numpy()` of a tensor's numbers."""
    if how == "item":
        if data.size != 1:
            raise it.error("item_one_element", node, "shape", shape=str(tuple(data.shape)),
                           n=data.size)  # fmt: skip
        return float(data.reshape(()))
    if how == "tolist":
        it.check_items(data.size, node)
        return data.tolist()
    return Array(np.array(data, dtype=np.float64))  # numpy(): NumPy's array, as NumPy prints


def shape_of(it: Interpreter, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape as the program's library gives it: torch.Size in a PyTorch program."""
    dims = tuple(int(d) for d in shape)
    return Size(dims) if it.torch else dims


# --- tensor methods that are passes or updates ---------------------------------------------
def requires_grad_(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    if len(args) > 2:
        raise it.error("too_many_positional", node, "arguments", name="requires_grad_", n=1,
                       given=len(args) - 1)  # fmt: skip
    flag = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
    return set_requires_grad(it, args[0], flag, node)


def set_requires_grad(it: Interpreter, owner: Any, flag: Any, node: Any) -> Any:
    """`x.requires_grad_(flag)`, `x.requires_grad = flag`: True makes x a leaf from now on;
    False makes a leaf a plain tensor (its grad kept, no later pass adds to it); a computed
    tensor's flag is PyTorch's error."""
    if not isinstance(flag, bool):
        raise it.error("requires_grad_bool_value", node, "invalid", v=describe(flag))
    if isinstance(owner, Pending):
        if flag is False:  # a constant from now: never a leaf of the graph
            owner.node.kind, owner.node.requires_grad = "const", False
            return owner
        return it.materialize(owner)
    if not isinstance(owner, Value):
        raise it.error("not_a_tensor", node, "invalid", what=Msg("what_this", {}),
                       v=describe(owner))  # fmt: skip
    if flag:
        return it.passes.make_leaf(owner, node)
    if owner.requires_grad and owner.kind != "leaf":
        name = owner.name or it.src.segment(it.where(node))
        raise it.error("requires_grad_leaf_only", node, "invalid", name=name)
    it.passes.make_constant(owner)
    return owner


def item(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    v = args[0]
    data = v.node.data if isinstance(v, Pending) else v.data
    return array_as(it, np.asarray(data), getattr(node.func, "attr", "item"), node)


def size(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    if len(args) > 2:
        raise it.error("too_many_positional", node, "arguments", name="size", n=1,
                       given=len(args) - 1)  # fmt: skip
    shape = shape_of(it, it.tensor(args[0], node).data.shape)
    if len(args) > 1:
        axis = it.whole(args[1], node)
        if not -len(shape) <= axis < len(shape):
            raise it.error("no_such_axis", node, "index", axis=axis, shape=str(shape))
        return shape[axis]
    return shape


def retain_grad(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> None:
    it.passes.retained.add(it.tensor(args[0], node).seq)


TENSOR = {
    "backward": Function("backward", backward),
    "requires_grad_": Function("requires_grad_", requires_grad_),
    "item": Function("item", item),
    "tolist": Function("tolist", item),
    "numpy": Function("numpy", item),
    "size": Function("size", size),
    "dim": Function("dim", lambda it, a, k, n: it.tensor(a[0], n).data.ndim),
    "numel": Function("numel", lambda it, a, k, n: int(it.tensor(a[0], n).data.size)),
    "retain_grad": Function("retain_grad", retain_grad),
}


# --- blocks, settings ----------------------------------------------------------------------
@special("no_grad")
def no_grad(it: Interpreter, node: Any) -> Opaque:
    return Opaque("no_grad", {})


@special("enable_grad")
def enable_grad(it: Interpreter, node: Any) -> Opaque:
    return Opaque("enable_grad", {})


def setting(name: str) -> None:
    def run(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> None:
        it.warn("setting_ignored", node, name=it.src.segment(it.where(node.func)))

    SPECIAL[name] = Function(name, run)


setting("print_settings")


@special("jax_config_update", "name", "value")
def jax_config_update(it: Interpreter, node: Any, name: Any, value: Any) -> None:
    """`jax.config.update("jax_enable_x64", True)`: float64, which gradtrace computes in
    always, so it changes nothing; any other setting does nothing, with a warning."""
    if name == "jax_enable_x64" and value is True:
        return
    it.warn("setting_ignored", node, name=it.src.segment(it.where(node.func)))


@special("default_dtype", "dtype")
def default_dtype(it: Interpreter, node: Any, dtype: Any) -> None:
    if not (isinstance(dtype, Opaque) and dtype.state.get("name") in ("torch.float64",
                                                                     "torch.double")):  # fmt: skip
        raise it.error("default_dtype", node, "unsupported")
    it.library_state["torch_double"] = True  # torch's draws are float64's from here (draws.py)


__all__ = ["FUNCTIONS", "SPECIAL", "TENSOR", "Grad", "Ints"]
