"""Elementwise ops with one input: −x, exp, log, sqrt, sin, cos, tanh, sigmoid, relu, abs.

Each class states its maths in its docstring, computes it (`compute`), differentiates it
(`local`, for any Math) and, as the scalar fast path, computes both again on float64 scalars
(`scalar`, `scalar_grad`); then its facts (engine.autograd.ops.base.Op): its JVP rule's text
(the JVP itself is `local`'s, see Unary), what it saves, its grad_fn and its PyTorch and JAX
functions. The lower-case function under each class builds a node. A new elementwise op is
one class here and its entry in engine.autograd.ops.registry's OPS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.autograd.ops.base import SCALAR_MATH, TANGENT_MATH, Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import op_function

_F64 = np.float64
_ZERO = np.float64(0.0)


class Unary(Op):
    """An elementwise op of one value: its rule is `local`, x's contribution."""

    elementwise = True

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        return (self.local(g, ins[0], out, m),)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        raise NotImplementedError

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        """`local` with the tangent for ū: an elementwise op's Jacobian is diagonal, so its
        JVP and its VJP are the same product."""
        return self.local(t[0], x[0], out, TANGENT_MATH)  # type: ignore[no-any-return]

    def kink_at(self, *ins: Array) -> tuple[Array, ...]:
        return (ins[0],) if self.kink else ()

    def scalar(self, x: Any) -> Any:
        """`compute` on a float64 scalar."""
        return self.compute(x)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        """`local` on float64 scalars: x's contribution."""
        return self.local(g, x, out, SCALAR_MATH)


class Neg(Unary):
    """f(x) = −x;  x̄ += −ū."""

    name, symbol, rules = "neg", "-", ("−ū",)
    operator = "-"
    jvp_rule, saved, grad_fn_name = "−{d0}", (), "NegBackward0"
    torch_name, jax_name = "torch.neg", "jnp.negative"

    def compute(self, x: Array) -> Array:
        return -x

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return -g

    def scalar(self, x: Any) -> Any:
        return -x

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return -g


neg = op_function(Neg)


