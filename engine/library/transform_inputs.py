"""What a functional transform runs: the function given (a def, a lambda, a transform of
either), its inputs made leaves (argnums, pytrees of lists, tuples and dicts), and its output
checked and split (has_aux). Shared by every transform (functional.py, functional_torch.py,
vmap.py)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.value import Value
from engine.errors import Msg
from engine.language.calls import argument_node, call_value, keyword_node
from engine.language.values import Closure, Function, Pending, describe, numbers_list

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
