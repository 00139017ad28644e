"""The attributes and methods of a program's values: a tensor's (`x.sum(1)`, `x.T`,
`x.shape`, `x.grad`, `x.item()`, `x.backward()`, `x.requires_grad_()`, the in-place updates
`w.sub_(…)`, `w.data`), a grad's (`w.grad.zero_()`), a list's `append`, a string's `format`,
and those of the library's objects (an optimizer's `step`, NumPy's generator's draws).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.fma import fma
from engine.autograd.ops import METHODS as OP_METHODS
from engine.autograd.ops import UNARY_FUNCTIONS, shape_text
from engine.autograd.value import Value
from engine.errors import Msg
from engine.language.sequences import items_of
from engine.language.values import Array, Function, Grad, Ints, Opaque, Pending, describe
from engine.library import objects, transforms
from engine.library.builtins import one_number
from engine.library.functions import FUNCTIONS
from engine.library.printing import format_method
from engine.library.transforms import array_as

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

# A tensor's methods and the library function each is, called with the tensor first.
TENSOR_METHODS = {
    **{m: m for m in OP_METHODS},
    "dot": "matmul", "matmul": "matmul", "mm": "matmul", "pow": "pow", "view": "reshape",
    "permute": "transpose", "clamp": "clamp", "clip": "clamp", "maximum": "maximum",
    "minimum": "minimum", "norm": "norm", "square": "square", "detach": "const", "mean": "mean",
    "log_softmax": "log_softmax", "softmax": "softmax", "sum": "sum",
}  # fmt: skip
CONVERSIONS = ("double", "float", "clone", "cpu", "contiguous")  # every value is float64 here
IN_PLACE = {"add_": "+", "sub_": "-", "mul_": "*", "div_": "/"}
EXTREMES = ("max", "min", "argmax", "argmin")
IN_PLACE_OTHER = ("copy_", "fill_", "zero_", "normal_", "uniform_")


def tensor_attribute(it: Interpreter, v: Value | Pending, attr: str, node: Any) -> Any:
    if attr == "grad":
        return Grad(it.tensor(v, node) if isinstance(v, Pending) else v)
    if attr in ("T", "mT"):
        return FUNCTIONS["transpose"].run(it, [v], {}, node)
    if attr == "data":
        return data_view(it, v, node)
    if attr in ("shape", "requires_grad", "is_leaf", "ndim", "dtype", "grad_fn"):
        return property_of(it, it.tensor(v, node), attr)
    if attr in EXTREMES:  # x.max(dim), x.argmax(): engine/library/extremes.py
        from engine.library.transforms import SPECIAL

        return SPECIAL[("torch_" if it.torch else "np_") + attr].bind(v)
    if attr in TENSOR_METHODS:
        name = TENSOR_METHODS[attr]
        if attr == "transpose" and it.torch:
            name = "swapaxes"
        return FUNCTIONS[name].bind(v)
    if attr == "t":
        return FUNCTIONS["t"].bind(v)
    if attr in CONVERSIONS:
        return Function(attr, conversion).bind(v)
    if attr in transforms.TENSOR:
        return transforms.TENSOR[attr].bind(v)
    if attr in IN_PLACE or attr in IN_PLACE_OTHER or attr[:-1] in UNARY_FUNCTIONS:
        return Function(attr, in_place).bind(v)
    raise unknown_attribute(it, attr, node)


def unknown_attribute(it: Interpreter, attr: str, node: Any) -> Any:
    """A tensor's attribute the language lacks: the closest method named, if there is one."""
    from engine.language.source import close_match

    known = [*TENSOR_METHODS, *EXTREMES, *transforms.TENSOR, "T", "shape", "grad", "data", "t"]
    hint = close_match(attr[:40], known)
    if hint is not None:
        return it.error("unknown_method", node, "unknown_method", name=attr[:40], hint=hint)
    return it.error("attribute_access", node, "attribute", attr=attr[:40])


