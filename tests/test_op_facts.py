"""Every fact an op states about itself (engine.autograd.ops.base.Op), checked for every op of
the registry (OPS) and the ops only gradients make (GRADIENT_OPS), from one row per op in ROWS:

- `jvp` against central differences of `compute`, and against `gradient` (⟨u, J·t⟩ = ⟨Jᵀ·u, t⟩);
  `jvp_rule` names only the inputs, tangents and values the op has;
- `saves` against what `gradient` reads: the values it does not save are replaced by NaN, and
  the gradient must not change, for every choice of which inputs need one;
- `grad_fn` against PyTorch 2.13 building the same op (`type(y.grad_fn).__name__`), and where it
  depends on the inputs (a number operand, matmul's shapes, reshape after views, index keys)
  against PyTorch over many such inputs;
- `torch_name` and `jax_name` resolve in torch and in JAX and compute what `compute` computes,
  and the code lesson has a spelling for each function of an op;
- `kink`: where `kink_at` says 0 the one-sided derivatives differ; elsewhere there is none.

A new op is one row here: its instance, inputs, and how PyTorch builds it when that is not its
`torch_name` applied to the inputs.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.nn
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine.autograd.ops as O
from engine.autograd.ops import ARRAY_MATH, GRADIENT_OPS, OPS, Op, apply
from engine.autograd.ops.gather import ScatterAdd
from engine.autograd.ops.gradients import BroadcastTo, Scatter, Where
from engine.autograd.value import Value, constant, leaf
from engine.lessons.code.spellings import OPS as SPELLINGS

RNG = np.random.default_rng(20)
T64 = torch.float64


def vec(*shape: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return RNG.uniform(low, high, shape)


def positive(*shape: int) -> np.ndarray:
    return vec(*shape, low=0.5, high=2.0)


def away_from_zero(*shape: int) -> np.ndarray:
    return RNG.choice([-1.0, 1.0], shape) * positive(*shape)


def torch_grad_of(view: Callable[[torch.Tensor], torch.Tensor], shape: tuple[int, ...]) -> Any:
    """PyTorch's gradient of `view` (under create_graph) as a function of the incoming grad u:
    the node it makes is the one grad() makes for the same gradient."""

    def build(u: torch.Tensor) -> torch.Tensor:
        x = torch.zeros(shape, dtype=T64, requires_grad=True)
        return torch.autograd.grad(view(x), x, u, create_graph=True)[0]

    return build


@dataclass
class Row:
    """An op, inputs it is defined at, how PyTorch builds it (None: its torch_name applied to
    the inputs), and inputs at one of its kinks."""

    op: Op
    inputs: list[np.ndarray]
    torch: Callable[..., torch.Tensor] | None = None
    kink: list[np.ndarray] | None = field(default=None)


COND = np.array([True, False, True])
ROWS: dict[str, Row] = {
    "add": Row(O.Add(), [vec(2, 3), vec(3)]),
    "sub": Row(O.Sub(), [vec(2, 3), vec(3)]),
    "mul": Row(O.Mul(), [vec(2, 3), vec(3)]),
    "div": Row(O.Div(), [vec(2, 3), away_from_zero(3)]),
    "pow": Row(O.Pow(), [positive(2, 3), vec(3)]),
    "max": Row(O.Maximum(), [vec(3), vec(3)], kink=[np.array([0.5, 1.0]), np.array([0.5, 1.0])]),
    "min": Row(O.Minimum(), [vec(3), vec(3)], kink=[np.array([0.5, 1.0]), np.array([0.5, 1.0])]),
    "neg": Row(O.Neg(), [vec(4)]),
    "exp": Row(O.Exp(), [vec(4)]),
    "log": Row(O.Log(), [positive(4)]),
    "sqrt": Row(O.Sqrt(), [positive(4)]),
    "sin": Row(O.Sin(), [vec(4)]),
    "cos": Row(O.Cos(), [vec(4)]),
    "tanh": Row(O.Tanh(), [vec(4)]),
    "sigmoid": Row(O.Sigmoid(), [vec(4)]),
    "softplus": Row(O.Softplus(), [vec(4)]),
    "relu": Row(O.Relu(), [away_from_zero(4)], kink=[np.zeros(2)]),
    "abs": Row(O.Abs(), [away_from_zero(4)], kink=[np.zeros(2)]),
    "matmul": Row(O.MatMul(), [vec(2, 3), vec(3, 4)]),
    "sum": Row(O.Sum(axis=1), [vec(2, 3)], lambda x: torch.sum(x, dim=1)),
    "mean": Row(O.Mean(), [vec(2, 3)]),
    "reshape": Row(O.Reshape((3, 2)), [vec(2, 3)], lambda x: x.reshape(3, 2)),
    "transpose": Row(O.Transpose(), [vec(2, 3)], lambda x: x.permute(1, 0)),
    "index": Row(O.Index((0, slice(1, None))), [vec(2, 3)], lambda x: x[0, 1:]),
    "softmax": Row(O.Softmax(axis=1), [vec(2, 3)], lambda x: torch.softmax(x, dim=1)),
    "log_softmax": Row(O.LogSoftmax(axis=0), [vec(2, 3)], lambda x: torch.log_softmax(x, dim=0)),
    "cross_entropy": Row(
        O.CrossEntropy([0, 2]), [vec(2, 3)], lambda z: F.cross_entropy(z, torch.tensor([0, 2]))
    ),
    "mse": Row(O.Mse(), [vec(2, 3), vec(2, 3)]),
    "cat": Row(O.Cat(0, 2), [vec(2), vec(3)], lambda *xs: torch.cat(xs, dim=0)),
    "stack": Row(O.Stack(1, 2), [vec(3), vec(3)], lambda *xs: torch.stack(xs, dim=1)),
    "clamp": Row(
        O.Clamp(-0.5, 0.5),
        [np.array([-1.5, -0.25, 0.1, 0.75, 2.0])],
        lambda x: torch.clamp(x, -0.5, 0.5),
        kink=[np.array([-0.5, 0.0])],
    ),
    "gather": Row(O.Gather(((0, 2, 0),)), [vec(3)], lambda x: x[[0, 2, 0]]),
    "broadcast_to": Row(BroadcastTo((2, 3)), [vec(3)], lambda x: torch.broadcast_to(x, (2, 3))),
    "scatter": Row(Scatter((2, 3), (0,)), [vec(3)], torch_grad_of(lambda x: x[0], (2, 3))),
    "where": Row(Where(COND), [vec(3), vec(3)], lambda a, b: torch.where(torch.tensor(COND), a, b)),
    "scatter_add": Row(
        ScatterAdd((3,), ((0, 2, 0),)), [vec(3)], torch_grad_of(lambda x: x[[0, 2, 0]], (3,))
    ),
}
ALL = {**OPS, **GRADIENT_OPS}
NAMES = sorted(ROWS)


def tensors(arrays: list[np.ndarray], grad: bool = True) -> list[torch.Tensor]:
    return [torch.tensor(a, dtype=T64, requires_grad=grad) for a in arrays]


def resolve(name: str, roots: dict[str, Any]) -> Any:
    """`torch.tanh`, `F.mse_loss`, `jax.nn.sigmoid` as an object, by attribute from its root."""
    first, *rest = name.split(".")
    found = roots[first]
    for part in rest:
        found = getattr(found, part)
    return found


TORCH_ROOTS = {"torch": torch, "F": F}
JAX_ROOTS = {"jnp": jnp, "jax": jax}


def torch_build(row: Row) -> Callable[..., torch.Tensor]:
    if row.torch is not None:
        return row.torch
    assert row.op.torch_name is not None, row.op.name
    return resolve(row.op.torch_name, TORCH_ROOTS)  # type: ignore[no-any-return]


def test_every_op_has_a_row() -> None:
    assert set(ROWS) == set(ALL)
    for name, row in ROWS.items():
        assert type(row.op) is ALL[name]


@pytest.mark.parametrize("name", NAMES)
def test_each_fact_is_stated(name: str) -> None:
    op = ROWS[name].op
    cls = type(op)
    assert cls.jvp is not Op.jvp, f"{name} has no jvp"
    assert isinstance(op.jvp_rule, str) and op.jvp_rule
    assert all(isinstance(op.saves(needs), tuple) for needs in needs_of(len(ROWS[name].inputs)))
    assert cls.grad_fn is not Op.grad_fn or isinstance(op.grad_fn_name, str | None)
    assert isinstance(op.torch_name, str | None) and isinstance(op.jax_name, str | None)
    assert isinstance(op.kink, bool)
    assert op.unit is None or op.arity == 2


@pytest.mark.parametrize("name", NAMES)
def test_the_jvp_rule_names_only_what_the_op_has(name: str) -> None:
    row = ROWS[name]
    n = len(row.inputs)
    allowed = {"out", "all", *map(str, range(n)), *(f"d{i}" for i in range(n))}
    used = set(re.findall(r"\{(\w+)\}", row.op.jvp_rule))
    assert used <= allowed | set(row.op.rule_values()), used
    assert any(u.startswith("d") or u == "all" for u in used)  # a tangent is in it


# --- jvp ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_jvp_is_the_derivative_of_compute(name: str) -> None:
    row, op = ROWS[name], ROWS[name].op
    x = row.inputs
    out = op.compute(*x)
    h = 1e-6
    for _ in range(3):
        t = [RNG.standard_normal(a.shape) for a in x]
        jvp = np.broadcast_to(op.jvp(x, t, out), out.shape)
        up = op.compute(*(a + h * ta for a, ta in zip(x, t, strict=True)))
        down = op.compute(*(a - h * ta for a, ta in zip(x, t, strict=True)))
        np.testing.assert_allclose(jvp, (up - down) / (2 * h), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", NAMES)
def test_the_jvp_and_the_gradient_are_one_jacobian(name: str) -> None:
    """⟨u, J·t⟩ = ⟨Jᵀ·u, t⟩: forward mode and reverse mode differentiate the same function."""
    row, op = ROWS[name], ROWS[name].op
    x = row.inputs
    out = np.asarray(op.compute(*x))
    t = [RNG.standard_normal(a.shape) for a in x]
    u = RNG.standard_normal(out.shape)
    jvp = np.broadcast_to(op.jvp(x, t, out), out.shape)
    vjp = op.gradient(u, x, out, [True] * len(x), ARRAY_MATH)
    back = sum(float(np.sum(np.asarray(g) * ti)) for g, ti in zip(vjp, t, strict=True))
    assert float(np.sum(u * jvp)) == pytest.approx(back, rel=1e-9, abs=1e-12)


# --- saves ----------------------------------------------------------------------------------


def needs_of(n: int) -> list[tuple[bool, ...]]:
    return [needs for needs in itertools.product([True, False], repeat=n) if any(needs)]


@pytest.mark.parametrize("name", NAMES)
def test_what_an_op_saves_is_all_its_gradient_reads(name: str) -> None:
    row, op = ROWS[name], ROWS[name].op
    x = row.inputs
    out = np.asarray(op.compute(*x))
    g = RNG.standard_normal(out.shape)
    for needs in needs_of(len(x)):
        saved = op.saves(needs)
        assert set(saved) <= {"out", *(f"in{i}" for i in range(len(x)))}, saved
        want = op.gradient(g, x, out, needs, ARRAY_MATH)
        hidden = [a if f"in{i}" in saved else np.full(a.shape, np.nan) for i, a in enumerate(x)]
        blind_out = out if "out" in saved else np.full(out.shape, np.nan)
        with np.errstate(all="ignore"):
            got = op.gradient(g, hidden, blind_out, needs, ARRAY_MATH)
        for i, need in enumerate(needs):
            if need:
                assert np.array_equal(got[i], want[i]), f"{name} reads more than {saved}: {needs}"


# --- grad_fn --------------------------------------------------------------------------------


def ours(op: Op, inputs: list[Value]) -> str | None:
    return apply(op, *inputs).op.grad_fn(inputs)  # type: ignore[union-attr]


def theirs(y: torch.Tensor) -> str | None:
    return None if y.grad_fn is None else type(y.grad_fn).__name__


@pytest.mark.parametrize("name", NAMES)
def test_grad_fn_is_the_one_pytorch_makes(name: str) -> None:
    row = ROWS[name]
    with np.errstate(all="ignore"):
        predicted = ours(row.op, [leaf(a) for a in row.inputs])
    assert predicted == theirs(torch_build(row)(*tensors(row.inputs))), name


@pytest.mark.parametrize("symbol", ["+", "-", "*", "/", "**"])
def test_grad_fn_of_an_operator_knows_a_number_operand(symbol: str) -> None:
    """2 - x is RsubBackward1, 2 / x MulBackward0, x ** 2 PowBackward0, 2 ** x PowBackward2."""
    cls = O.BINARY_OPERATORS[symbol]
    python = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}
    fn = python.get(symbol, operator.pow)
    x = positive(3)
    for left, right in [(True, False), (False, True), (False, False)]:  # True: a number
        a = constant(2.0) if left else leaf(x)
        b = constant(3.0) if right else leaf(x)
        ta = 2.0 if left else torch.tensor(x, dtype=T64, requires_grad=True)
        tb = 3.0 if right else torch.tensor(x, dtype=T64, requires_grad=True)
        assert ours(cls(), [a, b]) == theirs(fn(ta, tb)), (symbol, left, right)


def matmul_shapes() -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Sides of 1 to 4 dims, batches of 1 or 3 (broadcast), rows and columns of 1 or 2."""
    shapes = []
    for da, db in itertools.product(range(1, 5), repeat=2):
        for _ in range(4):
            m, k, n = (int(v) for v in RNG.choice([1, 2], 3))
            a = (k,) if da == 1 else (*RNG.choice([1, 3], da - 2), m, k)
            b = (k,) if db == 1 else (*RNG.choice([1, 3], db - 2), k, n)
            shapes.append((tuple(int(v) for v in a), tuple(int(v) for v in b)))
    return shapes


