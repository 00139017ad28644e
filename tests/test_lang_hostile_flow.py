"""Hostile programs against functions and control flow: every limit holds for the new
constructs, each stops with a 413 that names its setting, well within a request's time — a
`while True:`, a huge trip count, exponential inlining (f calls g twice, g calls h twice, … 20
deep), deep nesting of defs, lambdas and ifs, comprehension bombs, rows of a big tensor."""

from __future__ import annotations

import time
from typing import Any

import pytest

from engine import ProgramError, run
from engine.limits import DEFAULT_LIMITS

SECONDS = 3.0  # far below the request deadline, on CI's slow cores too


def stopped(source: str, *limits: str, values: dict[str, Any] | None = None) -> ProgramError:
    """The program is refused by one of `limits`, quickly, naming it and its value."""
    start = time.perf_counter()
    with pytest.raises(ProgramError) as info:
        run(source, values)
    elapsed = time.perf_counter() - start
    e = info.value
    assert elapsed < SECONDS, f"{elapsed:.2f} s"
    assert e.limit in limits and e.status == 413, e.message
    assert e.limit in e.message and f"{getattr(DEFAULT_LIMITS, e.limit):,}" in e.message
    assert e.line is not None and e.column is not None
    return e


def doubling(depth: int, lam: bool) -> str:
    """f0 calls f1 twice, f1 calls f2 twice, …: 2**depth calls if inlined in full."""
    lines = []
    for i in range(depth - 1, -1, -1):
        body = f"f{i + 1}(x) + f{i + 1}(x)" if i < depth - 1 else "x"
        lines.append(f"f{i} = lambda x: {body}" if lam else f"def f{i}(x):\n    return {body}")
    return "\n".join(lines) + "\ny = f0(1.0)"


def test_while_true_ends_at_the_loop_limit() -> None:
    e = stopped("y = 1.0\nwhile True:\n    pass", "max_loop_iterations")
    assert (e.line, e.column) == (2, 1)


def test_a_while_with_a_huge_trip_count_ends_at_a_limit() -> None:
    stopped("i = 0.0\nwhile i < 10**9:\n    i = i + 1", "max_loop_iterations", "max_nodes")
    stopped("i = 0\nwhile i < 10**9:\n    i = i + 1\n    y = x", "max_loop_iterations", "max_nodes")


@pytest.mark.parametrize("lam", [False, True], ids=["def", "lambda"])
def test_exponential_inlining_is_refused_quickly(lam: bool) -> None:
    stopped(doubling(20, lam), "max_statements")


def test_calls_that_make_no_node_still_count() -> None:
    src = "g = lambda x: x\nf = lambda x: g(g(g(g(x))))\ny = [f(v) for v in range(100000)]"
    with pytest.raises(ProgramError) as info:
        run(src)
    assert info.value.limit in ("max_statements", "max_loop_iterations")


@pytest.mark.parametrize(
    "src",
    [
        "".join(" " * i + f"def f{i}(x):\n" for i in range(80)) + " " * 80 + "return x",
        "f = " + "lambda x: " * 200 + "x",
        "".join(" " * i + "if x > 0:\n" for i in range(80)) + " " * 80 + "y = x",
    ],
    ids=["defs", "lambdas", "ifs"],
)
def test_deep_nesting_is_refused_before_parsing_recursion(src: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ProgramError) as info:
        run(src)
    assert time.perf_counter() - start < SECONDS
    assert info.value.limit == "max_depth" and info.value.status == 413


def test_a_comprehension_over_a_huge_range_is_refused_before_it_runs() -> None:
    stopped("ys = [i for i in range(10**12)]\nL = x", "max_loop_iterations")
    stopped("ys = [i * j for i in range(1000) for j in range(1000)]\nL = x", "max_loop_iterations")


def test_looping_over_a_big_tensors_rows_stops_at_the_node_limit() -> None:
    stopped("X = zeros(4000, 2)\nL = sum([sum(r) for r in X])", "max_nodes", "max_statements")
    stopped("X = zeros(20000, 2)\nys = [r * 2 for r in X]\nL = x", "max_tensor_elements")


def test_a_deep_call_chain_stops_at_max_call_depth() -> None:
    n = DEFAULT_LIMITS.max_call_depth + 5
    chain = "".join(f"def f{i}(x):\n    return f{i + 1}(x)\n" for i in range(n))
    stopped(chain + f"def f{n}(x):\n    return x\ny = f0(1.0)", "max_call_depth")


def test_mutual_recursion_is_refused_at_once() -> None:
    start = time.perf_counter()
    with pytest.raises(ProgramError) as info:
        run("f = lambda x: g(x)\ng = lambda x: f(x)\ny = f(1.0)")
    assert info.value.code == "recursion" and time.perf_counter() - start < SECONDS


def test_escapes_stay_closed() -> None:
    for src in [
        "f = lambda: ().__class__\ny = f()",
        "def f(__x):\n    return 1\ny = f(1)",
        "y = [c for c in x.__class__.__bases__]",
        "print(x.__dict__)",
        "def f(x):\n    global y\n    return x",
    ]:
        with pytest.raises(ProgramError) as info:
            run(src)
        assert info.value.status == 400, (src, info.value.message)
