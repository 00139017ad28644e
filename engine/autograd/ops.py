"""One class per operation: a forward `compute` and a local `gradient` (vector–Jacobian product).

Contract (after needle): `compute(*arrays) -> array` does the forward maths on float64 arrays.
`gradient(g, ins, out, needs, m)` gets the grad `g` arriving at the output, the inputs' values
`ins`, the output's value `out`, which inputs need a gradient, and a math namespace `m`; it
returns one contribution per input, already summed back to that input's shape (None where no
gradient is needed). Rules are written with operators and `m`'s functions only, so the same
rule can later run on graph nodes instead of arrays (higher-order gradients).
Before any of that, `out_shape(*shapes)` gives the result's shape and `work_elements(*shapes)`
the elements of the largest array the forward or backward makes, so that engine/language/build.py can
refuse an op over max_tensor_elements before it allocates anything.

`rules` is the chain-rule term per input for the trace, with `ū` the upstream grad, `{0}`, `{1}`
the inputs' labels and `{out}` the output's label.

Elementwise ops also have scalar kernels, the forward's and backward's innermost loop when every
value is a scalar: `scalar(x[, y])` and `scalar_grad(g, x[, y], out…)` take and give NumPy
float64 scalars. They are the same maths as `compute` and `gradient`, written without arrays or
namespaces, and give the same bits: +, −, ·, /, √ and comparisons are correctly rounded IEEE
operations however they are called, and exp, log, tanh, sin and cos call the same NumPy ufunc
as the array path (Python's `math` module, faster, differs from it in the last bit). Only pow's
rule keeps C's pow for `a^(b−1)`, as ScalarMath always did. tests/test_engine_speed_paths.py
checks every kernel against its op's `compute` and `gradient`.
"""

from __future__ import annotations

import contextvars
import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from engine.autograd.value import Value, as_array, constant, lift, op_result

Array = np.ndarray
Grads = tuple[Array | None, ...]
Needs = Sequence[bool]


class Math(Protocol):
    """The namespace `m` a gradient rule computes with: ArrayMath on arrays, ScalarMath on
    float64 scalars, engine.autograd.higher's GraphMath on graph nodes. Its functions take and give
    whichever of those the rule is running on."""

    def exp(self, x: Any, /) -> Any: ...
    def log(self, x: Any, /) -> Any: ...
    def sin(self, x: Any, /) -> Any: ...
    def cos(self, x: Any, /) -> Any: ...
    def sign(self, x: Any, /) -> Any: ...
    def mask(self, condition: Any, /) -> Any: ...
    def where(self, condition: Any, a: Any, b: Any, /) -> Any: ...
    def reshape(self, x: Any, shape: Any, /) -> Any: ...
    def transpose(self, x: Any, axes: Any, /) -> Any: ...
    def matmul(self, a: Any, b: Any, /) -> Any: ...
    def broadcast_to(self, x: Any, shape: Any, /) -> Any: ...
    def expand_dims(self, x: Any, axis: Any, /) -> Any: ...
    def sum(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any: ...
    def swap_last(self, x: Any, /) -> Any: ...
    def sum_to(self, g: Any, shape: tuple[int, ...], /) -> Any: ...
    def scatter(self, g: Any, shape: tuple[int, ...], key: Any, /) -> Any: ...
    def softmax(self, z: Any, axis: int, /) -> Any: ...


class OpError(ValueError):
    """An operation cannot run on these inputs; the language front end adds the position."""

    def __init__(self, message: str, code: str = "op") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class ArrayMath:
    """The functions gradient rules may use, on NumPy arrays."""

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    sign = staticmethod(np.sign)
    reshape = staticmethod(np.reshape)
    transpose = staticmethod(np.transpose)
    matmul = staticmethod(np.matmul)
    broadcast_to = staticmethod(np.broadcast_to)
    expand_dims = staticmethod(np.expand_dims)

    @staticmethod
    def mask(condition: Any) -> Array:
        """A 0/1 constant array from a boolean condition (never differentiated)."""
        return np.asarray(condition, dtype=np.float64)

    @staticmethod
    def where(condition: Any, a: Any, b: Any) -> Array:
        return np.where(condition, a, b)

    @staticmethod
    def sum(x: Array, axis: Any = None, keepdims: bool = False) -> Array:
        return np.sum(x, axis=axis, keepdims=keepdims)

    @staticmethod
    def swap_last(x: Array) -> Array:
        return np.swapaxes(x, -1, -2)

    @staticmethod
    def sum_to(g: Array, shape: tuple[int, ...]) -> Array:
        """Sum a broadcast gradient back to the shape of the input it came from."""
        if g.shape == shape:
            return g
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
        )
        return np.sum(g, axis=axes, keepdims=True).reshape(shape)

    @staticmethod
    def scatter(g: Array, shape: tuple[int, ...], key: Any) -> Array:
        out = np.zeros(shape)
        out[key] = g
        return out

    @staticmethod
    def softmax(z: Array, axis: int) -> Array:
        e = np.exp(z - np.max(z, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)


ARRAY_MATH = ArrayMath()


class ScalarMath(ArrayMath):
    """ArrayMath for an op whose inputs and output are all scalars (float64): there is no
    broadcast to undo, so `sum_to` returns the grad as it is. Same rules, less work."""

    @staticmethod
    def sum_to(g: Array, shape: tuple[int, ...]) -> Array:
        return g


SCALAR_MATH = ScalarMath()


# The most dimensions a value may have. NumPy's arrays stop at 64, and its broadcasting
# (np.broadcast, under np.broadcast_shapes) at 32: past that it raises RuntimeError, not a
# shape error. No lesson comes near it; the language refuses more with a message that says so.
MAX_RANK = 32


def rank_message(shape: tuple[int, ...]) -> str:
    return (
        f"a value can have at most {MAX_RANK} dimensions (NumPy broadcasts no more); "
        f"this one would have {len(shape)}"
    )


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast of `shapes`, worked out in Python: np.broadcast_shapes raises
    RuntimeError past 32 dimensions."""
    if len(shapes) == 2 and shapes[0] == shapes[1]:  # the usual case: nothing to broadcast
        return tuple(shapes[0])
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != out[i]:
                if out[i] != 1 and n != 1:
                    listed = " and ".join(str(tuple(s)) for s in shapes)
                    raise OpError(f"shapes {listed} do not broadcast", "shape")
                if out[i] == 1:
                    out[i] = n
    return tuple(out)


def footprint(shape: tuple[int, ...]) -> int:
    """The elements a value of `shape` is charged against max_tensor_elements: its size, with
    a zero-length axis counted as 1. An empty (0, n, n) holds nothing, but reducing away its
    empty axis (`sum(x, axis=0)`) makes n² zeros, and NumPy refuses even to make an empty array
    whose other axes multiply past its index range; so an empty value is charged as if full."""
    size = math.prod(shape)
    return size if size else math.prod(n if n > 0 else 1 for n in shape)


def shape_text(shape: tuple[int, ...]) -> str:
    return "scalar" if shape == () else str(tuple(shape))


class Op:
    """An operation: its name, how it is written, its forward maths and its local gradient."""

    name: ClassVar[str]
    symbol: ClassVar[str]
    rules: ClassVar[tuple[str, ...]]
    # Why a non-finite result happened, for the error message.
    domain_hint: ClassVar[str] = ""
    # Elementwise: on scalar inputs the result is a scalar and no shape check is needed (the
    # scalar fast path of `apply`).
    elementwise: ClassVar[bool] = False

    def params(self) -> dict[str, Any]:
        """The op's constant parameters (axis, shape, labels…), for the trace and the drawing."""
        return {}

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...] | None:
        """The result's shape before computing it (None: no larger than an input)."""
        return None

    def work_elements(self, *shapes: tuple[int, ...]) -> int:
        """The elements (as `footprint` counts them) of the largest array this op's forward
        or backward makes, its output included: the builder checks it against
        max_tensor_elements before computing. Most ops make nothing larger than their output
        or an input; a fused op whose inside is larger than its result (mse's broadcast
        `p − y`, matmul's per-batch gradients) says how large here."""
        out = self.out_shape(*shapes)
        return max(footprint(s) for s in (*shapes, () if out is None else out))

    if TYPE_CHECKING:
        # `compute(*arrays)`: each op names its own inputs (`compute(self, a, b)`,
        # `compute(self, x)`), so to the type checker it is a callable of any arity.
        compute: Callable[..., Array]
    else:

        def compute(self, *arrays: Array) -> Array:
            raise NotImplementedError

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        raise NotImplementedError

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({params})"


