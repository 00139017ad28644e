"""The tensors a program makes, as PyTorch and JAX write them, with the values the run used:
`randn(2, 3)` is a draw of NumPy's generator in program order (`rng.standard_normal((2, 3))`)
as gradtrace draws it, `arange(0, 1, 0.25)` NumPy's grid, `torch.arange(…)` torch's own;
and what runs a pass or an update (`grad(L, x)`, `torch.autograd.grad`, `torch.no_grad()`,
the optimizers), which only PyTorch's code writes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.lessons.code.arguments import DRAWS, Args, requires, shape
from engine.lessons.code.text import ATOM, IFEXP, floats_text, literal

if TYPE_CHECKING:
    from engine.lessons.code.writer import Writer

BOUND = {"full": ("size", "fill_value"), "arange": ("start", "end", "step"),
         "linspace": ("start", "end", "steps"), "eye": ("n", "m"), "randn_like": ("x",),
         "rand_like": ("x",), "tensor": ("data",), "Tensor": ("data",)}  # fmt: skip
RANDOM = {"randn": "standard_normal", "rand": "random", "randn_like": "standard_normal",
          "rand_like": "random"}  # fmt: skip


def numpy_text(w: Writer, node: ast.expr) -> str | None:
    """The NumPy expression that makes the value of a constructor call exactly as gradtrace
    made it (a draw, a grid, a literal), or None when `node` is no such call."""
    lit = literal(node)
    if lit is not None:
        return floats_text(lit)
    if not isinstance(node, ast.Call):
        return None
    kind, what = w.ctx.callee(node.func)
    if kind == "method" and what in DRAWS:  # the program's own generator: its own draws
        return f"{w.expr(node.func.value, ATOM)}.{what}({w.arguments(node)})"  # type: ignore[attr-defined]
    if kind != "library":
        return None
    names = BOUND.get(what, ("*dims",))
    a = Args(w, node, names)
    if what in ("randn", "rand"):
        return f"rng.{RANDOM[what]}({shape(w, a)})"
    if what in ("randn_like", "rand_like"):
        return f"rng.{RANDOM[what]}({w.expr(a.values['x'], ATOM)}.shape)"
    if what in ("zeros", "ones"):
        return f"np.{what}({shape(w, a)})"
    if what == "full":
        return f"np.full({w.expr(a.values['size'], IFEXP)}, {w.expr(a.values['fill_value'])})"
    if what in ("arange", "linspace", "eye"):
        bounds = ", ".join(w.expr(a.values[k], IFEXP) for k in names if k in a.values)
        return f"np.arange({bounds}, dtype=float)" if what == "arange" else f"np.{what}({bounds})"
    if what in ("tensor", "Tensor") and "data" in a.values:
        return numpy_text(w, a.values["data"])
    return None


def made(w: Writer, node: ast.Call, a: Args) -> str:
    """A tensor a program makes, as a constant (or a leaf, with requires_grad=True)."""
    return made_text(w, node, requires(w, a))


def made_text(w: Writer, node: ast.Call, grad: str) -> str:
    """`grad` is ", requires_grad=True" for a leaf, else ""."""
    what = w.ctx.callee(node.func)[1]
    if what in ("tensor", "Tensor"):
        return tensor_text(w, node, grad)
    if what == "arange" and not grad and ints(w, node):  # whole numbers: a tensor of ints
        return f"{'torch' if w.torch else 'jnp'}.{what}({positional(w, node)})"
    if what in ("zeros", "ones"):  # NumPy's and torch's are the same numbers
        dims = Args(w, node, ("*dims",))
        given = positional(w, node, keywords=False) if dims.rest else shape(w, dims)
        return f"torch.{what}({given}{grad})" if w.torch else f"jnp.{what}({shape(w, dims)})"
    if what in ("torch_arange", "torch_linspace", "eye"):  # torch's own grid
        fn = what.removeprefix("torch_")
        return f"{'torch' if w.torch else 'jnp'}.{fn}({positional(w, node)}{grad})"
    numpy = numpy_text(w, node)
    if numpy is None:
        if what not in ("zeros_like", "ones_like"):
            raise w.refuse(node)
        x = w.expr(Args(w, node, ("x",)).values["x"], IFEXP)
        return f"torch.{what}({x}{grad})" if w.torch else f"jnp.{what}({x})"
    return f"torch.tensor({numpy}{grad})" if w.torch else f"jnp.array({numpy})"


def tensor_text(w: Writer, node: ast.Call, grad: str) -> str:
    """torch.tensor(data): numbers written out are floats when a grad is asked for (whole
    numbers alone are a tensor of ints: labels, indices); a NumPy value stays NumPy's."""
    a = Args(w, node, ("data",))
    data = a.values.get("data")
    if data is None:
        raise w.refuse(node)
    lit = literal(data)
    asked = any(k.arg == "requires_grad" and getattr(k.value, "value", None) is True
                for k in node.keywords)  # fmt: skip
    as_floats = grad or asked or w.ctx.callee(node.func)[1] == "Tensor"
    if lit is None and as_floats:
        lit = literal(data, bools=True)  # True/False among them: 1.0/0.0
    if lit is not None:
        inner = floats_text(lit) if as_floats else w.expr(data, IFEXP)
    else:
        inner = numpy_text(w, data) or w.expr(data, IFEXP)
    return f"torch.tensor({inner}{grad})" if w.torch else f"jnp.array({inner})"


