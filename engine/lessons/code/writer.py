"""The parsed program's expressions as Python text, for PyTorch or for JAX (the code lesson).

Operators are written with the Python operator each op has in the op registry
(`engine.autograd.ops.OPS`); a call of an op as its class says (`written_as`: the name of the
Writer method for that form), with the framework's own function for it (`torch_name`,
`jax_name`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.ops import FUNCTIONS, OPS, LogSoftmax, Mean, Op
from engine.autograd.value import Value
from engine.errors import ProgramError
from engine.language import flow_ir as fx
from engine.language import ir
from engine.language.build_names import CONSTRUCTED

# Python's binding strength of each binary operator (a higher one binds tighter).
PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "@": 2, "**": 4}


def number_text(v: float) -> str:
    return repr(float(v)) if not float(v).is_integer() or abs(v) >= 1e15 else str(int(v))


def array_text(a: np.ndarray) -> str:
    return repr(np.asarray(a, dtype=np.float64).tolist())


def unwritable(node: Any) -> ProgramError:
    """The lesson's answer for a part of the program it has no code for: a clear refusal at
    that part (never a crash, never code that computes something else)."""
    text = str(node).split("\n")[0]
    text = text if len(text) <= 60 else text[:59] + "…"
    span = getattr(node, "span", None)
    return ProgramError(
        f"the PyTorch and JAX lesson cannot write code for '{text}' yet",
        getattr(span, "line", None),
        getattr(span, "column", None),
        end_line=getattr(span, "end_line", None),
        end_column=getattr(span, "end_column", None),
        code="unsupported",
    )


def range_text(start: str, stop: str, step: str) -> str:
    """range's arguments as Python writes them shortest: `3`, `1, 3`, `0, 6, 2`."""
    if step != "1":
        return f"{start}, {stop}, {step}"
    return stop if start == "0" else f"{start}, {stop}"