# --- elementwise, two inputs, NumPy broadcasting ---------------------------------------------


class Binary(Op):
    domain_hint = "the result is beyond float64's range (about ±1.8e308)"
    elementwise = True

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        return broadcast_shape(*shapes)

    def scalar(self, x: Any, y: Any) -> Any:
        """`compute` on two float64 scalars (the op's own maths, unless a subclass writes it
        out without NumPy's array machinery)."""
        return self.compute(x, y)

    def scalar_grad(self, g: Any, x: Any, y: Any, out: Any, na: bool, nb: bool) -> Any:
        """`gradient` on float64 scalars: (ā contribution, b̄ contribution). A subclass may give
        both even where `na`/`nb` is False; the caller uses only the ones it needs."""
        return self.gradient(g, (x, y), out, (na, nb), SCALAR_MATH)


class Add(Binary):
    """f(a, b) = a + b;  ā += ū,  b̄ += ū (each summed back to its shape)."""

    name, symbol, rules = "add", "+", ("ū", "ū")

    def compute(self, a: Array, b: Array) -> Array:
        return a + b

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        return (
            m.sum_to(g, a.shape) if needs[0] else None,
            m.sum_to(g, b.shape) if needs[1] else None,
        )

    def scalar(self, x: Any, y: Any) -> Any:
        return x + y

    def scalar_grad(self, g: Any, x: Any, y: Any, out: Any, na: bool, nb: bool) -> Any:
        return g, g


class Sub(Binary):
    """f(a, b) = a − b;  ā += ū,  b̄ += −ū."""

    name, symbol, rules = "sub", "-", ("ū", "−ū")

    def compute(self, a: Array, b: Array) -> Array:
        return a - b

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        return (
            m.sum_to(g, a.shape) if needs[0] else None,
            m.sum_to(-g, b.shape) if needs[1] else None,
        )

    def scalar(self, x: Any, y: Any) -> Any:
        return x - y

    def scalar_grad(self, g: Any, x: Any, y: Any, out: Any, na: bool, nb: bool) -> Any:
        return g, -g


class Mul(Binary):
    """f(a, b) = a·b;  ā += ū·b,  b̄ += ū·a."""

    name, symbol, rules = "mul", "*", ("ū·{1}", "ū·{0}")

    def compute(self, a: Array, b: Array) -> Array:
        return a * b

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        return (
            m.sum_to(g * b, a.shape) if needs[0] else None,
            m.sum_to(g * a, b.shape) if needs[1] else None,
        )

    def scalar(self, x: Any, y: Any) -> Any:
        return x * y

    def scalar_grad(self, g: Any, x: Any, y: Any, out: Any, na: bool, nb: bool) -> Any:
        return g * y, g * x


