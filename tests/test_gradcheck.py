"""Central differences in float64, a second oracle independent of PyTorch: for every op, the
engine's backward agrees with the slope of the engine's own forward.

For a row of the op table (strategies.op_cases) and a random upstream w, the checked function is
L(inputs) = Σ f(inputs)·w; each input element is nudged by ±ε (ε = 1e-6, using the step that
float64 actually took) and (L(x+ε) − L(x−ε)) / 2ε is compared with the engine's gradient.
Relative error = max |analytic − numeric| / max(|analytic|, |numeric|), both zero is a pass,
and it must be below 1e-6. Inputs are drawn away from kinks (relu/abs at 0, max/min ties),
where central differences are not meaningful (ERRATA 4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import given

import engine.autograd.ops as O
from engine.autograd.backward import backward
from engine.autograd.value import constant, leaf
from tests.join_cases import join_cases
from tests.strategies import (
    ELEMENTWISE_BINARY,
    UNARY_OPS,
    OpCase,
    Program,
    bounded,
    build_engine,
    engine_grad,
    engine_value_and_grads,
    op_cases,
    programs,
)

EPS = 1e-6
TOLERANCE = 1e-6

CASES = [c for c in op_cases() + join_cases() if not c.kink]


def numeric_gradient(
    f: Callable[[list[np.ndarray]], float], arrays: Sequence[np.ndarray], eps: float = EPS
) -> list[np.ndarray]:
    """Central differences of a scalar function of several arrays, one element at a time."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            x = a[idx]
            plus, minus = x + eps, x - eps
            a[idx] = plus
            f_plus = f(arrays)
            a[idx] = minus
            f_minus = f(arrays)
            a[idx] = x
            g[idx] = (f_plus - f_minus) / (plus - minus)  # the step float64 really took
        grads.append(g)
        arrays[k] = a
    return grads


def relative_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    analytic, numeric = np.asarray(analytic), np.asarray(numeric)
    scale = max(np.abs(analytic).max(initial=0.0), np.abs(numeric).max(initial=0.0))
    if scale == 0.0:
        return 0.0  # both zero: a pass
    return float(np.abs(analytic - numeric).max() / scale)


def loss_of(case: OpCase, w: np.ndarray) -> Callable[[list[np.ndarray]], float]:
    def f(arrays: list[np.ndarray]) -> float:
        out = case.eng(*[constant(a.copy()) for a in arrays])
        return float(np.sum(out.data * w))

    return f


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_backward_matches_central_differences(case: OpCase) -> None:
    arrays = case.inputs(seed=2)
    _, grads, w = engine_value_and_grads(case, arrays)
    numeric = numeric_gradient(loss_of(case, w), arrays)
    for i, (g, n) in enumerate(zip(grads, numeric, strict=True)):
        err = relative_error(g, n)
        assert err < TOLERANCE, f"{case.id}: input {i}: relative error {err:.3g}\n{g}\n{n}"


def test_every_op_is_gradient_checked() -> None:
    assert {c.op for c in CASES} == set(O.OPS)


def test_the_checker_catches_a_wrong_gradient() -> None:
    """The oracle itself: a gradient off by 1e-5 relative fails it."""
    x = np.array([0.3, -1.2, 2.0])
    numeric = numeric_gradient(lambda a: float(np.sum(np.sin(a[0]))), [x])[0]
    assert relative_error(np.cos(x), numeric) < 1e-9
    assert relative_error(np.cos(x) * (1 + 1e-5), numeric) > TOLERANCE
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0


# --- whole programs: central differences on every leaf ------------------------------------------

KINKS = ("max", "min", "relu", "abs")
SMOOTH = tuple(k for k in ELEMENTWISE_BINARY + UNARY_OPS if k not in KINKS) + (
    "div", "pow_const", "pow_tensor", "matmul", "sum", "mean", "reshape", "transpose", "index",
    "softmax", "log_softmax", "cross_entropy", "mse",
)  # fmt: skip


def program_loss(prog: Program, w: np.ndarray | None) -> Callable[[list[np.ndarray]], float]:
    """The program's output (·w, summed) as a function of its leaves' values."""

    def f(arrays: list[np.ndarray]) -> float:
        saved = [e.value for e in prog.leaves]
        try:
            for e, a in zip(prog.leaves, arrays, strict=True):
                e.value = a.copy()
            _, out, _ = build_engine(prog)
        finally:
            for e, a in zip(prog.leaves, saved, strict=True):
                e.value = a
        return float(np.sum(out.data * (1.0 if w is None else w)))

    return f


@bounded(40)
@given(programs(tensors=True, kinds=SMOOTH, max_ops=6, leaf_range=(-1.5, 1.5)))
def test_random_smooth_programs_match_central_differences(prog: Program) -> None:
    leaves, out, _ = build_engine(prog)
    backward(out)
    arrays = [e.value for e in prog.leaves]
    numeric = numeric_gradient(program_loss(prog, None), arrays)
    for x, n in zip(leaves, numeric, strict=True):
        err = relative_error(engine_grad(x), n)
        # Programs compose up to a dozen ops: allow for the curvature this adds to ε².
        assert err < 1e-5, f"{x.name}: relative error {err:.3g}\n{prog.describe()}"


def test_gradcheck_of_a_hand_written_two_layer_net() -> None:
    rng = np.random.default_rng(11)
    X, W1, b1, W2 = (
        rng.normal(size=(4, 3)),
        rng.normal(size=(3, 5)),
        rng.normal(size=5),
        rng.normal(size=(5, 3)),
    )
    labels = [0, 2, 1, 2]

    def build(arrays: Sequence[np.ndarray], make=leaf):
        x, w1, c1, w2 = (make(a) for a in arrays)
        h = O.tanh(x @ w1 + c1)
        return (x, w1, c1, w2), O.cross_entropy(h @ w2, labels)

    nodes, loss = build([X, W1, b1, W2])
    backward(loss)
    numeric = numeric_gradient(
        lambda arrays: float(build(arrays, constant)[1].data), [X, W1, b1, W2]
    )
    for v, n in zip(nodes, numeric, strict=True):
        assert relative_error(v.grad, n) < TOLERANCE