def test_grad_fn_of_matmul_follows_torch_matmul_for_every_kind_of_side() -> None:
    for sa, sb in matmul_shapes():
        for ga, gb in [(True, True), (True, False), (False, True)]:
            a, b = vec(*sa), vec(*sb)
            x = leaf(a) if ga else constant(a)
            y = leaf(b) if gb else constant(b)
            ta = torch.tensor(a, dtype=T64, requires_grad=ga)
            tb = torch.tensor(b, dtype=T64, requires_grad=gb)
            assert ours(O.MatMul(), [x, y]) == theirs(ta @ tb), (sa, sb, ga, gb)


def random_key(shape: tuple[int, ...]) -> tuple[int | slice, ...]:
    """Ints and non-empty slices (some of a whole axis) for the first few axes of `shape`."""
    key: list[int | slice] = []
    for n in shape[: int(RNG.integers(1, len(shape) + 1))]:
        kind = RNG.integers(3)
        if kind == 0:
            key.append(int(RNG.integers(-n, n)))
        elif kind == 1:
            key.append(slice(None))
        else:
            start = int(RNG.integers(0, n))
            key.append(slice(start, None, int(RNG.choice([1, 2]))))
    return tuple(key)


def torch_key(key: tuple[int | slice, ...]) -> Any:
    """The key as the code writes it: x[1:] for one part (not x[(1:,)]), x[0, 1:] for more."""
    return key[0] if len(key) == 1 else key