class Div(Binary):
    """f(a, b) = a / b;  ā += ū / b,  b̄ += −ū·a / b²."""

    name, symbol, rules = "div", "/", ("ū/{1}", "−ū·{0}/{1}²")
    domain_hint = "division by zero"

    def compute(self, a: Array, b: Array) -> Array:
        return a / b

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        return (
            m.sum_to(g / b, a.shape) if needs[0] else None,
            m.sum_to(-g * a / (b * b), b.shape) if needs[1] else None,
        )

    def scalar(self, x: Any, y: Any) -> Any:
        return x / y

    def scalar_grad(self, g: Any, x: Any, y: Any, out: Any, na: bool, nb: bool) -> Any:
        return g / y, -g * x / (y * y)


class Pow(Binary):
    """f(a, b) = a^b;  ā += ū·b·a^(b−1) (0 where b = 0),  b̄ += ū·a^b·ln a (0 where a = 0, b ≥ 0).

    The two masks are PyTorch's, so x**0 and 0**y have the gradients PyTorch reports.
    """

    name, symbol, rules = "pow", "**", ("ū·{1}·{0}^({1}−1)", "ū·{out}·ln {0}")
    domain_hint = (
        "a negative base with a fractional exponent, a zero base with a negative exponent, "
        "or a result too large for float64"
    )

    def compute(self, a: Array, b: Array) -> Array:
        return np.power(a, b)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        ga = gb = None
        if needs[0]:
            ga = m.sum_to(m.where(b == 0, 0.0, g * b * a ** (b - 1)), a.shape)
        if needs[1]:
            ln_a = m.log(m.where(a == 0, 1.0, a))
            gb = m.sum_to(m.where((a == 0) & (b >= 0), 0.0, g * out * ln_a), b.shape)
        return ga, gb

    def scalar(self, x: Any, y: Any) -> Any:
        return np.power(x, y)

    def scalar_grad(self, g: Any, x: Any, y: Any, out: Any, na: bool, nb: bool) -> Any:
        ga = gb = None
        if na:
            ga = _ZERO if y == 0 else g * y * x ** (y - 1)
        if nb:
            gb = _ZERO if x == 0 and y >= 0 else g * out * np.log(_ONE if x == 0 else x)
        return ga, gb


class Maximum(Binary):
    """f(a, b) = max(a, b) elementwise;  the larger input takes ū, a tie gives ū/2 to each."""

    name, symbol, rules = "max", "max", ("ū·[{0} ≥ {1}]", "ū·[{1} ≥ {0}]")

    def compute(self, a: Array, b: Array) -> Array:
        return np.maximum(a, b)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        share_a = m.mask(a > b) + 0.5 * m.mask(a == b)
        return (
            m.sum_to(g * share_a, a.shape) if needs[0] else None,
            m.sum_to(g * (1.0 - share_a), b.shape) if needs[1] else None,
        )

    def scalar_grad(self, g: Any, x: Any, y: Any, out: Any, na: bool, nb: bool) -> Any:
        share_a = 1.0 if x > y else 0.5 if x == y else 0.0
        return g * share_a, g * (1.0 - share_a)


class Minimum(Binary):
    """f(a, b) = min(a, b) elementwise;  the smaller input takes ū, a tie gives ū/2 to each."""

    name, symbol, rules = "min", "min", ("ū·[{0} ≤ {1}]", "ū·[{1} ≤ {0}]")

    def compute(self, a: Array, b: Array) -> Array:
        return np.minimum(a, b)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        share_a = m.mask(a < b) + 0.5 * m.mask(a == b)
        return (
            m.sum_to(g * share_a, a.shape) if needs[0] else None,
            m.sum_to(g * (1.0 - share_a), b.shape) if needs[1] else None,
        )

    def scalar_grad(self, g: Any, x: Any, y: Any, out: Any, na: bool, nb: bool) -> Any:
        share_a = 1.0 if x < y else 0.5 if x == y else 0.0
        return g * share_a, g * (1.0 - share_a)


# --- elementwise, one input ------------------------------------------------------------------


class Unary(Op):
    elementwise = True

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (self.local(g, ins[0], out, m),)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        raise NotImplementedError

    def scalar(self, x: Any) -> Any:
        """`compute` on a float64 scalar."""
        return self.compute(x)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        """`local` on float64 scalars: x's contribution."""
        return self.local(g, x, out, SCALAR_MATH)


class Neg(Unary):
    """f(x) = −x;  x̄ += −ū."""

    name, symbol, rules = "neg", "-", ("−ū",)

    def compute(self, x: Array) -> Array:
        return -x

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return -g

    def scalar(self, x: Any) -> Any:
        return -x

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return -g


