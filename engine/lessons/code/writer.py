"""The parsed program's expressions as Python text, for PyTorch or for JAX (the code lesson).

Operators are written with the Python operator each op has in the op registry
(`engine.autograd.ops.OPS`), functions with the framework's own name for them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.ops import OPS
from engine.autograd.value import Value
from engine.language import ir
from engine.language.vocabulary import CONSTRUCTORS, UNARY

# Python's binding strength of each binary operator (a higher one binds tighter).
PREC = {"add": 1, "sub": 1, "mul": 2, "div": 2, "matmul": 2, "pow": 4}
JAX_NN = {"sigmoid", "relu"}  # the elementwise functions JAX has in jax.nn, not jax.numpy


def number_text(v: float) -> str:
    return repr(float(v)) if not float(v).is_integer() or abs(v) >= 1e15 else str(int(v))


def array_text(a: np.ndarray) -> str:
    return repr(np.asarray(a, dtype=np.float64).tolist())


class Writer:
    """Turns the IR into Python text for one framework ("torch" or "jax")."""

    def __init__(
        self, flavour: str, nodes_by_span: dict[Any, Value], names: dict[str, str]
    ) -> None:
        self.flavour = flavour
        self.torch = flavour == "torch"
        self.by_span = nodes_by_span
        self.names = names  # program name -> name in the code (see names.code_names)

    def name(self, name: str) -> str:
        return self.names.get(name, name)

    # static ints ----------------------------------------------------------------------------
    def static(self, s: Any) -> str:
        if isinstance(s, ir.SInt):
            return str(s.value)
        if isinstance(s, ir.SVar):
            return self.name(s.name)
        # A flat chain `1 + 1 + …` may be longer than Python's recursion limit: its left spine
        # is written in a loop.
        spine: list[ir.SBin] = []
        while isinstance(s, ir.SBin):
            spine.append(s)
            s = s.left
        text = self.static(s)
        for node in reversed(spine):
            text = f"({text} {node.op} {self.static(node.right)})"
        return text

    def statics(self, arg: Any) -> str:
        value = arg.value if isinstance(arg, ir.StaticArg) else arg
        parts = value if isinstance(value, tuple) else (value,)
        inner = ", ".join(self.static(p) for p in parts)
        return f"({inner},)" if len(parts) == 1 else f"({inner})"

    def axis(self, a: Any) -> str:
        if a is None:
            return "None"
        if isinstance(a, tuple):
            return "(" + ", ".join(self.static(x) for x in a) + ("," if len(a) == 1 else "") + ")"
        return self.static(a)

    def key(self, parts: tuple[Any, ...]) -> str:
        out = []
        for k in parts:
            if isinstance(k, ir.SSlice):
                text = (self.static(k.start) if k.start else "") + ":"
                text += self.static(k.stop) if k.stop else ""
                text += (":" + self.static(k.step)) if k.step else ""
                out.append(text)
            else:
                out.append(self.static(k))
        return ", ".join(out)

    # expressions ----------------------------------------------------------------------------
    def expr(self, e: Any, prec: int = 0) -> str:
        if isinstance(e, ir.Num):
            return number_text(e.value)
        if isinstance(e, ir.Array):
            return ("torch.tensor(" if self.torch else "jnp.array(") + array_text(e.value) + ")"
        if isinstance(e, ir.Name):
            return self.name(e.id)
        if isinstance(e, ir.Labels):
            v = list(e.value) if isinstance(e.value, tuple) else e.value
            return f"torch.tensor({v})" if self.torch else f"jnp.array({v})"
        if isinstance(e, ir.BinOp):
            return self.binop(e, prec)
        if isinstance(e, ir.Neg):
            text = "-" + self.expr(e.operand, 3)
            return f"({text})" if prec > 3 else text
        if isinstance(e, ir.Index):
            return f"{self.expr(e.value, 9)}[{self.key(e.key)}]"
        if isinstance(e, ir.Call):
            return self.call(e, prec)
        raise ValueError(f"cannot write {type(e).__name__}")

    def binop(self, e: ir.BinOp, prec: int) -> str:
        """A chain of binary operators, written without recursing down its left operands: the
        language lets `x + x + … + x` run to max_nodes terms (only its right operands, and
        everything else, count towards max_depth), far past Python's recursion limit."""
        spine: list[tuple[ir.BinOp, int]] = []  # each operator and the precedence around it
        cur: Any = e
        while isinstance(cur, ir.BinOp):
            spine.append((cur, prec))
            prec = PREC[cur.op] + (1 if cur.op == "pow" else 0)  # what its left operand gets
            cur = cur.left
        text = self.expr(cur, prec)
        for node, around in reversed(spine):
            p = PREC[node.op]
            right = self.expr(node.right, p + (0 if node.op == "pow" else 1))
            symbol = OPS[node.op].operator
            text = f"{text}**{right}" if node.op == "pow" else f"{text} {symbol} {right}"
            if p < around:
                text = f"({text})"
        return text

    def call(self, e: ir.Call, prec: int) -> str:
        f = e.func
        if f in UNARY:
            return f"{self.unary(f)}({self.expr(e.args[0])})"
        if f in CONSTRUCTORS:
            return self.constructor(e, leaf=False)
        write = CALLS.get(f)
        if write is None:
            raise ValueError(f"cannot write {f}")
        return write(self, e, prec)

    def unary(self, f: str) -> str:
        if self.torch:
            return f"torch.{f}"
        return f"jax.nn.{f}" if f in JAX_NN else f"jnp.{f}"

    def receiver(self, e: ir.Call) -> str:
        """The first argument, as the object of a method call (`x.sum()`)."""
        return self.expr(e.args[0], 9)

    def extreme(self, e: ir.Call, prec: int) -> str:
        fn = ("torch." if self.torch else "jnp.") + ("maximum" if e.func == "max" else "minimum")
        return f"{fn}({self.as_tensor(e.args[0])}, {self.as_tensor(e.args[1])})"

    def matmul(self, e: ir.Call, prec: int) -> str:
        text = f"{self.expr(e.args[0], 3)} @ {self.expr(e.args[1], 3)}"
        return f"({text})" if prec > 2 else text

    def mse(self, e: ir.Call, prec: int) -> str:
        return f"(({self.expr(e.args[0], 1)} - {self.expr(e.args[1], 1)})**2).mean()"

    def reduction(self, e: ir.Call, prec: int) -> str:
        kw = dict(e.kwargs)
        axis, keep = kw.get("axis"), bool(kw.get("keepdims", False))
        if self.torch:
            inner = "" if axis is None else f"dim={self.axis(axis)}"
            if keep and axis is not None:
                inner += ", keepdim=True"
            return f"{self.receiver(e)}.{e.func}({inner})"
        inner = "" if axis is None else f", axis={self.axis(axis)}"
        return f"jnp.{e.func}({self.expr(e.args[0])}{inner}{', keepdims=True' if keep else ''})"

    def softmax(self, e: ir.Call, prec: int) -> str:
        axis = self.axis(dict(e.kwargs).get("axis", ir.SInt(-1)))
        if self.torch:
            return f"torch.{e.func}({self.expr(e.args[0])}, dim={axis})"
        return f"jax.nn.{e.func}({self.expr(e.args[0])}, axis={axis})"

    def reshape(self, e: ir.Call, prec: int) -> str:
        if self.torch:
            return f"{self.receiver(e)}.reshape{self.statics(e.args[1])}"
        return f"jnp.reshape({self.expr(e.args[0])}, {self.statics(e.args[1])})"

    def transpose(self, e: ir.Call, prec: int) -> str:
        if len(e.args) > 1:
            axes = self.statics(e.args[1])
        else:
            node = self.by_span.get(e.span)
            ndim = node.data.ndim if node is not None else 2
            axes = "(" + ", ".join(str(i) for i in reversed(range(ndim)))
            axes += ("," if ndim == 1 else "") + ")"
        if self.torch:
            return f"{self.receiver(e)}.permute{axes}"
        return f"jnp.transpose({self.expr(e.args[0])}, {axes})"

    def cross_entropy(self, e: ir.Call, prec: int) -> str:
        z, t = self.expr(e.args[0]), self.labels(e.args[1])
        if self.torch:
            return f"F.cross_entropy({z}, {t})"
        node = self.by_span.get(e.span)
        z_ndim = node.inputs[0].data.ndim if node is not None else 1
        if z_ndim == 1:
            return f"-jax.nn.log_softmax({z})[{t}]"
        # one label per row (ERRATA 3)
        return f"-jnp.mean(jax.nn.log_softmax({z})[jnp.arange({z}.shape[0]), {t}])"

    def detach(self, e: ir.Call, prec: int) -> str:
        if self.torch:
            return f"{self.receiver(e)}.detach()"
        return f"jax.lax.stop_gradient({self.expr(e.args[0])})"

    def grad(self, e: ir.Call, prec: int) -> str:
        if not self.torch:
            raise NotImplementedError  # jax.grad of an inner function: not generated
        return (
            f"torch.autograd.grad({self.expr(e.args[0])}, {self.expr(e.args[1])}, "
            "create_graph=True)[0]"
        )

    def labels(self, e: Any) -> str:
        if isinstance(e, ir.Name):
            return self.name(e.id)
        return self.expr(e)

    def as_tensor(self, e: Any) -> str:
        if isinstance(e, ir.Num) and self.torch:
            return f"torch.tensor({number_text(e.value)})"
        return self.expr(e)

    def constructor(self, e: ir.Call, leaf: bool) -> str:
        f = e.func
        shape = self.statics(e.args[0])
        numpy = {
            "randn": f"rng.standard_normal({shape})",
            "rand": f"rng.random({shape})",
            "zeros": f"np.zeros({shape})",
            "ones": f"np.ones({shape})",
            "arange": f"np.arange({self.static(e.args[0].value[0])}, dtype=float)",  # type: ignore[union-attr,index]
        }
        if f == "full":
            fill = e.args[1]
            numpy["full"] = f"np.full({shape}, {number_text(fill.value)})"  # type: ignore[union-attr,arg-type]
        if self.torch:
            return f"torch.tensor({numpy[f]}{', requires_grad=True' if leaf else ''})"
        return f"jnp.array({numpy[f]})"


# The language's functions other than the elementwise ones and the constructors, by the method
# that writes each.
CALLS = {
    "max": Writer.extreme,
    "min": Writer.extreme,
    "matmul": Writer.matmul,
    "mse": Writer.mse,
    "sum": Writer.reduction,
    "mean": Writer.reduction,
    "softmax": Writer.softmax,
    "log_softmax": Writer.softmax,
    "reshape": Writer.reshape,
    "transpose": Writer.transpose,
    "cross_entropy": Writer.cross_entropy,
    "const": Writer.detach,
    "detach": Writer.detach,
    "grad": Writer.grad,
}
