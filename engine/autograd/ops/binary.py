"""Elementwise ops with two inputs, under NumPy broadcasting: + − · / ** max min.

Each class states its maths in its docstring, computes it (`compute`), differentiates it
(`gradient`, for any Math) and, as the scalar fast path, computes both again on float64
scalars (`scalar`, `scalar_grad`); then its facts (engine.autograd.ops.base.Op): its JVP rule's
text (the JVP itself is `gradient`'s, see Binary), what it saves, its grad_fn and its PyTorch
and JAX functions. The lower-case function under each class builds a node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.ops.base import (
    SCALAR_MATH,
    TANGENT_MATH,
    Array,
    Grads,
    Math,
    Needs,
    Op,
    is_number,
)
from engine.autograd.ops.forward import op_function
from engine.autograd.ops.shapes import broadcast_shape

if TYPE_CHECKING:
    from engine.autograd.value import Value

_ZERO = np.float64(0.0)
_ONE = np.float64(1.0)


class Binary(Op):
    """An elementwise op of two values, broadcast as NumPy does."""

    arity = 2
    domain_hint = "hint_overflow"
    elementwise = True

    def out_shape(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        return broadcast_shape(*shapes)

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        """`gradient`'s term for each input with that input's tangent for ū, not summed back
        (an elementwise op's Jacobian is diagonal). An input whose tangent is 0 adds nothing,
        and no 0·∞ either (pow's ln of a negative base, where the exponent is a constant)."""
        total = np.zeros(np.shape(out))
        for i, ti in enumerate(t):
            if np.any(ti):
                term: Any = self.gradient(ti, x, out, (i == 0, i == 1), TANGENT_MATH)[i]
                total = total + term
        return total

    def kink_at(self, *ins: Array) -> tuple[Array, ...]:
        return (np.asarray(ins[0] - ins[1]),) if self.kink else ()

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
    operator = "+"
    jvp_rule, saved, grad_fn_name = "{d0} + {d1}", (), "AddBackward0"
    torch_name, jax_name = "torch.add", "jnp.add"
    unit, commutes = 0.0, True

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


add = op_function(Add)


class Sub(Binary):
    """f(a, b) = a − b;  ā += ū,  b̄ += −ū."""

    name, symbol, rules = "sub", "-", ("ū", "−ū")
    operator = "-"
    jvp_rule, saved = "{d0} − {d1}", ()
    torch_name, jax_name = "torch.sub", "jnp.subtract"
    unit = 0.0

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        return "RsubBackward1" if is_number(inputs[0]) else "SubBackward0"  # 2 - x: rsub(x, 2)

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


sub = op_function(Sub)


class Mul(Binary):
    """f(a, b) = a·b;  ā += ū·b,  b̄ += ū·a."""

    name, symbol, rules = "mul", "*", ("ū·{1}", "ū·{0}")
    operator = "*"
    jvp_rule, grad_fn_name = "{d0}·{1} + {0}·{d1}", "MulBackward0"
    torch_name, jax_name = "torch.mul", "jnp.multiply"
    unit, commutes = 1.0, True

    def saves(self, needs: Needs) -> tuple[str, ...]:
        return (("in1",) if needs[0] else ()) + (("in0",) if needs[1] else ())  # the other one

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


mul = op_function(Mul)


class Div(Binary):
    """f(a, b) = a / b;  ā += ū / b,  b̄ += −ū·a / b²."""

    name, symbol, rules = "div", "/", ("ū/{1}", "−ū·{0}/{1}²")
    operator = "/"
    domain_hint = "hint_division_by_zero"
    jvp_rule = "{d0}/{1} − {0}·{d1}/{1}²"
    torch_name, jax_name = "torch.div", "jnp.divide"
    unit = 1.0

    def saves(self, needs: Needs) -> tuple[str, ...]:
        return ("in1", "in0") if needs[1] else ("in1",)

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        return "MulBackward0" if is_number(inputs[0]) else "DivBackward0"  # 2 / x: x⁻¹·2

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


div = op_function(Div)


class Pow(Binary):
    """f(a, b) = a^b;  ā += ū·b·a^(b−1) (0 where b = 0),  b̄ += ū·a^b·ln a (0 where a = 0, b ≥ 0).

    The two masks are PyTorch's, so x**0 and 0**y have the gradients PyTorch reports.
    """

    name, symbol, rules = "pow", "**", ("ū·{1}·{0}^({1}−1)", "ū·{out}·ln {0}")
    operator, api = "**", "power"
    domain_hint = "hint_pow"
    jvp_rule = "{1}·{0}^({1}−1)·{d0} + {out}·ln {0}·{d1}"
    torch_name, jax_name = "torch.pow", "jnp.power"

    def saves(self, needs: Needs) -> tuple[str, ...]:
        return ("in0", "in1", "out") if needs[1] else ("in0", "in1")

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        """x ** 2 is PowBackward0 (a number exponent), 2 ** x PowBackward2 (a number base),
        x ** y PowBackward1."""
        if is_number(inputs[1]):
            return "PowBackward0"
        return "PowBackward2" if is_number(inputs[0]) else "PowBackward1"

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


power = op_function(Pow)


class Maximum(Binary):
    """f(a, b) = max(a, b) elementwise;  the larger input takes ū, a tie gives ū/2 to each."""

    name, symbol, rules = "max", "max", ("ū·[{0} ≥ {1}]", "ū·[{1} ≥ {0}]")
    function, api = "max", "maximum"
    jvp_rule = "[{0} ≥ {1}]·{d0} + [{1} ≥ {0}]·{d1}"
    saved, grad_fn_name, kink = ("in0", "in1"), "MaximumBackward0", True
    torch_name, jax_name = "torch.maximum", "jnp.maximum"

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


maximum = op_function(Maximum)


class Minimum(Binary):
    """f(a, b) = min(a, b) elementwise;  the smaller input takes ū, a tie gives ū/2 to each."""

    name, symbol, rules = "min", "min", ("ū·[{0} ≤ {1}]", "ū·[{1} ≤ {0}]")
    function, api = "min", "minimum"
    jvp_rule = "[{0} ≤ {1}]·{d0} + [{1} ≤ {0}]·{d1}"
    saved, grad_fn_name, kink = ("in0", "in1"), "MinimumBackward0", True
    torch_name, jax_name = "torch.minimum", "jnp.minimum"

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


minimum = op_function(Minimum)