def ints(w: Writer, node: ast.Call) -> bool:
    """Did `arange(…)` make whole numbers (a tensor of ints, not a constant of the graph)?"""
    if w.ctx.facts.nodes_at(node):
        return False
    lit = [literal(a) for a in node.args]
    return all(isinstance(v, int) for v in lit) and not any(
        kw.arg == "requires_grad" for kw in node.keywords
    )


def positional(w: Writer, node: ast.Call, keywords: bool = True) -> str:
    """A constructor's arguments as written, but requires_grad and those every value has
    here (dtype, device)."""
    parts = [w.item(a) for a in node.args]
    if keywords:
        parts += [f"{k.arg}={w.expr(k.value, IFEXP)}" for k in node.keywords
                  if k.arg not in ("requires_grad", "dtype", "device", None)]  # fmt: skip
    return ", ".join(parts)


# --- passes and updates: PyTorch's code only --------------------------------------------
def torch_only(w: Writer, node: ast.Call) -> None:
    if not w.torch:
        raise w.refuse(node)


def language_grad(w: Writer, node: ast.Call, a: Args) -> str:
    """grad(L, x): ∂L/∂x as a graph, to differentiate again (create_graph=True)."""
    torch_only(w, node)
    f, x = a.get("f"), a.get("x")
    if f is not None and x is None:
        return transform(w, node, a)
    if f is None or x is None or set(a.values) - {"f", "x"}:
        raise w.refuse(node)
    return f"torch.autograd.grad({w.expr(f, IFEXP)}, {w.expr(x, IFEXP)}, create_graph=True)[0]"


def transform(w: Writer, node: ast.Call, a: Args) -> str:
    """grad(f), jax.grad(f), torch.func.grad(f): the function x ↦ ∂f(x)/∂x (its calls:
    calls.transformed)."""
    torch_only(w, node)
    f = a.get("f")
    if f is None or set(a.values) - {"f", "argnums", "has_aux"}:
        raise w.refuse(node)
    options = "".join(f", {k}={w.expr(v, IFEXP)}" for k, v in a.values.items() if k != "f")
    return f"torch.func.grad({w.expr(f, IFEXP)}{options})"


def written(prefix: str) -> Callable[[Writer, ast.Call, Args], str]:
    """A call PyTorch spells as the program does, under its own name."""

    def spell(w: Writer, node: ast.Call, a: Args) -> str:
        torch_only(w, node)
        return f"{prefix}({w.arguments(node)})"

    return spell


def generator(w: Writer, node: ast.Call, a: Args) -> str:
    """NumPy's generator; without a seed, gradtrace's 0 (a link always shows one run)."""
    return f"np.random.default_rng({w.arguments(node) or '0'})"


def refused(w: Writer, node: ast.Call, a: Args) -> str:
    raise w.refuse(node)


def optimizer(w: Writer, node: ast.Call, a: Args) -> str:
    torch_only(w, node)
    return f"torch.optim.{w.ctx.callee(node.func)[1]}({w.arguments(node)})"


ANY = ("*args",)  # arguments written as they are
MADE = {
    **{k: (made, ("*args",)) for k in ("tensor", "Tensor", "zeros", "ones", "randn", "rand", "full",
                              "zeros_like", "ones_like", "randn_like", "rand_like", "arange",
                              "linspace", "torch_arange", "torch_linspace", "eye")},
    "grad": (language_grad, ("f", "x")),
    "autograd_grad": (written("torch.autograd.grad"), ANY),
    "no_grad": (written("torch.no_grad"), ANY), "enable_grad": (written("torch.enable_grad"), ANY),
    "SGD": (optimizer, ANY), "Adam": (optimizer, ANY), "default_rng": (generator, ANY),
    "jax_grad": (transform, ("f",)), "func_grad": (transform, ("f",)),
    **{k: (refused, ANY) for k in ("seed", "print_settings", "default_dtype")},
}  # fmt: skip
