"""What an op makes inside it is bounded too: `Op.work_elements` states the elements of the
largest array its forward or backward makes, and the builder checks it against
max_tensor_elements before computing. A fused op whose result is small (mse gives one number)
can otherwise hide a huge intermediate (`mse(zeros(16384, 1), zeros(1, 16384))` made 268
million numbers). Here: each such op at the boundary (just under runs, just over is a 413 that
names the setting), the bomb refused without the memory, and, op by op, that work_elements
really bounds what compute and gradient allocate."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from engine import DEFAULT_LIMITS, Limits, ProgramError, run
from engine.autograd import ops
from engine.autograd.ops import ARRAY_MATH

N = DEFAULT_LIMITS.max_tensor_elements  # 16,384: a 128×128 matrix
# The boundaries are tested at a 16×16 limit: the same checks, and answers small enough for
# every other limit (the trace's own size is metered too).
SMALL = Limits(max_tensor_elements=256)


def refused(source: str, limits: Limits = SMALL) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(source, limits=limits)
    e = info.value
    assert e.status == 413 and e.limit == "max_tensor_elements", e.message
    assert "max_tensor_elements" in e.message and f"{limits.max_tensor_elements:,}" in e.message
    assert e.line is not None and e.column is not None
    return e


def runs(source: str, limits: Limits = SMALL) -> dict[str, Any]:
    return run(source, limits=limits).to_dict()


# Each: (what, a program whose op works on exactly 256 elements, the same one row over).
# Every input and every result is within max_tensor_elements: only the inside is too large.
BOUNDARY = [
    (
        "mse's broadcast p - y",
        "p = zeros(16, 1)\ny = zeros(1, 16)\nmse(p, y)",
        "p = zeros(17, 1)\ny = zeros(1, 16)\nmse(p, y)",
    ),
    (
        "matmul: B's gradient over the broadcast batch",
        "A = randn(4, 1, 16)\nB = randn(16, 4)\nsum(A @ B)",
        "A = randn(4, 1, 16)\nB = randn(16, 5)\nsum(A @ B)",
    ),
    (
        "matmul: A's gradient over the broadcast batch",
        "A = randn(4, 16)\nB = randn(4, 16, 1)\nsum(matmul(A, B))",
        "A = randn(5, 16)\nB = randn(4, 16, 1)\nsum(matmul(A, B))",
    ),
    (
        "matmul: both sides batched",
        "A = randn(2, 1, 4, 16)\nB = randn(1, 1, 16, 1)\nC = randn(1, 2, 1, 1)\nsum(A @ (B * C))",
        "A = randn(2, 1, 5, 16)\nB = randn(1, 1, 16, 1)\nC = randn(1, 2, 1, 1)\nsum(A @ (B * C))",
    ),
]


@pytest.mark.parametrize(("what", "under", "over"), BOUNDARY, ids=[b[0] for b in BOUNDARY])
def test_an_op_whose_inside_is_at_the_limit_runs_and_one_over_is_refused(
    what: str, under: str, over: str
) -> None:
    result = runs(under)
    assert all(np.size(n["value"]) <= SMALL.max_tensor_elements for n in result["nodes"])
    e = refused(over)
    assert "the inside of" in e.message  # the work check, not the size of a value
    assert e.line == over.count("\n") + 1


def test_the_mse_bomb_is_refused_before_its_memory_is_spent() -> None:
    tracemalloc.start()
    start = time.perf_counter()
    try:
        e = refused("mse(zeros(16384, 1), zeros(1, 16384))", DEFAULT_LIMITS)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert time.perf_counter() - start < 1.0
    assert peak < 50 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB"
    assert "268,435,456" in e.message and (e.line, e.column) == (1, 1)


def test_the_matmul_gradient_bomb_is_refused_at_the_default_limit() -> None:
    # (128, 1, 128) @ (128, 128): inputs and result 16,384 each, B's gradient 2,097,152.
    e = refused("A = randn(128, 1, 128)\nB = randn(128, 128)\nsum(A @ B)", DEFAULT_LIMITS)
    assert "2,097,152" in e.message


LABELS = "[" + ", ".join(str(i) for i in range(16)) + "]"


@pytest.mark.parametrize(
    "expr",
    [
        f"cross_entropy(Z, {LABELS})",
        "softmax(Z, axis=0).sum()",
        "log_softmax(Z).sum()",
        "mean(Z, axis=1).sum()",
        "Z[:, 1:].sum()",
        "transpose(Z).sum()",
        "reshape(Z, (256,)).sum()",
        "max(Z, 0.5).sum()",
        "(Z ** 2).sum()",
        "(Z @ Z).sum()",
    ],
)
def test_ops_that_make_nothing_larger_than_a_value_run_at_the_limit(expr: str) -> None:
    # Their inside is an input's size or the result's, both already within the limit.
    assert np.isfinite(runs(f"Z = randn(16, 16)\n{expr}")["value"])


@pytest.mark.parametrize(
    ("under", "over"),
    [
        # broadcasting: the result itself is the largest array
        ("zeros(16, 1) + zeros(1, 16)", "zeros(17, 1) + zeros(1, 16)"),
        # an empty value is charged as if its empty axes were 1: reducing them makes that much
        ("x = zeros(0, 16, 16)\nsum(x, axis=0)", "x = zeros(0, 16, 17)\nsum(x, axis=0)"),
        ("reshape(zeros(0), (0, 16, 16))", "reshape(zeros(0), (0, 16, 17))"),
        ("zeros(16, 0, 1) * zeros(1, 0, 16)", "zeros(17, 0, 1) * zeros(1, 0, 16)"),
    ],
)
def test_results_and_empty_values_at_the_boundary(under: str, over: str) -> None:
    runs(under)
    refused(over)


# --- op by op: work_elements bounds what compute and gradient allocate --------------------------

Shapes = tuple[tuple[int, ...], ...]
# Each op of engine.autograd.ops.OPS with the inputs that make its inside largest against its
# result.
WORST: list[tuple[Callable[[], ops.Op], Shapes]] = [
    (ops.Add, ((128, 1), (1, 128))),
    (ops.Sub, ((128, 1), (1, 128))),
    (ops.Mul, ((128, 1), (1, 128))),
    (ops.Div, ((128, 1), (1, 128))),
    (ops.Pow, ((128, 1), (1, 128))),
    (ops.Maximum, ((128, 1), (1, 128))),
    (ops.Minimum, ((128, 1), (1, 128))),
    (ops.Mse, ((128, 1), (1, 128))),
    (ops.MatMul, ((25, 1, 25), (25, 25))),  # B̄ starts as 25³, every input and the result 25²
    (ops.MatMul, ((25, 25), (25, 25, 1))),  # Ā likewise
    (ops.MatMul, ((128, 128), (128, 128))),
    (ops.MatMul, ((128,), (128, 128))),
    (lambda: ops.Sum(axis=0), ((128, 128),)),
    (lambda: ops.Mean(axis=(0, 1)), ((128, 128),)),
    (lambda: ops.Reshape((16384,)), ((128, 128),)),
    (ops.Transpose, ((128, 128),)),
    (lambda: ops.Index((slice(None), 0)), ((128, 128),)),
    (lambda: ops.Softmax(0), ((128, 128),)),
    (lambda: ops.LogSoftmax(0), ((128, 128),)),
    (lambda: ops.CrossEntropy(list(range(128))), ((128, 128),)),
    (lambda: ops.Cat(0, 2), ((64, 128), (64, 128))),
    (lambda: ops.Cat(1, 3), ((128, 1), (128, 126), (128, 1))),
    (lambda: ops.Stack(0, 2), ((64, 128), (64, 128))),
    (lambda: ops.Clamp(0.75, 1.25), ((128, 128),)),
    # the gradient scatters back into zeros of the input's shape: as large as the input
    (lambda: ops.Gather((tuple(range(128)), tuple(range(128)))), ((128, 128),)),
    (lambda: ops.Gather(((0,) * 16384,)), ((128,),)),
] + [(cls, ((128, 128),)) for cls in (ops.Neg, ops.Exp, ops.Log, ops.Sqrt, ops.Sin, ops.Cos,
                                       ops.Tanh, ops.Sigmoid, ops.Softplus, ops.Relu,
                                       ops.Abs)]  # fmt: skip
# A few temporaries of the work's size may be alive at once (sigmoid: e, 1 + e, the quotient…).
TEMPORARIES = 8


def test_the_table_covers_every_op() -> None:
    assert {make().name for make, _ in WORST} == set(ops.OPS)


@pytest.mark.parametrize(("make", "shapes"), WORST, ids=lambda v: getattr(v, "__name__", str(v)))
def test_work_elements_bounds_what_forward_and_backward_allocate(
    make: Callable[[], ops.Op], shapes: Shapes
) -> None:
    op = make()
    rng = np.random.default_rng(0)
    arrays = [rng.random(s) + 0.5 for s in shapes]  # positive: log, sqrt and pow are defined
    work = op.work_elements(*shapes)
    assert work <= N
    tracemalloc.start()
    try:
        with np.errstate(all="ignore"):
            out = op.compute(*arrays)
            op.gradient(np.ones(np.shape(out)), arrays, out, [True] * len(arrays), ARRAY_MATH)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= TEMPORARIES * 8 * work + 64 * 1024, (op.name, peak, work)