class Exp(Unary):
    """f(x) = eˣ;  x̄ += ū·eˣ."""

    name, symbol, rules = "exp", "exp", ("ū·{out}",)
    domain_hint = "exp overflows float64 above about 709"

    def compute(self, x: Array) -> Array:
        return np.exp(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * out

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g * out


class Log(Unary):
    """f(x) = ln x;  x̄ += ū / x."""

    name, symbol, rules = "log", "log", ("ū/{0}",)
    domain_hint = "log needs positive numbers: log(0) is −inf, log of a negative is NaN"

    def compute(self, x: Array) -> Array:
        return np.log(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g / x

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g / x


class Sqrt(Unary):
    """f(x) = √x;  x̄ += ū / (2√x)."""

    name, symbol, rules = "sqrt", "sqrt", ("ū/(2·{out})",)
    domain_hint = "sqrt needs numbers ≥ 0, and its gradient at 0 is infinite"

    def compute(self, x: Array) -> Array:
        return np.sqrt(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g / (2.0 * out)

    def scalar(self, x: Any) -> Any:
        # √ is correctly rounded in IEEE arithmetic: math.sqrt and np.sqrt agree to the bit.
        return _F64(math.sqrt(x)) if x >= 0.0 else np.sqrt(x)  # √(negative): NaN, reported

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g / (2.0 * out)


class Sin(Unary):
    """f(x) = sin x;  x̄ += ū·cos x."""

    name, symbol, rules = "sin", "sin", ("ū·cos {0}",)

    def compute(self, x: Array) -> Array:
        return np.sin(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * m.cos(x)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g * np.cos(x)


class Cos(Unary):
    """f(x) = cos x;  x̄ += −ū·sin x."""

    name, symbol, rules = "cos", "cos", ("−ū·sin {0}",)

    def compute(self, x: Array) -> Array:
        return np.cos(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return -g * m.sin(x)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return -g * np.sin(x)


class Tanh(Unary):
    """f(x) = tanh x;  x̄ += ū·(1 − tanh²x)."""

    name, symbol, rules = "tanh", "tanh", ("ū·(1−{out}²)",)

    def compute(self, x: Array) -> Array:
        return np.tanh(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * (1.0 - out * out)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g * (1.0 - out * out)


class Sigmoid(Unary):
    """f(x) = σ(x) = 1 / (1 + e⁻ˣ);  x̄ += ū·σ(x)·(1 − σ(x))."""

    name, symbol, rules = "sigmoid", "sigmoid", ("ū·{out}·(1−{out})",)

    def compute(self, x: Array) -> Array:
        # Two branches so neither exp overflows.
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * out * (1.0 - out)

    def scalar(self, x: Any) -> Any:
        e = np.exp(-abs(x))
        return 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g * out * (1.0 - out)


class Relu(Unary):
    """f(x) = max(x, 0);  x̄ += ū·[x > 0] (0 at x = 0, as PyTorch)."""

    name, symbol, rules = "relu", "relu", ("ū·[{0} > 0]",)

    def compute(self, x: Array) -> Array:
        return np.maximum(x, 0.0)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * m.mask(x > 0)

    def scalar(self, x: Any) -> Any:
        return x if x > 0.0 else _ZERO  # np.maximum(-0.0, 0.0) is +0.0 too

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g if x > 0.0 else g * 0.0  # ū·1 is ū; ū·0 keeps the sign of ū, as the mask does


class Abs(Unary):
    """f(x) = |x|;  x̄ += ū·sign(x) (0 at x = 0, as PyTorch)."""

    name, symbol, rules = "abs", "abs", ("ū·sign {0}",)

    def compute(self, x: Array) -> Array:
        return np.abs(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * m.sign(x)

    def scalar(self, x: Any) -> Any:
        return abs(x)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g * np.sign(x)


# --- matrix product ----------------------------------------------------------------------------


class MatMul(Op):
    """C = A @ B (NumPy rules, batched over leading dims; a 1-d side is a vector).

    Ā += ū·Bᵀ,  B̄ += Aᵀ·ū, each summed over the batch dims it was broadcast along.
    """

    name, symbol, rules = "matmul", "@", ("ū·{1}ᵀ", "{0}ᵀ·ū")

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        a, b = shapes
        if not a or not b:
            raise OpError("@ needs tensors, not scalars: use * to multiply by a number", "shape")
        a2 = (1, *a) if len(a) == 1 else a
        b2 = (*b, 1) if len(b) == 1 else b
        if a2[-1] != b2[-2]:
            raise OpError(
                f"shapes {shape_text(a)} and {shape_text(b)} cannot be multiplied with @: "
                f"{a2[-1]} columns against {b2[-2]} rows",
                "shape",
            )
        batch = broadcast_shape(a2[:-2], b2[:-2])
        core = ((a2[-2],) if len(a) > 1 else ()) + ((b2[-1],) if len(b) > 1 else ())
        return batch + core

    def work_elements(self, *shapes: tuple[int, ...]) -> int:
        """The gradients are made over the whole broadcast batch before `sum_to` folds them
        back: ū·Bᵀ has the batch and A's matrix shape, Aᵀ·ū the batch and B's. With A
        (128, 1, 128) and B (128, 128), each 16,384 elements as is the result, B̄ starts as
        (128, 128, 128): two million."""
        a, b = shapes
        if len(a) <= 2 and len(b) <= 2:  # no batch (the usual case, kept quick): Ā is A's
            rows = a[0] if len(a) == 2 else 1  # shape, B̄ B's, and the result rows × cols
            cols = b[1] if len(b) == 2 else 1
            return max(footprint(a), footprint(b), max(rows, 1) * max(cols, 1))
        out = self.out_shape(*shapes)
        a2 = (1, *a) if len(a) == 1 else a
        b2 = (*b, 1) if len(b) == 1 else b
        batch = footprint(broadcast_shape(a2[:-2], b2[:-2]))
        return max(
            footprint(out),
            footprint(a),
            footprint(b),
            batch * footprint(a2[-2:]),
            batch * footprint(b2[-2:]),
        )

    def compute(self, a: Array, b: Array) -> Array:
        return np.matmul(a, b)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        a, b = ins
        # Treat a vector as a matrix with one row (a) or one column (b), as NumPy does.
        a2 = m.reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
        b2 = m.reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = m.expand_dims(g2, -2 if b.ndim > 1 else -1)
        if b.ndim == 1:
            g2 = m.expand_dims(g2, -1)
        ga = gb = None
        if needs[0]:
            ga = m.reshape(m.sum_to(m.matmul(g2, m.swap_last(b2)), a2.shape), a.shape)
        if needs[1]:
            gb = m.reshape(m.sum_to(m.matmul(m.swap_last(a2), g2), b2.shape), b.shape)
        return ga, gb


# --- reductions and views ----------------------------------------------------------------------


def normalise_axes(axis: Any, ndim: int, what: str) -> tuple[int, ...] | None:
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise OpError(f"{what}: axis {a} is out of range for a value with {ndim} dims", "axis")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise OpError(f"{what}: an axis is repeated in {axis}", "axis")
    return tuple(sorted(out))


class Sum(Op):
    """f(x) = Σ x over `axis` (all by default);  x̄ += ū broadcast back to x's shape."""

    name, symbol, rules = "sum", "sum", ("ū broadcast to {0}'s shape",)

    def __init__(self, axis: Any = None, keepdims: bool = False) -> None:
        self.axis = axis
        self.keepdims = keepdims

    def params(self) -> dict[str, Any]:
        return {"axis": self.axis, "keepdims": self.keepdims}

    def compute(self, x: Array) -> Array:
        normalise_axes(self.axis, x.ndim, self.name)
        return np.asarray(np.sum(x, axis=self.axis, keepdims=self.keepdims))

    def spread(self, g: Any, x: Any, m: Math) -> Any:
        axes = normalise_axes(self.axis, x.ndim, self.name)
        if axes is not None and not self.keepdims:
            g = m.expand_dims(g, axes)
        elif axes is None and not self.keepdims:
            g = m.reshape(g, (1,) * x.ndim)
        return m.broadcast_to(g, x.shape)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (self.spread(g, ins[0], m),)


class Mean(Sum):
    """f(x) = mean of x over `axis`;  x̄ += ū / n broadcast back (n = elements averaged)."""

    name, symbol, rules = "mean", "mean", ("ū/n broadcast to {0}'s shape",)

    def compute(self, x: Array) -> Array:
        axes = normalise_axes(self.axis, x.ndim, self.name)
        averaged = math.prod(x.shape if axes is None else [x.shape[a] for a in axes])
        if averaged == 0:
            # A mean of nothing is 0/0 (NumPy warns, then gives NaN): say why instead.
            total = np.sum(x, axis=self.axis, keepdims=self.keepdims)
            if total.size:
                raise OpError("mean over an axis of length 0: there is nothing to average", "shape")
            return np.asarray(total)
        return np.asarray(np.mean(x, axis=self.axis, keepdims=self.keepdims))

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        x = ins[0]
        n = x.size // max(out.size, 1) if x.size else 1
        return (self.spread(g, x, m) / float(n),)


class Reshape(Op):
    """f(x) = x with a new shape (same elements);  x̄ += ū reshaped back."""

    name, symbol, rules = "reshape", "reshape", ("ū reshaped to {0}'s shape",)

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = tuple(shape)

    def params(self) -> dict[str, Any]:
        return {"shape": list(self.shape)}

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        """The target with its -1 worked out, as NumPy would: a reshape of an empty value can
        ask for any shape with a 0 in it, so the target is checked before NumPy makes it."""
        (shape,) = shapes
        size = math.prod(shape)
        target = self.shape
        known = math.prod(n for n in target if n != -1)
        unknown = target.count(-1)
        if (
            unknown > 1
            or any(n < -1 for n in target)
            or (unknown == 1 and (known == 0 or size % known))
            or (unknown == 0 and known != size)
        ):
            raise OpError(
                f"cannot reshape {shape_text(shape)} ({size} elements) into {target}", "shape"
            )
        return tuple(size // known if n == -1 else n for n in target)

    def compute(self, x: Array) -> Array:
        return np.reshape(x, self.out_shape(x.shape)).copy()

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (m.reshape(g, ins[0].shape),)


class Transpose(Op):
    """f(x) = x with its axes permuted (reversed by default);
    x̄ += ū with the inverse permutation."""

    name, symbol, rules = "transpose", "ᵀ", ("ū transposed back",)

    def __init__(self, axes: tuple[int, ...] | None = None) -> None:
        self.axes = None if axes is None else tuple(axes)

    def params(self) -> dict[str, Any]:
        return {"axes": None if self.axes is None else list(self.axes)}

    def permutation(self, ndim: int) -> tuple[int, ...]:
        if self.axes is None:
            return tuple(reversed(range(ndim)))
        if sorted(a % ndim if ndim else a for a in self.axes) != list(range(ndim)):
            raise OpError(f"transpose: axes {self.axes} are not a permutation of {ndim} dims")
        return tuple(a % ndim for a in self.axes)

    def compute(self, x: Array) -> Array:
        return np.transpose(x, self.permutation(x.ndim)).copy()

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        perm = self.permutation(ins[0].ndim)
        return (m.transpose(g, tuple(int(i) for i in np.argsort(perm))),)


class Index(Op):
    """f(x) = x[key] with constant ints and slices;  x̄ += ū scattered into zeros of x's shape."""

    name, symbol, rules = "index", "[]", ("ū scattered into zeros of {0}'s shape",)

    def __init__(self, key: tuple[int | slice, ...]) -> None:
        self.key = tuple(constant_index(k) for k in key)

    def params(self) -> dict[str, Any]:
        return {"key": index_text(self.key)}

    def compute(self, x: Array) -> Array:
        if len(self.key) > x.ndim:
            raise OpError(
                f"too many indices: {len(self.key)} for a value of shape {shape_text(x.shape)}",
                "index",
            )
        for k, n in zip(self.key, x.shape, strict=False):
            if isinstance(k, int) and not -n <= k < n:
                raise OpError(f"index {k} is out of range for an axis of length {n}", "index")
        return np.array(x[self.key])

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (m.scatter(g, ins[0].shape, self.key),)


def constant_index(k: Any) -> int | slice:
    """An int or a slice of ints; anything else (lists, arrays, None, ...) is refused."""
    if isinstance(k, slice):
        parts = [None if p is None else constant_index(p) for p in (k.start, k.stop, k.step)]
        return slice(*parts)
    if isinstance(k, int | np.integer) and not isinstance(k, bool):
        return int(k)
    raise OpError("only constant ints and slices can index a value", "index")


def index_text(key: tuple[int | slice, ...]) -> str:
    def one(k: int | slice) -> str:
        if isinstance(k, int):
            return str(k)
        text = ("" if k.start is None else str(k.start)) + ":"
        text += "" if k.stop is None else str(k.stop)
        return text + ("" if k.step is None else f":{k.step}")

    return ", ".join(one(k) for k in key)


# --- softmax and losses --------------------------------------------------------------------------


class Softmax(Op):
    """s = e^z / Σ e^z along `axis` (shifted by the max, so it never overflows);
    z̄ += s·(ū − Σ ū·s)."""

    name, symbol, rules = "softmax", "softmax", ("{out}·(ū − Σ ū·{out})",)

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def params(self) -> dict[str, Any]:
        return {"axis": self.axis}

    def compute(self, z: Array) -> Array:
        if z.ndim == 0:
            raise OpError("softmax needs a vector or a tensor, not a scalar", "shape")
        normalise_axes(self.axis, z.ndim, self.name)
        if z.size == 0:  # an empty result (np.max has no identity to start an empty axis)
            return np.zeros(z.shape)
        return ARRAY_MATH.softmax(z, self.axis)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (out * (g - m.sum(g * out, axis=self.axis, keepdims=True)),)


class LogSoftmax(Softmax):
    """l = z − log Σ e^z along `axis`;  z̄ += ū − softmax(z)·Σ ū."""

    name, symbol, rules = "log_softmax", "log_softmax", ("ū − softmax({0})·Σ ū",)

    def compute(self, z: Array) -> Array:
        if z.ndim == 0:
            raise OpError("log_softmax needs a vector or a tensor, not a scalar", "shape")
        normalise_axes(self.axis, z.ndim, self.name)
        if z.size == 0:  # as softmax: an empty result
            return np.zeros(z.shape)
        shifted = z - np.max(z, axis=self.axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=self.axis, keepdims=True))

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (g - m.exp(out) * m.sum(g, axis=self.axis, keepdims=True),)


class CrossEntropy(Op):
    """Softmax + negative log-likelihood, fused: L = mean over rows of (log Σ e^z − z[t]);
    z̄ += ū·(softmax(z) − onehot(t)) / N."""

    name, symbol, rules = "cross_entropy", "cross_entropy", ("ū·(softmax({0}) − onehot(t))/N",)

    def __init__(self, labels: int | Sequence[int]) -> None:
        try:
            if isinstance(labels, int | np.integer):
                self.labels: int | list[int] = operator.index(labels)
            else:
                self.labels = [operator.index(t) for t in labels]
        except TypeError:
            raise OpError("class labels are whole numbers: 0, 1, 2, …", "labels") from None

    def params(self) -> dict[str, Any]:
        return {"labels": self.labels}

    def onehot(self, z: Array) -> Array:
        if z.ndim not in (1, 2):
            raise OpError(
                f"cross_entropy needs logits of shape (C,) or (N, C), got {shape_text(z.shape)}",
                "shape",
            )
        labels = self.labels
        if z.ndim == 1:
            if not isinstance(labels, int):
                raise OpError(
                    "cross_entropy with logits of shape (C,) needs one int label", "labels"
                )
            rows = [labels]
        elif isinstance(labels, int) or len(labels) != z.shape[0]:
            raise OpError(
                f"cross_entropy with logits of shape {shape_text(z.shape)} needs "
                f"{z.shape[0]} int labels, one per row",
                "labels",
            )
        else:
            rows = labels
        classes = z.shape[-1]
        if classes == 0:
            raise OpError(
                f"cross_entropy needs at least one class: logits of shape {shape_text(z.shape)} "
                "have none",
                "shape",
            )
        for t in rows:
            if not 0 <= t < classes:
                raise OpError(f"label {t} is not a class of {classes} (0…{classes - 1})", "labels")
        onehot = np.zeros((len(rows), classes))
        onehot[np.arange(len(rows)), list(rows)] = 1.0
        return onehot.reshape(z.shape)

    def compute(self, z: Array) -> Array:
        onehot = self.onehot(z)
        shifted = z - np.max(z, axis=-1, keepdims=True)
        log_p = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
        rows = 1 if z.ndim == 1 else z.shape[0]
        return np.asarray(-np.sum(onehot * log_p) / rows)

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        z = ins[0]
        rows = 1 if z.ndim == 1 else z.shape[0]
        return (g * (m.softmax(z, -1) - self.onehot(z)) / float(rows),)


class Mse(Op):
    """L = mean((p − y)²);  p̄ += ū·2(p − y)/n,  ȳ += −ū·2(p − y)/n (n = elements)."""

    name, symbol, rules = "mse", "mse", ("ū·2({0}−{1})/n", "−ū·2({0}−{1})/n")

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        broadcast_shape(*shapes)
        return ()

    def work_elements(self, *shapes: tuple[int, ...]) -> int:
        """p − y is made at the broadcast shape, forward and backward: `mse` of (16384, 1)
        and (1, 16384) returns one number but computes 268 million."""
        return max(footprint(s) for s in (*shapes, broadcast_shape(*shapes)))

    def compute(self, p: Array, y: Array) -> Array:
        if p.size == 0 or y.size == 0:
            raise OpError("mse of an empty value: there is nothing to average", "shape")
        return np.asarray(np.mean((p - y) ** 2))

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        p, y = ins
        d = p - y
        scaled = g * 2.0 * d / float(max(d.size, 1))
        return (
            m.sum_to(scaled, p.shape) if needs[0] else None,
            m.sum_to(-scaled, y.shape) if needs[1] else None,
        )


# --- building nodes ----------------------------------------------------------------------------

OPS: dict[str, type[Op]] = {
    cls.name: cls
    for cls in (
        Add, Sub, Mul, Div, Pow, Maximum, Minimum, Neg, Exp, Log, Sqrt, Sin, Cos, Tanh,
        Sigmoid, Relu, Abs, MatMul, Sum, Mean, Reshape, Transpose, Index, Softmax, LogSoftmax,
        CrossEntropy, Mse,
    )
}  # fmt: skip


def is_finite(a: Array) -> bool:
    if type(a) is np.float64:
        return math.isfinite(a)
    return math.isfinite(a.item()) if a.ndim == 0 else bool(np.isfinite(a).all())


# --- running ops -------------------------------------------------------------------------------
#
# NumPy warns on overflow and 0/0; every op reports a non-finite result itself (by name), so the
# warnings are switched off. `np.errstate` costs more than a scalar op, so `quiet()` switches
# them off once around a whole build or backward pass; `apply` outside it pays per op.
#
# Whether a quiet() is open is a context variable, as NumPy's own error state is: each thread
# (and each asyncio task) has its own, and reading it costs less than a scalar multiply.

_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("gradtrace_quiet", default=False)
_is_quiet = _QUIET.get


class quiet:  # noqa: N801 - used as a function: `with quiet():`
    """NumPy's floating-point warnings off for a whole build or backward pass (re-entrant:
    inside another, it only tests a flag)."""

    __slots__ = ("errstate", "token")

    def __enter__(self) -> None:
        if _QUIET.get():
            self.errstate = None
            return
        self.errstate = np.errstate(all="ignore")
        self.errstate.__enter__()
        self.token = _QUIET.set(True)

    def __exit__(self, *exc: Any) -> None:
        if self.errstate is not None:
            _QUIET.reset(self.token)
            self.errstate.__exit__(*exc)


_F64 = np.float64
_ZERO = np.float64(0.0)
_ONE = np.float64(1.0)
_isfinite = math.isfinite


def apply(op: Op, *inputs: Any) -> Value:
    """Run `op` forward on `inputs` (Values, or numbers and arrays taken as constants)."""
    if op.elementwise:
        if len(inputs) == 2:
            return apply2(op, inputs[0], inputs[1])
        if len(inputs) == 1:
            return apply1(op, inputs[0])
    return _apply_arrays(op, tuple(lift(x) for x in inputs))


# The scalar fast path: the forward pass's innermost loop. An elementwise op on scalar Values
# has no shape to check; its kernel computes on NumPy float64 scalars (a tenth of the cost of
# 0-d arrays) and its node is made by `op_result`, told whether it needs a grad. A scalar
# leaf or constant holds a 0-d array: `[()]` reads it as a float64 scalar.


def apply2(op: Op, a: Any, b: Any) -> Value:
    """`apply` for an elementwise op with two inputs."""
    if type(a) is not Value:
        a = lift(a)
    if type(b) is not Value:
        b = lift(b)
    x = a.data
    if type(x) is not _F64:
        x = x[()] if not x.shape else None
    y = b.data
    if type(y) is not _F64:
        y = y[()] if not y.shape else None
    if x is None or y is None:
        return _apply_arrays(op, (a, b))
    if _is_quiet():
        out = op.scalar(x, y)  # type: ignore[attr-defined]
    else:
        with np.errstate(all="ignore"):
            out = op.scalar(x, y)  # type: ignore[attr-defined]
    if type(out) is not _F64:
        out = as_array(out)[()]
    if not _isfinite(out):
        raise OpError(non_finite_message(op, out), "non_finite")
    return op_result(out, op, (a, b), a.requires_grad or b.requires_grad)


def apply1(op: Op, a: Any) -> Value:
    """`apply` for an elementwise op with one input."""
    if type(a) is not Value:
        a = lift(a)
    x = a.data
    if type(x) is not _F64:
        if x.shape:
            return _apply_arrays(op, (a,))
        x = x[()]
    if _is_quiet():
        out = op.scalar(x)  # type: ignore[attr-defined]
    else:
        with np.errstate(all="ignore"):
            out = op.scalar(x)  # type: ignore[attr-defined]
    if type(out) is not _F64:
        out = as_array(out)[()]
    if not _isfinite(out):
        raise OpError(non_finite_message(op, out), "non_finite")
    return op_result(out, op, (a,), a.requires_grad)


def _apply_arrays(op: Op, nodes: tuple[Value, ...]) -> Value:
    """The general path: check the shapes, compute on arrays, check the result."""
    arrays = [x.data for x in nodes]
    op.out_shape(*(a.shape for a in arrays))
    if _is_quiet():
        out = op.compute(*arrays)
    else:
        with np.errstate(all="ignore"):
            out = op.compute(*arrays)
    if not is_finite(out):
        raise OpError(non_finite_message(op, out), "non_finite")
    return op_result(out if type(out) is np.ndarray else as_array(out), op, nodes)


def non_finite_message(op: Op, out: Array) -> str:
    """'gives NaN — log needs positive numbers…': the builder puts the source text first."""
    bad = "NaN (not a number)" if np.isnan(out).any() else "an infinite value"
    hint = f" — {op.domain_hint}" if op.domain_hint else ""
    return f"gives {bad}{hint}"


# Ops without parameters hold no state: one instance of each serves every node.
_ADD = Add()
_SUB = Sub()
_MUL = Mul()
_DIV = Div()
_POW = Pow()
_MAXIMUM = Maximum()
_MINIMUM = Minimum()
_NEG = Neg()
_EXP = Exp()
_LOG = Log()
_SQRT = Sqrt()
_SIN = Sin()
_COS = Cos()
_TANH = Tanh()
_SIGMOID = Sigmoid()
_RELU = Relu()
_ABS = Abs()
_MATMUL = MatMul()
_MSE = Mse()


def add(a: Any, b: Any) -> Value:
    return apply2(_ADD, a, b)


def sub(a: Any, b: Any) -> Value:
    return apply2(_SUB, a, b)


def mul(a: Any, b: Any) -> Value:
    return apply2(_MUL, a, b)


def div(a: Any, b: Any) -> Value:
    return apply2(_DIV, a, b)


def power(a: Any, b: Any) -> Value:
    return apply2(_POW, a, b)


def maximum(a: Any, b: Any) -> Value:
    return apply2(_MAXIMUM, a, b)


def minimum(a: Any, b: Any) -> Value:
    return apply2(_MINIMUM, a, b)


def neg(x: Any) -> Value:
    return apply1(_NEG, x)


def exp(x: Any) -> Value:
    return apply1(_EXP, x)


def log(x: Any) -> Value:
    return apply1(_LOG, x)


def sqrt(x: Any) -> Value:
    return apply1(_SQRT, x)


def sin(x: Any) -> Value:
    return apply1(_SIN, x)


def cos(x: Any) -> Value:
    return apply1(_COS, x)


def tanh(x: Any) -> Value:
    return apply1(_TANH, x)


def sigmoid(x: Any) -> Value:
    return apply1(_SIGMOID, x)


def relu(x: Any) -> Value:
    return apply1(_RELU, x)


def absolute(x: Any) -> Value:
    return apply1(_ABS, x)


def matmul(a: Any, b: Any) -> Value:
    return apply(_MATMUL, a, b)


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Value:  # noqa: A001
    return apply(Sum(axis, keepdims), x)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Value:
    return apply(Mean(axis, keepdims), x)


def reshape(x: Any, shape: Sequence[int]) -> Value:
    return apply(Reshape(tuple(shape)), x)


def transpose(x: Any, axes: Sequence[int] | None = None) -> Value:
    return apply(Transpose(None if axes is None else tuple(axes)), x)


def index(x: Any, key: Any) -> Value:
    return apply(Index(key if isinstance(key, tuple) else (key,)), x)


def softmax(z: Any, axis: int = -1) -> Value:
    return apply(Softmax(axis), z)


def log_softmax(z: Any, axis: int = -1) -> Value:
    return apply(LogSoftmax(axis), z)


def cross_entropy(z: Any, labels: int | Sequence[int]) -> Value:
    return apply(CrossEntropy(labels), z)


def mse(p: Any, y: Any) -> Value:
    return apply(_MSE, p, y)


def const(x: Any) -> Value:
    """Cut the graph: a constant with x's value (alias `detach`)."""
    return constant(np.array(x.data, dtype=np.float64) if isinstance(x, Value) else as_array(x))


detach = const


def _install_operators() -> None:
    """Give Value its operators, so `x*y + x` builds graph nodes. engine.autograd.value declares them
    for the type checker, which refuses an assignment to a declared method: hence setattr."""
    attached: dict[str, Any] = {
        "__add__": add,
        "__radd__": lambda self, other: add(other, self),
        "__sub__": sub,
        "__rsub__": lambda self, other: sub(other, self),
        "__mul__": mul,
        "__rmul__": lambda self, other: mul(other, self),
        "__truediv__": div,
        "__rtruediv__": lambda self, other: div(other, self),
        "__pow__": power,
        "__rpow__": lambda self, other: power(other, self),
        "__matmul__": matmul,
        "__rmatmul__": lambda self, other: matmul(other, self),
        "__neg__": neg,
        "__getitem__": lambda self, key: index(self, key),
        "T": property(lambda self: transpose(self)),
    }
    for method in ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu"):
        attached[method] = globals()[method]
    attached |= {
        "abs": absolute,
        "sum": sum,
        "mean": mean,
        "softmax": softmax,
        "log_softmax": log_softmax,
        "transpose": transpose,
        "reshape": reshape,
        "detach": const,
        "__array_ufunc__": None,  # `array * x` defers to __rmul__
    }
    for name, attr in attached.items():
        setattr(Value, name, attr)


_install_operators()