def reshape_target(shape: tuple[int, ...]) -> tuple[int, ...]:
    n = math.prod(shape)
    targets = [shape, (n,), (1, n), (n, 1)] + [(d, n // d) for d in range(2, n) if n % d == 0]
    return targets[int(RNG.integers(len(targets)))]


def test_grad_fn_of_views_follows_pytorchs_layout() -> None:
    """Chains of transposes, indexing and reshapes, each node's grad_fn against PyTorch's:
    reshape is a view, an alias or a copy as the layout its input has in PyTorch allows."""
    checked = 0
    for _ in range(300):
        shape = tuple(int(v) for v in RNG.integers(1, 4, int(RNG.integers(1, 4))))
        a = vec(*shape)
        node: Value = leaf(a)
        t = torch.tensor(a, dtype=T64, requires_grad=True)
        for _ in range(int(RNG.integers(1, 4))):
            kind = RNG.integers(3) if node.data.ndim else 2
            if kind == 0:
                axes = tuple(int(i) for i in RNG.permutation(node.data.ndim))
                node, t = apply(O.Transpose(axes), node), t.permute(*axes)
            elif kind == 1:
                key = random_key(node.data.shape)
                node, t = apply(O.Index(key), node), t[torch_key(key)]
            else:
                target = reshape_target(node.data.shape)
                node, t = apply(O.Reshape(target), node), t.reshape(target)
            assert node.op is not None
            assert node.op.grad_fn(node.inputs) == theirs(t), (node.op, node.inputs[0].shape)
            checked += 1
    assert checked > 500


def test_grad_fn_of_a_scatter_is_the_backward_of_its_index() -> None:
    for _ in range(100):
        shape = tuple(int(v) for v in RNG.integers(1, 4, int(RNG.integers(1, 4))))
        key = random_key(shape)
        u = vec(*np.zeros(shape)[key].shape)
        x = torch.zeros(shape, dtype=T64, requires_grad=True)
        tu = torch.tensor(u, dtype=T64, requires_grad=True)
        made = torch.autograd.grad(x[torch_key(key)], x, tu, create_graph=True)[0]
        expected = None if made is tu else theirs(made)
        assert ours(Scatter(shape, key), [leaf(u)]) == expected, (shape, key)


@pytest.mark.parametrize("axis", [None, 0, (0, 1)])
def test_grad_fn_of_a_reduction_says_whether_it_had_axes(axis: Any) -> None:
    a = vec(2, 3)
    for cls, fn in [(O.Sum, torch.sum), (O.Mean, torch.mean)]:
        t = torch.tensor(a, dtype=T64, requires_grad=True)
        made = fn(t) if axis is None else fn(t, dim=axis)
        assert ours(cls(axis), [leaf(a)]) == theirs(made)


# --- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_torch_function_computes_the_op(name: str) -> None:
    row = ROWS[name]
    if row.op.torch_name is not None:
        assert callable(resolve(row.op.torch_name, TORCH_ROOTS)), row.op.torch_name
    with np.errstate(all="ignore"):
        want = row.op.compute(*row.inputs)
    got = torch_build(row)(*tensors(row.inputs)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", NAMES)
def test_the_jax_function_exists_and_computes_the_op(name: str) -> None:
    row = ROWS[name]
    if row.op.jax_name is None:
        return
    fn = resolve(row.op.jax_name, JAX_ROOTS)
    assert callable(fn), row.op.jax_name
    if row.torch is None:  # its function of the inputs alone: the same numbers in JAX
        with jax.enable_x64(True):
            got = np.asarray(fn(*(jnp.asarray(a) for a in row.inputs)))
        np.testing.assert_allclose(got, row.op.compute(*row.inputs), rtol=1e-12, atol=1e-14)


def test_ops_without_a_function_are_written_otherwise() -> None:
    """No PyTorch function: an operator or indexing (x[key]), or made only inside grad(); no
    JAX function: written out of others (mse, cross_entropy) or not written at all."""
    no_torch = {name for name, cls in ALL.items() if cls.torch_name is None}
    assert no_torch == {"index", "gather", "scatter", "scatter_add"}
    no_jax = {name for name, cls in ALL.items() if cls.jax_name is None}
    assert no_jax == no_torch | {"mse", "cross_entropy"}


@pytest.mark.parametrize("name", sorted(O.FUNCTIONS))
def test_each_function_of_an_op_has_a_spelling_in_the_code_lesson(name: str) -> None:
    """The code lesson writes every function of an op (an elementwise one by the op's own
    torch_name and jax_name, from the registry: a new op needs no spelling of its own)."""
    cls = O.FUNCTIONS[name]
    assert name in SPELLINGS, name
    if cls.elementwise and cls.arity == 1:
        assert cls.torch_name is not None and cls.jax_name is not None, name


# --- kinks ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_a_kink_is_where_the_op_says(name: str) -> None:
    row, op = ROWS[name], ROWS[name].op
    assert bool(row.kink) == op.kink, "a kink op has a row at its kink, and only a kink op"
    marks = op.kink_at(*row.inputs)
    assert bool(marks) == op.kink
    assert not any(np.any(m == 0) for m in marks)  # the row's inputs are off the kink
    if row.kink is None:
        return
    assert any(np.any(m == 0) for m in op.kink_at(*row.kink))
    # there, the derivative from the right and from the left differ
    t = [np.ones_like(row.kink[0])] + [np.zeros_like(a) for a in row.kink[1:]]
    h = 1e-6

    def f(s: float) -> float:
        return float(np.sum(op.compute(*(a + s * ta for a, ta in zip(row.kink, t, strict=True)))))

    right, left = (f(h) - f(0)) / h, (f(0) - f(-h)) / h
    assert abs(right - left) > 0.5, (right, left)
