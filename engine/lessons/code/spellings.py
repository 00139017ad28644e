"""The language's ops as PyTorch and JAX spell them (`exp(x)` → `torch.exp(x)` / `jnp.exp(x)`,
`mse(p, y)` → `F.mse_loss(p, y)`, `sum(x, axis=1)` → `x.sum(dim=1)`): one writer per library
function, by its library name (engine/language/library.py), each a function of the writer,
the call and its arguments bound by name (arguments.py).

In PyTorch a number where a tensor is needed (`torch.exp(2.0)`, `torch.maximum(x, 0.5)`) is
written `torch.tensor(…)`: the language makes every number a constant tensor there, and the
run says which arguments were numbers.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.autograd import ops
from engine.lessons.code.arguments import Args, axis, keyword, shape, tensor
from engine.lessons.code.grad_fns import jax_name, torch_name
from engine.lessons.code.text import ATOM, IFEXP, TERM, floats_text, literal

if TYPE_CHECKING:
    from engine.lessons.code.writer import Writer

Spelling = Callable[["Writer", ast.Call, Args], "str | tuple[str, int]"]


def elementwise(cls: type[ops.Op]) -> Spelling:
    def spell(w: Writer, node: ast.Call, a: Args) -> str:
        x = a.values["x"]
        return f"{torch_name(cls) if w.torch else jax_name(cls)}({tensor(w, x, node, 0)})"

    return spell


def two(cls: type[ops.Op]) -> Spelling:
    def spell(w: Writer, node: ast.Call, a: Args) -> str:
        x, y = (tensor(w, a.values[k], node, i) for i, k in enumerate(("a", "b")))
        return f"{torch_name(cls) if w.torch else jax_name(cls)}({x}, {y})"

    return spell


def matmul(w: Writer, node: ast.Call, a: Args) -> tuple[str, int]:
    return f"{w.expr(a.values['a'], TERM)} @ {w.expr(a.values['b'], TERM + 1)}", TERM


def power(w: Writer, node: ast.Call, a: Args) -> str:
    x, e = a.values["x"], a.values["exponent"]
    if not w.torch:
        return f"jnp.power({w.expr(x, IFEXP)}, {w.expr(e, IFEXP)})"
    return f"{tensor(w, x, node, 0, ATOM)}**{w.expr(e, ATOM)}"


def square(w: Writer, node: ast.Call, a: Args) -> str:
    fn = "torch.square" if w.torch else "jnp.square"
    return f"{fn}({tensor(w, a.values['x'], node, 0)})"


def mse(w: Writer, node: ast.Call, a: Args) -> str:
    p, y = a.values["p"], a.values["y"]
    if w.torch:  # F.mse_loss is the language's mse: one op, pasted back
        return f"F.mse_loss({tensor(w, p, node, 0)}, {tensor(w, y, node, 1)})"
    return f"jnp.mean(({w.expr(p, TERM)} - {w.expr(y, TERM)})**2)"


def reduction(w: Writer, node: ast.Call, a: Args) -> str:
    return reduce_text(w, w.ctx.callee(node.func)[1], a.values["x"], node, a)


def reduce_text(w: Writer, name: str, x: ast.expr, node: ast.AST, a: Args) -> str:
    if w.torch:
        return f"{tensor(w, x, node, 0, ATOM)}.{name}({axis(w, a).removeprefix(', ')})"
    return f"jnp.{name}({w.expr(x, IFEXP)}{axis(w, a)})"


def norm(w: Writer, node: ast.Call, a: Args) -> str:
    fn = "torch.linalg.norm" if w.torch else "jnp.linalg.norm"
    return f"{fn}({tensor(w, a.values['x'], node, 0)}{axis(w, a)})"


def softmax(w: Writer, node: ast.Call, a: Args) -> str:
    kind = "log_softmax" if w.ctx.callee(node.func)[1] == "log_softmax" else "softmax"
    dim = w.expr(a.values["axis"], IFEXP) if a.get("axis") is not None else "-1"
    if w.torch:
        return f"torch.{kind}({tensor(w, a.values['z'], node, 0)}, dim={dim})"
    return f"jax.nn.{kind}({w.expr(a.values['z'], IFEXP)}, axis={dim})"


def labels(w: Writer, t: ast.expr) -> str:
    lit = literal(t)
    if lit is not None:
        return f"torch.tensor({lit!r})" if w.torch else f"jnp.array({lit!r})"
    return w.expr(t, IFEXP)


def cross_entropy(w: Writer, node: ast.Call, a: Args) -> str:
    z, t = a.values["z"], labels(w, a.values["t"])
    if w.torch:
        return f"F.cross_entropy({tensor(w, z, node, 0)}, {t})"
    op = w.ctx.facts.op_at(node)
    zt = w.expr(z, ATOM)
    if op is not None and op.inputs[0].data.ndim == 1:
        return f"-jax.nn.log_softmax({zt})[{t}]"
    return f"-jnp.mean(jax.nn.log_softmax({zt})[jnp.arange({zt}.shape[0]), {t}])"  # ERRATA 3


def reshape(w: Writer, node: ast.Call, a: Args) -> str:
    x = a.values["x"]
    if w.torch:
        return f"{tensor(w, x, node, 0, ATOM)}.reshape({', '.join(w.item(d) for d in a.rest)})"
    return f"jnp.reshape({w.expr(x, IFEXP)}, {shape(w, a)})"


def permutation(w: Writer, node: ast.AST) -> str | None:
    """The axes a transpose the run made moved, as `(1, 0)`."""
    op = w.ctx.facts.op_at(node)
    if op is None or op.op is None or op.op.name != "transpose":
        return None
    order = op.op.permutation(op.inputs[0].data.ndim)  # type: ignore[attr-defined]
    if not order:
        return "(())"  # a number's: no axes
    return "(" + ", ".join(map(str, order)) + ("," if len(order) == 1 else "") + ")"


def transpose(w: Writer, node: ast.Call, a: Args) -> str:
    x = tensor(w, a.values["x"], node, 0, ATOM)
    order = permutation(w, node)
    if a.rest and order is None:
        order = "(" + ", ".join(w.item(d) for d in a.rest) + ")"
    if order is None:
        return f"{x}.T"
    return f"{x}.permute{order}" if w.torch else f"jnp.transpose({x}, {order})"


def swapaxes(w: Writer, node: ast.Call, a: Args) -> str:
    x = tensor(w, a.values["x"], node, 0, ATOM)
    order = permutation(w, node)
    if order is not None:
        return f"{x}.permute{order}" if w.torch else f"jnp.transpose({x}, {order})"
    i, j = w.expr(a.values["a"], IFEXP), w.expr(a.values["b"], IFEXP)
    return f"{x}.transpose({i}, {j})" if w.torch else f"jnp.swapaxes({x}, {i}, {j})"


def join(cls: type[ops.Op]) -> Spelling:
    def spell(w: Writer, node: ast.Call, a: Args) -> str:
        xs = a.values["xs"]
        if isinstance(xs, ast.List | ast.Tuple):
            inner = ", ".join(tensor(w, x, node, i) for i, x in enumerate(xs.elts))
            items = f"[{inner}]"
        else:
            items = w.expr(xs, IFEXP)
        where = keyword(w, a, "axis", "dim" if w.torch else "axis", 0)
        return f"{torch_name(cls) if w.torch else jax_name(cls)}({items}{where})"

    return spell


def clamp(w: Writer, node: ast.Call, a: Args) -> str:
    lo, hi = a.get("min"), a.get("max")
    given = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None and not is_none(v)}
    if w.torch:
        bounds = ", ".join(f"{k}={w.expr(v, IFEXP)}" for k, v in given.items())
        return f"torch.clamp({tensor(w, a.values['x'], node, 0)}, {bounds})"
    lo_text, hi_text = (w.expr(given[k], IFEXP) if k in given else "None" for k in ("min", "max"))
    return f"jnp.clip({w.expr(a.values['x'], IFEXP)}, {lo_text}, {hi_text})"


def is_none(v: ast.expr | None) -> bool:
    return v is None or (isinstance(v, ast.Constant) and v.value is None)


def const(w: Writer, node: ast.Call, a: Args) -> str:
    x = a.values["x"]
    lit = literal(x)
    if lit is not None:  # a tensor written out, without requires_grad: a constant
        return f"torch.tensor({floats_text(lit)})" if w.torch else f"jnp.array({floats_text(lit)})"
    if w.torch:
        return f"{w.expr(x, ATOM)}.detach()"
    return f"jax.lax.stop_gradient({w.expr(x, IFEXP)})"


OPS: dict[str, tuple[Spelling, tuple[str, ...]]] = {
    **{f: (elementwise(cls), ("x",)) for f, cls in ops.UNARY_FUNCTIONS.items()},
    "maximum": (two(ops.Maximum), ("a", "b")), "minimum": (two(ops.Minimum), ("a", "b")),
    "max": (two(ops.Maximum), ("a", "b")), "min": (two(ops.Minimum), ("a", "b")),
    "matmul": (matmul, ("a", "b")), "pow": (power, ("x", "exponent")),
    "square": (square, ("x",)), "mse": (mse, ("p", "y")),
    "sum": (reduction, ("x", "axis", "keepdims")), "mean": (reduction, ("x", "axis", "keepdims")),
    "norm": (norm, ("x", "ord", "axis", "keepdims")),
    "softmax": (softmax, ("z", "axis")), "log_softmax": (softmax, ("z", "axis")),
    "cross_entropy": (cross_entropy, ("z", "t")), "reshape": (reshape, ("x", "*shape")),
    "transpose": (transpose, ("x", "*axes")), "swapaxes": (swapaxes, ("x", "a", "b")),
    "cat": (join(ops.Cat), ("xs", "axis")), "stack": (join(ops.Stack), ("xs", "axis")),
    "clamp": (clamp, ("x", "min", "max")), "const": (const, ("x",)), "detach": (const, ("x",)),
}  # fmt: skip
