"""What a program costs the server is counted before the work (engine/tracing/cost.py): the numbers
its trace will record, and those its lessons add to the answer, each refused (413, naming the
setting) before the memory is spent; and the README's bound on an answer's size holds."""

from __future__ import annotations

import json
import time
import tracemalloc
from dataclasses import replace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import app
from engine import ProgramError, run
from engine.lessons import LESSONS, run_lessons
from engine.limits import DEFAULT_LIMITS, Limits
from engine.program import run_program
from engine.tracing.cost import AnswerBudget, count_numbers

# The first round's memory bomb: 66 characters that recorded 65 million numbers (4 GB).
SUM_BOMB = "X = zeros(128, 128)\nL = 0\nfor i in range(999):\n    L = L + X.sum()\nL"
MSE_BOMB = (
    "X = zeros(128, 128)\nY = ones(128, 128)\nL = 0\nfor i in range(600):\n    L = L + mse(X, Y)\nL"
)
# README, "Limits": every number at most 25 bytes, and the rest of an answer per node.
BYTES_PER_NUMBER = 25
BYTES_PER_NODE = 1_500


def refused(source: str, limits: Limits = DEFAULT_LIMITS) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(source, limits=limits)
    return info.value


@pytest.mark.parametrize("source", [SUM_BOMB, MSE_BOMB], ids=["sum", "mse"])
def test_a_trace_bomb_is_refused_before_backward_in_little_time_and_memory(source: str) -> None:
    tracemalloc.start()
    start = time.perf_counter()
    try:
        err = refused(source)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    elapsed = time.perf_counter() - start
    assert err.status == 413 and err.code == "too_large" and err.limit == "max_trace_numbers"
    assert "500,000" in err.message and "(max_trace_numbers)" in err.message
    # In the loop's body, at the node that takes it over the limit.
    assert err.line == source.splitlines().index("    " + source.splitlines()[-2].strip()) + 1
    assert err.column is not None
    assert elapsed < 2.0, f"{elapsed:.2f} s"
    assert peak < 40e6, f"{peak / 1e6:.0f} MB"  # the values and graph; not the trace


def test_the_limit_is_exact_at_the_count_the_trace_carries() -> None:
    source = "X = randn(16, 16)\nL = 0\nfor i in range(10):\n    L = L + (X * X).sum()\nL"
    carried = count_numbers(run(source).to_dict(), 10**9)
    counted = run_program(source).interpreter.passes.numbers  # counted before backward ran
    # An upper bound of what the JSON carries, and not a loose one.
    assert carried <= counted <= carried * 1.25
    assert run(source, limits=replace(DEFAULT_LIMITS, max_trace_numbers=counted)).output
    assert refused(source, replace(DEFAULT_LIMITS, max_trace_numbers=counted - 1)).limit == (
        "max_trace_numbers"
    )


def test_the_setting_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADTRACE_MAX_TRACE_NUMBERS", "1000")
    limits = Limits().with_env()
    assert limits.max_trace_numbers == 1000
    err = refused("x = randn(100)\n(x * x).sum()", limits)
    assert "1,000 numbers (max_trace_numbers)" in err.message


def test_lessons_are_charged_against_the_whole_answer() -> None:
    source = "X = randn(64, 64)\nL = (sigmoid(X @ X)**2).sum()"
    trace = run(source).to_dict()
    spent = count_numbers(trace, 10**9)
    # compare_assign writes both backward passes again: past a budget just over the trace.
    limits = replace(DEFAULT_LIMITS, max_answer_numbers=spent + 1_000)
    with pytest.raises(ProgramError) as info:
        run_lessons(run_program(source, None, limits=limits), ["compare_assign"],
                    budget=AnswerBudget(limits, spent))  # fmt: skip
    err = info.value
    assert err.status == 413 and err.limit == "max_answer_numbers"
    assert "compare_assign" in err.message and "(max_answer_numbers)" in err.message
    # Lessons that add little still answer under the same budget.
    small = run_lessons(run_program(source, None, limits=limits), ["higher", "memory"],
                        budget=AnswerBudget(limits, spent))  # fmt: skip
    assert set(small) == {"higher", "memory"}


def test_the_api_refuses_lessons_past_the_answer_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.config import get_settings

    settings = get_settings()
    tight = replace(settings, limits=replace(settings.limits, max_answer_numbers=30_000))
    app.dependency_overrides[get_settings] = lambda: tight
    try:
        with TestClient(app) as client:
            body = {"source": "X = randn(64, 64)\nL = (X * X).sum()"}
            assert client.post("/api/trace", json=body).status_code == 200
            r = client.post("/api/trace", json={**body, "lessons": ["compare_assign"]})
    finally:
        app.dependency_overrides.clear()
    assert r.status_code == 413
    assert r.json()["error"]["limit"] == "max_answer_numbers"


def count_nodes(answer: dict[str, Any]) -> int:
    return len(answer["nodes"])


# Programs that carry as many numbers as a trace may, printed as long as numbers print.
AT_THE_LIMIT = {
    "long-numbers": "X = randn(50, 50) * 1e-300\nL = 0\nfor i in range(17):\n"
    "    L = L + (X * -1.2345678901234567).sum()\nL",
    "many-nodes": "x = -1.2345678901234567e-200\nfor i in range(450):\n"
    "    x = x * 1.000001 - 1e-201\nx",
    "one-big-matmul": "W = randn(128, 128) * 1e-123\nx = randn(128, 64)\nL = (W @ x).sum()",
}


@pytest.mark.parametrize("name", sorted(AT_THE_LIMIT))
def test_an_answer_stays_within_the_size_the_readme_states(name: str) -> None:
    answer = run(AT_THE_LIMIT[name]).to_dict()
    size = len(json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode())
    numbers = count_numbers(answer, 10**9)
    assert numbers <= DEFAULT_LIMITS.max_trace_numbers
    assert size <= BYTES_PER_NUMBER * numbers + BYTES_PER_NODE * count_nodes(answer)
    # README: a trace answer is under 16 MB however its numbers print.
    bound = BYTES_PER_NUMBER * DEFAULT_LIMITS.max_trace_numbers
    bound += BYTES_PER_NODE * DEFAULT_LIMITS.max_nodes
    assert bound <= 16_000_000 and size <= bound


def test_every_lesson_is_metered() -> None:
    # run_lessons charges each lesson it runs; none escapes by name.
    source = "x*y + x"
    limits = replace(DEFAULT_LIMITS, max_answer_numbers=1)
    for name in LESSONS:
        out: dict[str, Any] | None = None
        try:
            out = run_lessons(run_program(source, {"x": 2, "y": 3}, limits=limits), [name])
        except ProgramError as err:
            assert err.limit == "max_answer_numbers", name
        if out is not None:  # a lesson of at most one number (text only) fits in 1
            assert count_numbers(out, 10) <= 1, name


def test_a_grad_too_large_to_build_is_refused_while_it_is_built() -> None:
    # Each node grad() makes holds 2,500 elements; the values may hold 50,000 in all. Built
    # first and counted after, up to max_nodes such nodes were made before the refusal.
    source = "X = randn(50, 50)\nY = X\nfor i in range(8):\n    Y = Y * X\ng = grad(Y.sum(), X)\ng"
    tracemalloc.start()
    try:
        err = refused(source)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert err.status == 413 and err.limit == "max_total_elements", err
    assert err.message.startswith("grad(…)") and (err.line, err.column) == (5, 5)
    assert peak < 20e6, f"{peak / 1e6:.0f} MB"
