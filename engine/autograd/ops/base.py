"""The op contract and what every op computes with: `Op`, the `Math` namespaces a gradient rule
runs on (ArrayMath, ScalarMath); shapes and the error an op raises are in ops/shapes.py.

Contract (after needle): `compute(*arrays) -> array` does the forward maths on float64 arrays.
`gradient(g, ins, out, needs, m)` gets the grad `g` arriving at the output, the inputs' values
`ins`, the output's value `out`, which inputs need a gradient, and a math namespace `m`; it
returns one contribution per input, already summed back to that input's shape (None where no
gradient is needed). Rules are written with operators and `m`'s functions only, so the same
rule runs on arrays (ArrayMath), on float64 scalars (ScalarMath) and on graph nodes
(engine.autograd.higher's GraphMath, for higher-order gradients): `gradient` is THE definition
of an op's derivative.
Before any of that, `out_shape(*shapes)` gives the result's shape and `work_elements(*shapes)`
the elements of the largest array the forward or backward makes, so that
engine/language/nodes.py can refuse an op over max_tensor_elements before it allocates anything.

`rules` is the chain-rule term per input for the trace, with `ū` the upstream grad, `{0}`, `{1}`
the inputs' labels and `{out}` the output's label: one term per input, written beside the
docstring that states the same maths.

Elementwise ops also have scalar kernels, the forward's and backward's innermost loop when every
value is a scalar: `scalar(x[, y])` and `scalar_grad(g, x[, y], out…)` take and give NumPy
float64 scalars. They are the same maths as `compute` and `gradient`, written without arrays or
namespaces, and give the same bits: +, −, ·, /, √ and comparisons are correctly rounded IEEE
operations however they are called, and exp, log, tanh, sin and cos call the same NumPy ufunc
as the array path (Python's `math` module, faster, differs from it in the last bit). Only pow's
rule keeps C's pow for `a^(b−1)`, as ScalarMath always did. tests/test_op_paths.py checks every
kernel of the registry against its op's `compute` and `gradient`.

Every other fact the lessons and the language need about an op is stated on its class too, so
that an op is one class (the Op docstring lists them); tests/test_op_facts.py checks each one
of every op against central differences, its own `gradient`, PyTorch 2.13 and JAX.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from engine.autograd.ops.shapes import footprint

if TYPE_CHECKING:
    from engine.autograd.value import Value

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


class TangentMath(ArrayMath):
    """ArrayMath for a rule run forward on tangents (an elementwise op's JVP is its gradient
    rule with the tangent for ū: its Jacobian is diagonal): nothing is summed back, so
    `sum_to` keeps the broadcast shape."""

    @staticmethod
    def sum_to(g: Array, shape: tuple[int, ...]) -> Array:
        return g


TANGENT_MATH = TangentMath()


def is_number(v: Value) -> bool:
    """Was `v` a Python number in the program (`2 - x`, `x ** 3`, `x.shape[0]`)? A scalar
    constant is taken as one: PyTorch passes a number to an op as a Scalar, not a Tensor, and
    names some nodes by it (RsubBackward1, PowBackward0). A 0-d `torch.tensor(2.)` constant is
    a Tensor in PyTorch but is a scalar constant here too: the node does not say which."""
    return v.kind == "const" and v.data.ndim == 0


def is_finite(a: Array) -> bool:
    if type(a) is np.float64:
        return math.isfinite(a)
    return math.isfinite(a.item()) if a.ndim == 0 else bool(np.isfinite(a).all())


class Op:
    """An operation: its name, how it is written, its forward maths and its local gradient.

    How it is written (engine.autograd.ops.registry derives the language's tables from these):
    `arity` values in; `operator`, the Python operator it is spelled with (`"+"`: `a + b`, and
    for arity 1 a prefix, `"-"`: `-x`); `function`, the function the language spells it with
    (`"exp"`: `exp(x)`), taking `keywords`; `method`, whether `x.function(…)` is a Value method
    too; `api`, the name of its function in engine.autograd.ops when that is not `name`
    (`power`, `absolute`: Python's builtins keep `pow` and `abs`).

    What the lessons read (every op states each; tests/test_op_facts.py checks them all):
    `jvp(x, t, out)` its forward-mode rule and `jvp_rule` that rule as the page writes it;
    `saves(needs)` the forward values its backward reads; `grad_fn(inputs)` PyTorch's name for
    its node; `torch_name`, `jax_name` the functions that compute it in each framework (the
    code lesson writes its calls with them); `kink` and `kink_at` where its derivative jumps
    (the gradient check flags a nudge across one).
    """

    name: ClassVar[str]
    symbol: ClassVar[str]
    rules: ClassVar[tuple[str, ...]]
    arity: ClassVar[int] = 1
    operator: ClassVar[str | None] = None
    function: ClassVar[str | None] = None
    keywords: ClassVar[tuple[str, ...]] = ()
    method: ClassVar[bool] = False
    api: ClassVar[str | None] = None
    # Why a non-finite result happens, for the error message: the key of its words
    # (msg_<key> in engine/words/en.json and zh.json), "" for none.
    domain_hint: ClassVar[str] = ""
    # Elementwise: on scalar inputs the result is a scalar and no shape check is needed (the
    # scalar fast path of `apply`).
    elementwise: ClassVar[bool] = False

    # The JVP rule as the forward-mode lesson writes it: {0}, {1} the inputs, {d0}, {d1} their
    # tangents, {out} the result, {all} every input's tangent in order (cat and stack), and
    # the names `rule_values` gives ({lo}, {hi}: clamp's bounds).
    jvp_rule: ClassVar[str]
    # What `saves` gives when it does not depend on which inputs need a gradient.
    saved: ClassVar[tuple[str, ...]]
    # PyTorch 2.13's grad_fn for this op's node, when it does not depend on the inputs.
    grad_fn_name: ClassVar[str | None]
    # The functions computing it in PyTorch (`torch.`, `F.` for torch.nn.functional) and JAX
    # (`jnp.` for jax.numpy, `jax.nn.`), as the code lesson writes them; None: there is none.
    torch_name: ClassVar[str | None]
    jax_name: ClassVar[str | None]
    # How the code lesson writes a call of it: the name of engine.lessons.code.writer.Writer's
    # method for that form ("by_name": the function above, applied to the arguments).
    # Its derivative jumps somewhere (relu and abs at 0, max and min at a tie, clamp at its
    # bounds): a central difference across that point is not a derivative.
    kink: ClassVar[bool] = False
    # The number that leaves the other input as it is, on the right (x + 0, x − 0, x·1, x/1),
    # and on the left too if `commutes`: grad() makes no node for such a step.
    unit: ClassVar[float | None] = None
    commutes: ClassVar[bool] = False

    def jvp(self, x: Sequence[Array], t: Sequence[Array], out: Array) -> Array:
        """The output's tangent, from the inputs' values `x`, their tangents `t` and the output
        value (forward mode: the Jacobian times the tangents)."""
        raise NotImplementedError

    def rule_values(self) -> dict[str, str]:
        """Names the op's rule texts use besides its inputs and output ({lo}, {hi}: clamp)."""
        return {}

    def saves(self, needs: Needs) -> tuple[str, ...]:
        """The forward values its backward reads, given which inputs need a gradient: "in0",
        "in1" (its inputs) or "out" (its result), as PyTorch's grad_fn saves them."""
        return self.saved

    def grad_fn(self, inputs: Sequence[Value]) -> str | None:
        """The grad_fn name PyTorch 2.13 gives this op's node, made from `inputs` (None: none
        that a lesson can say)."""
        return self.grad_fn_name

    def kink_at(self, *ins: Array) -> tuple[Array, ...]:
        """Where the derivative jumps, as values that are 0 there: a nudge that moves one
        across 0 (or off it) crossed a kink."""
        return ()

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