def is_literal(e: Any) -> bool:
    """A constant written out (a number, a list, a constructor): const() of it is one node."""
    return isinstance(e, ir.Num | ir.Array) or (isinstance(e, ir.Call) and e.func in CONSTRUCTED)


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
        # A flat chain `1 + 1 + …` may be longer than Python's recursion limit: its left spine
        # is written in a loop.
        spine: list[ir.SBin] = []
        while isinstance(s, ir.SBin):
            spine.append(s)
            s = s.left
        text = self.static_atom(s)
        for node in reversed(spine):
            text = f"({text} {node.op} {self.static(node.right)})"
        return text

    def static_atom(self, s: Any) -> str:
        """A whole number that is not an operator: a literal, a loop variable or a name bound
        to an int, or a length of a value (`x.shape[0]`; `*x.shape` inside a shape)."""
        if isinstance(s, ir.SInt):
            return str(s.value)
        if isinstance(s, ir.SVar):
            return self.name(s.name)
        if isinstance(s, ir.SShape):
            if s.axis is None:
                return f"*{self.name(s.name)}.shape"
            return f"{self.name(s.name)}.shape[{self.static(s.axis)}]"
        raise unwritable(s)  # anything else: refused by name, never recursed into

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
        """An index: ints and slices, and index lists (a list, a range, a name bound to labels),
        which JAX takes only as arrays."""
        out = []
        for k in parts:
            if isinstance(k, ir.SSlice):
                text = (self.static(k.start) if k.start else "") + ":"
                text += self.static(k.stop) if k.stop else ""
                text += (":" + self.static(k.step)) if k.step else ""
                out.append(text)
            elif isinstance(k, ir.SList):
                items = "[" + ", ".join(self.static(i) for i in k.items) + "]"
                out.append(items if self.torch else f"jnp.array({items})")
            elif isinstance(k, ir.SRange):
                bounds = range_text(*(self.static(b) for b in (k.start, k.stop, k.step)))
                out.append(f"range({bounds})" if self.torch else f"jnp.arange({bounds})")
            elif isinstance(k, ir.Name):
                out.append(self.name(k.id))
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
        if isinstance(e, ir.IntOf):  # a length (`x.shape[0]`): a Python int in both codes
            return self.static(e.value)
        if isinstance(e, ir.Items):  # cat's and stack's list of values
            return "[" + ", ".join(self.as_tensor(x) for x in e.items) + "]"
        if isinstance(e, fx.Lambda | fx.CallFn):
            return self.function(e, prec)
        raise unwritable(e)

    def function(self, e: fx.Lambda | fx.CallFn, prec: int) -> str:
        """A lambda, and a call of one or of a name bound to one, as Python writes them: both
        frameworks run them as they are (gradtrace inlines each call)."""
        if isinstance(e, fx.CallFn):
            if not isinstance(e.func, fx.Lambda | ir.Name):
                raise unwritable(e)  # jax.grad(f)(x) and the like: not generated
            args = [self.expr(a) for a in e.args] + [f"{k}={self.expr(v)}" for k, v in e.kwargs]
            return f"{self.expr(e.func, 9)}({', '.join(args)})"
        plain = len(e.params) - len(e.defaults)
        params = ", ".join(
            self.name(p) if i < plain else f"{self.name(p)}={self.expr(e.defaults[i - plain])}"
            for i, p in enumerate(e.params)
        )
        text = f"lambda{' ' if params else ''}{params}: {self.expr(e.body)}"
        return f"({text})" if prec > 0 else text

    def binop(self, e: ir.BinOp, prec: int) -> str:
        """A chain of binary operators, written without recursing down its left operands: the
        language lets `x + x + … + x` run to max_nodes terms (only its right operands, and
        everything else, count towards max_depth), far past Python's recursion limit."""
        spine: list[tuple[ir.BinOp, int]] = []  # each operator and the precedence around it
        cur: Any = e
        while isinstance(cur, ir.BinOp):
            spine.append((cur, prec))
            symbol = OPS[cur.op].operator or ""
            prec = PREC[symbol] + (1 if symbol == "**" else 0)  # what its left operand gets
            cur = cur.left
        text = self.expr(cur, prec)
        for node, around in reversed(spine):
            symbol = OPS[node.op].operator or ""
            p = PREC[symbol]
            right = self.expr(node.right, p + (0 if symbol == "**" else 1))
            text = f"{text}**{right}" if symbol == "**" else f"{text} {symbol} {right}"
            if p < around:
                text = f"({text})"
        return text

    def call(self, e: ir.Call, prec: int) -> str:
        f = e.func
        if f in CONSTRUCTED:
            return self.constructor(e, leaf=False)
        if f in ("const", "detach"):
            return self.detach(e, prec)
        if f == "grad":
            return self.grad(e, prec)
        cls = FUNCTIONS.get(f)
        if cls is None:
            raise unwritable(e)
        write = getattr(self, cls.written_as)  # the op says which of the methods below
        return write(e, cls, prec)  # type: ignore[no-any-return]

    def fn(self, cls: type[Op]) -> str:
        """The op's function in this framework (torch.tanh, jax.nn.sigmoid)."""
        name = cls.torch_name if self.torch else cls.jax_name
        assert name is not None, f"{cls.name} has no function to write in {self.flavour}"
        return name

    def method(self, cls: type[Op]) -> str:
        """The op's PyTorch function as a Tensor method: torch.sum → x.sum(…)."""
        return self.fn(cls).rsplit(".", 1)[-1]

    # One method per way of writing a call (an op's `written_as`) -------------------------------
    def by_name(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        """The op's function applied to the arguments, a number as a tensor where PyTorch
        needs one (torch.exp(2) is refused: 2 is not a Tensor)."""
        return f"{self.fn(cls)}({', '.join(self.as_tensor(a) for a in e.args)})"

    def receiver(self, e: ir.Call) -> str:
        """The first argument, as the object of a method call (`x.sum()`)."""
        return self.expr(e.args[0], 9)

    def matmul(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        text = f"{self.expr(e.args[0], 3)} @ {self.expr(e.args[1], 3)}"
        return f"({text})" if prec > 2 else text

    def mse(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        if self.torch:  # F.mse_loss is gradtrace's mse: one op, pasted back
            return f"{self.fn(cls)}({self.expr(e.args[0])}, {self.expr(e.args[1])})"
        return f"(({self.expr(e.args[0], 1)} - {self.expr(e.args[1], 1)})**2).mean()"

    def reduction(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        kw = dict(e.kwargs)
        axis, keep = kw.get("axis"), bool(kw.get("keepdims", False))
        if self.torch:
            inner = "" if axis is None else f"dim={self.axis(axis)}"
            if keep and axis is not None:
                inner += ", keepdim=True"
            return f"{self.receiver(e)}.{self.method(cls)}({inner})"
        inner = "" if axis is None else f", axis={self.axis(axis)}"
        keep_text = ", keepdims=True" if keep else ""
        return f"{self.fn(cls)}({self.expr(e.args[0])}{inner}{keep_text})"

    def softmax(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        axis = self.axis(dict(e.kwargs).get("axis", ir.SInt(-1)))
        keyword = "dim" if self.torch else "axis"
        return f"{self.fn(cls)}({self.expr(e.args[0])}, {keyword}={axis})"

    def reshape(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        if self.torch:
            return f"{self.receiver(e)}.{self.method(cls)}{self.statics(e.args[1])}"
        return f"{self.fn(cls)}({self.expr(e.args[0])}, {self.statics(e.args[1])})"

    def transpose(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        if len(e.args) > 1:
            axes = self.statics(e.args[1])
        else:
            node = self.by_span.get(e.span)
            ndim = node.data.ndim if node is not None else 2
            axes = "(" + ", ".join(str(i) for i in reversed(range(ndim)))
            axes += ("," if ndim == 1 else "") + ")"
        if self.torch:
            return f"{self.receiver(e)}.{self.method(cls)}{axes}"
        return f"{self.fn(cls)}({self.expr(e.args[0])}, {axes})"

    def cross_entropy(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        z, t = self.expr(e.args[0]), self.labels(e.args[1])
        if self.torch:
            return f"{self.fn(cls)}({z}, {t})"
        # JAX has no cross-entropy: minus log_softmax at the labels
        log_p = f"{self.fn(LogSoftmax)}({z})"
        node = self.by_span.get(e.span)
        z_ndim = node.inputs[0].data.ndim if node is not None else 1
        if z_ndim == 1:
            return f"-{log_p}[{t}]"
        # one label per row (ERRATA 3)
        return f"-{self.fn(Mean)}({log_p}[jnp.arange({z}.shape[0]), {t}])"

    def detach(self, e: ir.Call, prec: int) -> str:
        if is_literal(e.args[0]):  # torch.tensor([1.0, 2.0]) without requires_grad: a constant
            return self.as_tensor(e.args[0], always=True)
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

    def as_tensor(self, e: Any, always: bool = False) -> str:
        """e where PyTorch needs a tensor (torch.maximum, torch.stack): a number as a float64
        tensor; with `always`, in JAX's code too."""
        if isinstance(e, ir.Num | ir.IntOf) and (self.torch or always):
            number = repr(float(e.value)) if isinstance(e, ir.Num) else f"float({self.expr(e)})"
            return f"torch.tensor({number})" if self.torch else f"jnp.array({number})"
        return self.expr(e)

    def join(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        axis = dict(e.kwargs).get("axis", ir.SInt(0))
        at = "" if axis == ir.SInt(0) else self.static(axis)
        keyword = "dim" if self.torch else "axis"
        return f"{self.fn(cls)}({self.expr(e.args[0])}{f', {keyword}={at}' if at else ''})"

    def clamp(self, e: ir.Call, cls: type[Op], prec: int) -> str:
        kw: dict[str, Any] = dict(e.kwargs)  # min= and max=: a number, or None for no bound
        bounds = {k: None if kw.get(k) is None else number_text(kw[k]) for k in ("min", "max")}
        x = self.as_tensor(e.args[0])
        if self.torch:
            given = ", ".join(f"{k}={v}" for k, v in bounds.items() if v is not None)
            return f"{self.fn(cls)}({x}, {given})"
        return f"{self.fn(cls)}({x}, {bounds['min']}, {bounds['max']})"

    def constructor(self, e: ir.Call, leaf: bool) -> str:
        """A value made from a shape or a range, drawn and filled by NumPy as gradtrace does."""
        f = e.func
        if f in ("arange", "linspace"):
            bounds = ", ".join(
                number_text(a.value) if isinstance(a, ir.Num) else self.static(a.value)  # type: ignore[union-attr]
                for a in e.args
            )
            made = (
                f"np.linspace({bounds})" if f == "linspace" else f"np.arange({bounds}, dtype=float)"
            )
        else:
            shape = self.statics(e.args[0])
            numpy = {
                "randn": f"rng.standard_normal({shape})",
                "rand": f"rng.random({shape})",
                "zeros": f"np.zeros({shape})",
                "ones": f"np.ones({shape})",
            }
            if f == "full":
                fill = e.args[1]
                numpy["full"] = f"np.full({shape}, {number_text(fill.value)})"  # type: ignore[union-attr,arg-type]
            made = numpy[f]
        if self.torch:
            return f"torch.tensor({made}{', requires_grad=True' if leaf else ''})"
        return f"jnp.array({made})"