def conversion(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    """`.double()`, `.float()`: every value is float64 already."""
    if len(args) > 1 or kwargs:
        raise it.error("no_arguments", node, "arguments", name=getattr(node.func, "attr", ""))
    return args[0]


def property_of(it: Interpreter, v: Value, attr: str) -> Any:
    if attr == "shape":
        return transforms.shape_of(it, v.data.shape)
    if attr == "ndim":
        return v.data.ndim
    if attr == "requires_grad":
        return v.requires_grad
    if attr == "is_leaf":
        return v.op is None or not v.requires_grad
    if attr == "dtype":
        return Opaque("dtype", {"name": "torch.float64" if it.torch else "float64"})
    return None if v.op is None else Opaque("grad_fn", {"node": v})


def data_view(it: Interpreter, v: Any, node: Any) -> Value:
    """`w.data`: the same numbers, cut from the graph (an update through it changes w)."""
    t = it.tensor(v, node)
    view = Value(t.data, kind="const")
    it.passes.views[view.seq] = t
    return view


def in_place(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    """`w.sub_(lr * w.grad)`, `w.copy_(v)`, `w.zero_()`: w's numbers change in place, inside
    `torch.no_grad()` (or through `.data`); w stays the same leaf."""
    from engine.language.statements import update_in_place

    name = getattr(node.func, "attr", "") or getattr(node.func, "id", "")
    if not args:  # torch.sin_() of nothing
        raise it.error("library_usage", node, "arguments", name=name, usage=f"torch.{name}(x)")
    owner, rest = args[0], args[1:]
    seen = it.passes.views.get(getattr(owner, "seq", -1))  # `w.data.sub_(…)`: not recorded
    owner = it.tensor(owner, node) if seen is None else seen
    if seen is None and it.grad_enabled and owner.requires_grad:
        given = getattr(node, "args", [])  # torch.sin_(a): the tensor is the call's first
        text = it.src.segment(it.where(given[0] if len(given) == len(args) else node.func))
        if owner.kind == "leaf":
            raise it.error("leaf_in_place", node, "in_place", name=text)
        raise it.error("in_place_graph", node, "in_place", name=owner.name or text, attr=name)
    counted = seen is None  # through `.data`, the version stays (torch's .data is untracked)
    if name.endswith("_") and name[:-1] in UNARY_FUNCTIONS:  # x.exp_(), torch.sin_(x)
        with it.no_grad():
            data = it.op(UNARY_FUNCTIONS[name[:-1]](), (owner,), node).data
        it.passes.updated(owner, data, counted)
    elif name == "zero_":
        it.passes.updated(owner, np.zeros(owner.data.shape), counted)
    elif name == "fill_":
        fill = one_number(it, rest[0], node)
        it.passes.updated(owner, np.full(owner.data.shape, fill), counted)
    elif name in ("normal_", "uniform_"):  # torch's generator's numbers (draws.py)
        from engine.library import draws

        drawn = draws.fill(it, name, owner.data.shape, rest, kwargs, node)
        it.passes.updated(owner, drawn, counted)
    elif name == "copy_":
        source = it.tensor(rest[0], node).data
        data = np.broadcast_to(source, owner.data.shape).astype(np.float64)
        it.passes.updated(owner, data, counted)
    else:
        import ast

        op = {"+": ast.Add(), "-": ast.Sub(), "*": ast.Mult(), "/": ast.Div()}[IN_PLACE[name]]
        value = rest[0]
        if "alpha" in kwargs and IN_PLACE[name] in "+-":  # torch: one fused multiply-add
            alpha = one_number(it, kwargs["alpha"], node)
            other = it.tensor(value, node).data
            scale = alpha if IN_PLACE[name] == "+" else -alpha
            try:
                fits = np.broadcast_shapes(other.shape, owner.data.shape) == owner.data.shape
            except ValueError:
                fits = False
            if not fits:
                raise it.error("in_place_shape", node, "shape", a=shape_text(owner.data.shape),
                               b=shape_text(other.shape))  # fmt: skip
            data = fma(other, scale, owner.data)
            it.passes.updated(owner, data, counted)
            return owner
        if "alpha" in kwargs:
            value = _scaled(it, value, kwargs["alpha"], node)
        update_in_place(it, owner, op, value, node, counted)
    return owner


def _scaled(it: Interpreter, value: Any, alpha: Any, node: Any) -> Any:
    import ast

    from engine.language.expressions import binary

    with it.no_grad():
        return binary(it, ast.Mult(), value, alpha, node)


def grad_attribute(it: Interpreter, g: Grad, attr: str, node: Any) -> Any:
    if it.torch and g.owner.grad is None:  # PyTorch's None has no attributes
        name = g.owner.name or "x"
        raise it.error("grad_none_attribute", node, "invalid", name=name, attr=attr[:40])
    if attr == "zero_":
        return Function("zero_", zero_grad).bind(g)
    if attr == "data":
        return g
    if attr in ("item", "tolist", "numpy"):
        return Function(attr, read_grad).bind(g)
    if attr == "shape":
        return tuple(g.owner.data.shape)
    if g.owner.grad is None:
        raise it.error("grad_is_none", node, "invalid")
    with it.no_grad():
        return tensor_attribute(it, it.tensor(g, node), attr, node)


def zero_grad(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Grad:
    g = args[0]
    if g.owner.grad is not None:
        it.passes.set_grad(g.owner, np.zeros(g.owner.data.shape))
    return g


def read_grad(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    g: Grad = args[0]
    if g.owner.grad is None:
        raise it.error("grad_is_none", node, "invalid")
    data = np.asarray(g.owner.grad, dtype=np.float64)
    return array_as(it, data, getattr(node.func, "attr", "item"), node)


def ints_attribute(it: Interpreter, v: Ints, attr: str, node: Any) -> Any:
    if attr == "shape":
        return tuple(v.data.shape)
    if attr in ("long", "int", "numpy", "clone", "detach"):
        return Function(attr, lambda it, args, kw, node: args[0]).bind(v)
    if attr in ("item", "tolist"):
        return Function(attr, lambda it, args, kw, node: args[0].data.tolist()).bind(v)
    if attr in ("float", "double"):
        return Function(attr, lambda it, a, k, n: it.constant(a[0].data.astype(float), n)).bind(v)
    return tensor_attribute(it, it.tensor(v, node), attr, node)  # computed with: float64


def array_attribute(it: Interpreter, v: Array, attr: str, node: Any) -> Any:
    """A NumPy array's attributes (`a.shape`, `a.T`, `a.tolist()`, `a.sum()`), as NumPy
    gives them; any other is the tensor's, of the same numbers."""
    data = v.data
    if attr in ("shape", "ndim", "size"):
        return tuple(data.shape) if attr == "shape" else int(getattr(data, attr))
    if attr == "T":
        return Array(data.T)
    if attr in ("tolist", "item", "copy", "sum", "mean", "max", "min"):
        return Function(attr, array_method).bind(v)
    return tensor_attribute(it, it.tensor(v, node), attr, node)


def array_method(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    a: Array = args[0]
    name = getattr(node.func, "attr", "")
    if name in ("tolist", "item"):
        return transforms.array_as(it, a.data, name, node)
    if name == "copy":
        return Array(a.data.copy())
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
    reduce: Any = {"max": np.amax, "min": np.amin, "sum": np.sum, "mean": np.mean}[name]
    try:
        with np.errstate(all="ignore"):
            out = reduce(a.data, axis=None if axis is None else it.whole(axis, node))
    except ValueError:  # max of nothing, an axis it lacks
        raise it.error("library_usage", node, "arguments", name=name,
                       usage=f"a.{name}(axis)") from None  # fmt: skip
    return float(out) if np.ndim(out) == 0 else Array(np.asarray(out))


def opaque_attribute(it: Interpreter, v: Opaque, attr: str, node: Any) -> Any:
    methods = objects.OBJECT_METHODS.get(v.kind, {})
    if attr in methods:
        return methods[attr].bind(v)
    raise it.error("attribute_of", node, "attribute", attr=attr[:40], v=describe(v))


def list_method(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> None:
    owner, rest = args[0], args[1:]
    name = getattr(node.func, "attr", "append")
    if len(rest) != 1 or kwargs:
        raise it.error("library_usage", node, "arguments", name=name, usage=f"xs.{name}(v)")
    added = items_of(it, rest[0], node) if name == "extend" else [rest[0]]
    it.check_items(len(owner) + len(added), node)
    owner.extend(added)


def dict_method(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> list:
    """`d.items()`, `d.keys()`, `d.values()` of a dict (JAX's grads of a dict of parameters):
    as lists, in the dict's order."""
    owner, rest = args[0], args[1:]
    name = getattr(node.func, "attr", "items")
    if rest or kwargs:
        raise it.error("library_usage", node, "arguments", name=name, usage=f"d.{name}()")
    it.check_items(len(owner), node)
    if name == "keys":
        return list(owner)
    if name == "values":
        return list(owner.values())
    return [(k, v) for k, v in owner.items()]


def text_method(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> str:
    text, rest = args[0], args[1:]
    name = getattr(node.func, "attr", "format")
    if name == "format":
        return format_method(it, text, rest, kwargs, node)
    if name == "join":
        from engine.library.printing import print_text

        parts = [
            x if isinstance(x, str) else print_text(it, x, node)
            for x in items_of(it, rest[0], node)
        ]
        it.check_chars(sum(map(len, parts)) + len(text) * len(parts), node)
        return text.join(parts)
    return str(getattr(text, name)())


def set_tensor_attribute(it: Interpreter, owner: Any, attr: str, value: Any, node: Any) -> None:
    """`x.requires_grad = True` (x a leaf from now), `x.grad = None`, `w.data = v`."""
    if attr == "requires_grad" and isinstance(owner, Value | Pending):
        transforms.set_requires_grad(it, owner, value, node)
        return
    if isinstance(owner, Pending):
        owner = it.materialize(owner)
    if not isinstance(owner, Value):
        raise it.error("assign_attribute", node, "unsupported", attr=attr[:40], v=describe(owner))
    if attr == "grad":
        if value is None:
            it.passes.set_grad(owner, None)
            return
        if not isinstance(value, Value | Grad | Pending):
            name = owner.name or "x"
            raise it.error("grad_assigned", node, "invalid", name=name, v=describe(value))
        it.passes.set_grad(owner, np.array(it.tensor(value, node).data, dtype=np.float64))
        return
    if attr == "data":
        data = np.array(it.tensor(value, node).data, dtype=np.float64)
        it.passes.updated(owner, data, counted=False)  # `x.data = …`: no version bump
        return
    raise it.error(
        "assign_attribute", node, "unsupported", attr=attr[:40], v=Msg("describe_tensor", {})
    )


__all__ = ["TENSOR_METHODS", "Ints"]