class Exp(Unary):
    """f(x) = eˣ;  x̄ += ū·eˣ."""

    name, symbol, rules = "exp", "exp", ("ū·{out}",)
    function, method = "exp", True
    domain_hint = "hint_exp"
    jvp_rule, saved, grad_fn_name = "{out}·{d0}", ("out",), "ExpBackward0"
    torch_name, jax_name = "torch.exp", "jnp.exp"

    def compute(self, x: Array) -> Array:
        return np.exp(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * out

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g * out


exp = op_function(Exp)


class Log(Unary):
    """f(x) = ln x;  x̄ += ū / x."""

    name, symbol, rules = "log", "log", ("ū/{0}",)
    function, method = "log", True
    domain_hint = "hint_log"
    jvp_rule, saved, grad_fn_name = "{d0}/{0}", ("in0",), "LogBackward0"
    torch_name, jax_name = "torch.log", "jnp.log"

    def compute(self, x: Array) -> Array:
        return np.log(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g / x

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g / x


log = op_function(Log)


class Sqrt(Unary):
    """f(x) = √x;  x̄ += ū / (2√x)."""

    name, symbol, rules = "sqrt", "sqrt", ("ū/(2·{out})",)
    function, method = "sqrt", True
    domain_hint = "hint_sqrt"
    jvp_rule, saved, grad_fn_name = "{d0}/(2·{out})", ("out",), "SqrtBackward0"
    torch_name, jax_name = "torch.sqrt", "jnp.sqrt"

    def compute(self, x: Array) -> Array:
        return np.sqrt(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g / (2.0 * out)

    def scalar(self, x: Any) -> Any:
        # √ is correctly rounded in IEEE arithmetic: math.sqrt and np.sqrt agree to the bit.
        return _F64(math.sqrt(x)) if x >= 0.0 else np.sqrt(x)  # √(negative): NaN, reported

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g / (2.0 * out)


sqrt = op_function(Sqrt)


class Sin(Unary):
    """f(x) = sin x;  x̄ += ū·cos x."""

    name, symbol, rules = "sin", "sin", ("ū·cos {0}",)
    function, method = "sin", True
    jvp_rule, saved, grad_fn_name = "cos {0}·{d0}", ("in0",), "SinBackward0"
    torch_name, jax_name = "torch.sin", "jnp.sin"

    def compute(self, x: Array) -> Array:
        return np.sin(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * m.cos(x)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g * np.cos(x)


sin = op_function(Sin)


class Cos(Unary):
    """f(x) = cos x;  x̄ += −ū·sin x."""

    name, symbol, rules = "cos", "cos", ("−ū·sin {0}",)
    function, method = "cos", True
    jvp_rule, saved, grad_fn_name = "−sin {0}·{d0}", ("in0",), "CosBackward0"
    torch_name, jax_name = "torch.cos", "jnp.cos"

    def compute(self, x: Array) -> Array:
        return np.cos(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return -g * m.sin(x)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return -g * np.sin(x)


cos = op_function(Cos)


class Tanh(Unary):
    """f(x) = tanh x;  x̄ += ū·(1 − tanh²x)."""

    name, symbol, rules = "tanh", "tanh", ("ū·(1−{out}²)",)
    function, method = "tanh", True
    jvp_rule, saved, grad_fn_name = "(1−{out}²)·{d0}", ("out",), "TanhBackward0"
    torch_name, jax_name = "torch.tanh", "jnp.tanh"

    def compute(self, x: Array) -> Array:
        return np.tanh(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * (1.0 - out * out)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g * (1.0 - out * out)


tanh = op_function(Tanh)


class Sigmoid(Unary):
    """f(x) = σ(x) = 1 / (1 + e⁻ˣ);  x̄ += ū·σ(x)·(1 − σ(x))."""

    name, symbol, rules = "sigmoid", "sigmoid", ("ū·{out}·(1−{out})",)
    function, method = "sigmoid", True
    jvp_rule, saved, grad_fn_name = "{out}·(1−{out})·{d0}", ("out",), "SigmoidBackward0"
    torch_name, jax_name = "torch.sigmoid", "jax.nn.sigmoid"

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


sigmoid = op_function(Sigmoid)


class Softplus(Unary):
    """f(x) = ln(1 + eˣ) (x itself past 20, as PyTorch's threshold);  x̄ += ū·σ(x)."""

    name, symbol, rules = "softplus", "softplus", ("ū·σ({0})",)
    function = "softplus"
    jvp_rule, saved, grad_fn_name = "σ({0})·{d0}", ("in0",), "SoftplusBackward0"
    torch_name, jax_name = "F.softplus", "jax.nn.softplus"

    def compute(self, x: Array) -> Array:
        return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        z = m.exp(m.where(x > 20.0, 0.0 * x, x))  # PyTorch's backward: ū·z/(z + 1), z = eˣ
        return m.where(x > 20.0, g, g * z / (z + 1.0))

    def scalar(self, x: Any) -> Any:
        return x if x > 20.0 else np.log1p(np.exp(x))

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        if x > 20.0:
            return g
        z = np.exp(x)
        return g * z / (z + 1.0)


softplus = op_function(Softplus)


class Relu(Unary):
    """f(x) = max(x, 0);  x̄ += ū·[x > 0] (0 at x = 0, as PyTorch)."""

    name, symbol, rules = "relu", "relu", ("ū·[{0} > 0]",)
    function, method = "relu", True
    jvp_rule, saved, grad_fn_name = "[{0} > 0]·{d0}", ("out",), "ReluBackward0"
    torch_name, jax_name = "torch.relu", "jax.nn.relu"
    kink = True

    def compute(self, x: Array) -> Array:
        return np.maximum(x, 0.0)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        # [relu(x) > 0] is [x > 0]: read from the output, which is what PyTorch keeps
        return g * m.mask(out > 0)

    def scalar(self, x: Any) -> Any:
        return x if x > 0.0 else _ZERO  # np.maximum(-0.0, 0.0) is +0.0 too

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g if out > 0.0 else g * 0.0  # ū·1 is ū; ū·0 keeps the sign of ū, as the mask does


relu = op_function(Relu)


class Abs(Unary):
    """f(x) = |x|;  x̄ += ū·sign(x) (0 at x = 0, as PyTorch)."""

    name, symbol, rules = "abs", "abs", ("ū·sign {0}",)
    function, method, api = "abs", True, "absolute"
    jvp_rule, saved, grad_fn_name = "sign {0}·{d0}", ("in0",), "AbsBackward0"
    torch_name, jax_name = "torch.abs", "jnp.abs"
    kink = True

    def compute(self, x: Array) -> Array:
        return np.abs(x)

    def local(self, g: Any, x: Any, out: Any, m: Math) -> Any:
        return g * m.sign(x)

    def scalar(self, x: Any) -> Any:
        return abs(x)

    def scalar_grad(self, g: Any, x: Any, out: Any) -> Any:
        return g * np.sign(x)


absolute = op_function(Abs)
