"""One trace feeds everything: an answer with every lesson parses and builds its program once,
and no lesson changes the page's trace or another request's graph."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

import engine.program
from engine.lessons import LESSONS, run_lessons
from engine.program import run, run_program

PROGRAMS = [
    ("x*y + x", {"x": 2, "y": 3}),
    ("x = 3\ny = x**3\ng = grad(y, x)\nh = grad(g*g, x)\nh", None),
    ("W = randn(3, 4)\nb = randn(4)\nL = relu(W @ ones(4) + W.sum(axis=0) @ b)", None),
    ("Z = randn(3, 4)\nt = [0, 3, 1]\nL = cross_entropy(Z, t)", None),
    ("x = 2\nfor i in range(3):\n    x = x * x + i\nx", None),
    ("W = randn(2, 3)\nW * W", None),  # a non-scalar output: mistakes' upstream vectors
]
OPTIONS = {"orders": {"call_limit": 7}, "mistakes": {"drop": "n3", "upstream": [1.0, 2.0, 3.0]}}


def counted(monkeypatch: pytest.MonkeyPatch, module: str, name: str) -> list[int]:
    """Count the calls of `module.name`, wherever a module of the app imported it by name."""
    original = getattr(importlib.import_module(module), name)
    calls: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    for mod in list(sys.modules.values()):
        ours = getattr(mod, "__name__", "").startswith(("engine", "app", "gradtrace"))
        if ours and getattr(mod, name, None) is original:
            monkeypatch.setattr(mod, name, counting)
    return calls


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Callable[[], tuple[int, int]]:
    """(parses, runs) since the test began: the source read by `ast` and the interpreter run
    over it; the read cache starts empty."""
    from engine.language.interpreter import Interpreter

    engine.program.read_cached.cache_clear()
    parses = counted(monkeypatch, "engine.language.source", "read")
    runs: list[int] = []
    original = Interpreter.run

    def counting(self: Interpreter) -> None:
        runs.append(1)
        original(self)

    monkeypatch.setattr(Interpreter, "run", counting)
    return lambda: (len(parses), len(runs))


def test_a_page_with_every_lesson_parses_and_builds_once(builds):
    source, values = PROGRAMS[2]
    program = run_program(source, values)
    program.trace.to_dict()
    out = run_lessons(program, list(LESSONS), options=OPTIONS)
    assert set(out) == set(LESSONS)
    assert builds() == (1, 1)


def test_the_api_answer_with_every_lesson_parses_and_builds_once(builds):
    from app.main import app

    body = {"source": PROGRAMS[2][0], "lessons": list(LESSONS), "lesson_options": OPTIONS}
    with TestClient(app) as client:
        answer = client.post("/api/trace", json=body)
    assert answer.status_code == 200 and set(answer.json()["lessons"]) == set(LESSONS)
    assert builds() == (1, 1)


@pytest.mark.parametrize("order", ["dfs", "kahn"])
@pytest.mark.parametrize("accumulate", ["add", "assign"])
@pytest.mark.parametrize(("source", "values"), PROGRAMS)
def test_lessons_leave_the_page_trace_as_it_was(source, values, accumulate, order):
    program = run_program(source, values, accumulate, order)
    before = json.dumps(program.trace.to_dict())
    run_lessons(program, list(LESSONS), options=OPTIONS)
    assert json.dumps(program.trace.to_dict()) == before
    assert json.dumps(run(source, values, accumulate, order).to_dict()) == before


def test_the_api_trace_is_the_same_with_and_without_lessons():
    from app.main import app

    body = {"source": PROGRAMS[0][0], "values": PROGRAMS[0][1], "accumulate": "assign"}
    with TestClient(app) as client:
        alone = client.post("/api/trace", json=body).json()
        answer = client.post("/api/trace", json={**body, "lessons": list(LESSONS)}).json()
    assert set(answer.pop("lessons")) == set(LESSONS)
    assert answer == alone


def test_two_runs_of_one_program_share_no_node():
    source, values = PROGRAMS[1]
    first, second = run_program(source, values), run_program(source, values)
    assert not {id(n) for n in first.nodes} & {id(n) for n in second.nodes}
    before = json.dumps(second.trace.to_dict())
    run_lessons(first, list(LESSONS))
    assert json.dumps(second.trace.to_dict()) == before
