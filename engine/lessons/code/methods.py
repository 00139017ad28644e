"""Python's builtins, the values' methods and attributes, as PyTorch and JAX write them: a
tensor's op methods are its ops (`x.sum(axis=1)` → `x.sum(dim=1)`, `x.tanh()` →
`torch.tanh(x)`), builtins that are ops on tensors are spelled as ops (`max(a, b)` of tensors →
`torch.maximum(a, b)`; of numbers, Python's `max`), and what PyTorch writes as the program does
(`L.backward()`, `w.grad.zero_()`, `opt.step()`, `xs.append(v)`) stays as it is.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from engine.lessons.code.arguments import DRAWS, Args, tensor
from engine.lessons.code.spellings import OPS, reduce_text
from engine.lessons.code.text import ATOM, IFEXP
from engine.library.methods import TENSOR_METHODS

if TYPE_CHECKING:
    from engine.lessons.code.writer import Writer

# Methods PyTorch has as the language has them, written as they are (JAX has none of them:
# a program that calls one is written for PyTorch only).
AS_WRITTEN = frozenset({
    "backward", "requires_grad_", "retain_grad", "add_", "sub_", "mul_", "div_", "copy_",
    "fill_", "zero_", "step", "zero_grad", "append", "extend", "format", "join", "upper",
    "lower", "strip", "item", "tolist", "size", "dim", "numel", "clone", "cpu", "contiguous",
    "double", "long", "int",
})  # fmt: skip
JAX_TOO = frozenset({"append", "extend", "format", "join", "upper", "lower", "strip", "item",
                     "tolist"})  # fmt: skip
ATTRIBUTES = frozenset({"grad", "data", "shape", "ndim", "requires_grad", "is_leaf", "dtype", "mT"})


def receiver(w: Writer, node: ast.expr) -> str:
    text = w.expr(node, ATOM)
    return f"({text})" if isinstance(node, ast.Constant) and isinstance(node.value, int) else text


def builtin_text(w: Writer, name: str, node: ast.Call) -> str | tuple[str, int]:
    """A builtin: an op on tensors where the run made one, else Python's own."""
    op = w.ctx.facts.op_at(node)
    made = op.op.name if op is not None and op.op is not None else None
    if name == "abs" and made == "abs":
        return f"{'torch' if w.torch else 'jnp'}.abs({tensor(w, node.args[0], node, 0)})"
    if name == "sum" and made == "sum":  # sum(x, 1) of a tensor: its axis second
        a = Args(w, node, ("x", "axis", "keepdims"))
        return reduce_text(w, "sum", a.values["x"], node, a)
    if name in ("max", "min") and made in ("max", "min"):
        return extreme(w, name, node)
    if name == "seed":
        raise w.refuse(node)
    return f"{name}({w.arguments(node)})"


def extreme(w: Writer, name: str, node: ast.Call) -> str:
    """max(a, b) of tensors, or max([a, b, c]): maximum of each in turn."""
    fn = ("torch." if w.torch else "jnp.") + ("maximum" if name == "max" else "minimum")
    items = node.args
    if len(items) == 1 and isinstance(items[0], ast.List | ast.Tuple):
        items = items[0].elts
    if len(items) < 2 or node.keywords or any(isinstance(a, ast.Starred) for a in items):
        raise w.refuse(node)
    text = tensor(w, items[0], node, 0)
    for item in items[1:]:
        text = f"{fn}({text}, {tensor(w, item, node, 1)})"
    return text


def method_text(w: Writer, node: ast.Call) -> str | tuple[str, int]:
    func = node.func
    assert isinstance(func, ast.Attribute)
    attr, owner = func.attr, func.value
    if attr in TENSOR_METHODS or attr == "t":
        name = "transpose" if attr == "t" else str(TENSOR_METHODS[attr])
        if attr == "transpose" and w.ctx.scan.torch:
            name = "swapaxes"  # PyTorch's transpose(a, b) swaps two axes
        spell, names = OPS[name]
        return spell(w, node, Args(w, node, names, first=owner))
    if attr in DRAWS:  # a draw of NumPy's generator: a constant tensor
        draw = f"{receiver(w, owner)}.{attr}({w.arguments(node)})"
        return f"torch.tensor({draw})" if w.torch else f"jnp.array({draw})"
    if attr in ("float", "double"):
        return f"{receiver(w, owner)}.double()" if w.torch else receiver(w, owner)
    if attr == "numpy":  # the numbers, cut from the graph (the language's is a tensor too)
        return f"{receiver(w, owner)}.detach()" if w.torch else receiver(w, owner)
    if not w.torch and attr not in JAX_TOO:
        return jax_method(w, node, attr, owner)
    if attr == "backward" and node.args and w.torch:  # a seed written out: a tensor
        rest = [w.item(a) for a in node.args[1:]] + [
            f"{k.arg}={w.expr(k.value, IFEXP)}" for k in node.keywords if k.arg is not None
        ]  # fmt: skip
        seed = tensor(w, node.args[0], node, 0)
        return f"{receiver(w, owner)}.backward({', '.join([seed, *rest])})"
    if attr in AS_WRITTEN:
        return f"{receiver(w, owner)}.{attr}({w.arguments(node)})"
    raise w.refuse(node)


def jax_method(w: Writer, node: ast.Call, attr: str, owner: ast.expr) -> str:
    """What JAX writes for a tensor's method that is not an op: sizes as attributes, the
    copies and conversions as the value itself."""
    x = receiver(w, owner)
    if attr == "size":
        return f"{x}.shape[{w.expr(node.args[0], IFEXP)}]" if node.args else f"{x}.shape"
    if attr in ("dim", "numel"):
        return f"{x}.{'ndim' if attr == 'dim' else 'size'}"
    if attr in ("clone", "cpu", "contiguous", "long", "int", "requires_grad_"):
        return x
    raise w.refuse(node)


def attribute_of(w: Writer, node: ast.Attribute) -> str:
    """A value's attribute: `x.T` (a permutation of other than two axes is written out: PyTorch
    deprecates `.T` there), `x.grad`, `x.shape`, …"""
    owner = receiver(w, node.value)
    if node.attr == "T":
        from engine.lessons.code.spellings import permutation

        op = w.ctx.facts.op_at(node)
        order = permutation(w, node)
        if w.torch and op is not None and order is not None and op.inputs[0].data.ndim != 2:
            return f"{owner}.permute{order}"
        return f"{owner}.T"
    if node.attr in ATTRIBUTES and (w.torch or node.attr in ("shape", "ndim", "dtype", "mT")):
        return f"{owner}.{node.attr}"
    raise w.refuse(node)
