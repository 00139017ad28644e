"""The lessons look at the pass on show (issue 20 part 5): of a program of several backward
passes, `lesson_pass` (run_lessons(..., on_pass=k)) makes each lesson of ON_PASS read that
pass's graph, steps and leaf values; `code` and a lesson over every pass read the whole run."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import torch
from fastapi.testclient import TestClient

from app.main import app
from engine import lessons
from engine.drawing.passes import pass_view
from engine.program import run_program

client = TestClient(app)

# Three passes over different graphs: y = x·w + x, z = sin(x)·x, q = w³ (no zero_grad between).
THREE = """import torch
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0, requires_grad=True)
y = x * w + x
y.backward()
z = torch.sin(x) * x
z.backward()
q = w * w * w
q.backward()
"""


def dump(d: Any) -> str:
    return json.dumps(d, sort_keys=True)


@pytest.fixture(scope="module")
def run3() -> Any:
    return run_program(THREE)


@pytest.mark.parametrize("name", sorted(lessons.ON_PASS))
def test_each_lesson_sees_the_pass_asked_for(run3: Any, name: str) -> None:
    before = dump(run3.trace.to_dict())
    by_pass = [dump(lessons.run_lessons(run3, [name], on_pass=k)[name]) for k in range(3)]
    assert by_pass[0] != by_pass[1] and by_pass[1] != by_pass[2]
    # Out of range is clamped; a lesson leaves the run as it found it.
    assert dump(lessons.run_lessons(run3, [name], on_pass=99)[name]) == by_pass[2]
    assert dump(run3.trace.to_dict()) == before


def test_code_reads_the_whole_run(run3: Any) -> None:
    whole = dump(lessons.run_lessons(run3, ["code"])["code"])
    for k in range(3):
        assert dump(lessons.run_lessons(run3, ["code"], on_pass=k)["code"]) == whole
    assert lessons.lesson_passes(run3, ["code", "orders"], 1) == {"code": None, "orders": 1}
    assert lessons.lesson_passes(run3, ["orders"], None) == {"orders": None}
    assert "code" not in lessons.ON_PASS


def test_without_a_pass_every_lesson_is_as_before(run3: Any) -> None:
    names = sorted(lessons.LESSONS)
    assert dump(lessons.run_lessons(run3, names)) == dump(
        lessons.run_lessons(run3, names, on_pass=None)
    )


def torch_grads(k: int) -> dict[str, float]:
    """Each leaf's grad from pass k's backward alone, and as .grad reads after it (accumulated)."""
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    outs = [lambda: x * w + x, lambda: torch.sin(x) * x, lambda: w * w * w]
    fresh = torch.autograd.grad(outs[k](), [x, w], allow_unused=True)
    return {
        "x": float(fresh[0] if fresh[0] is not None else 0.0),
        "w": float(fresh[1] if fresh[1] is not None else 0.0),
    }


@pytest.mark.parametrize("k", [0, 1, 2])
def test_the_pass_lessons_agree_with_torch(run3: Any, k: int) -> None:
    out = lessons.run_lessons(run3, ["compare_assign", "higher", "shapes", "gradcheck"], on_pass=k)
    want = torch_grads(k)
    # The `+=` table is that pass's own backward, leaf by leaf, as torch computes it.
    assert {f["label"]: f["add"] for f in out["compare_assign"]["final"]} == pytest.approx(want)
    assert {c["label"]: c["analytic"] for c in out["higher"]["checks"]} == pytest.approx(want)
    assert all(c["agree"] for c in out["higher"]["checks"])
    # The steps are that pass's, as the page's pass view numbers them.
    view, _ = pass_view(run3.trace.to_dict(), run3.trace.to_dict()["passes"][k]["first_step"])
    assert [s["node"] for s in out["shapes"]["steps"]] == [s["node"] for s in view["steps"]]
    # gradcheck reads .grad as the program sees it after that pass: accumulated, no zero_grad.
    seen = {
        "x": [4.0, 4.0 + math.cos(2) * 2 + math.sin(2), 4.0 + math.cos(2) * 2 + math.sin(2)],
        "w": [2.0, 2.0, 2.0 + 27.0],
    }
    rows = {r["label"]: r for r in out["gradcheck"]["rows"]}
    assert {lab: r["analytic"] for lab, r in rows.items()} == pytest.approx(
        {lab: v[k] for lab, v in seen.items()}
    )
    assert {lab: r["numeric"] for lab, r in rows.items()} == pytest.approx(want, abs=1e-6)


def test_a_pass_sees_the_leaf_values_it_ran_with() -> None:
    """A training step changes w between passes: pass 0's lessons see w as it was then."""
    src = """import torch
w = torch.tensor(3.0, requires_grad=True)
for i in range(2):
    loss = w * w
    loss.backward()
    with torch.no_grad():
        w -= 0.25 * w.grad
    w.grad = None
"""
    run = run_program(src)
    assert len(run.trace.passes) == 2
    first = lessons.run_lessons(run, ["gradcheck", "higher"], on_pass=0)
    second = lessons.run_lessons(run, ["gradcheck", "higher"], on_pass=1)
    assert first["gradcheck"]["rows"][0]["value"] == pytest.approx(3.0)
    assert first["gradcheck"]["rows"][0]["analytic"] == pytest.approx(6.0)
    assert second["gradcheck"]["rows"][0]["value"] == pytest.approx(1.5)
    assert second["gradcheck"]["rows"][0]["analytic"] == pytest.approx(3.0)
    assert all(
        r["verdict"] == "pass" for r in first["gradcheck"]["rows"] + second["gradcheck"]["rows"]
    )
    assert first["higher"]["checks"][0]["analytic"] == pytest.approx(6.0)
    # The leaf's value is back as the run left it.
    assert float(run.leaves[0].data) == pytest.approx(0.75)


def test_the_api_takes_lesson_pass() -> None:
    body = {"source": THREE, "lessons": ["compare_assign", "code"]}
    plain = client.post("/api/trace", json=body).json()
    assert "lesson_passes" not in plain  # the answer as before
    asked = client.post("/api/trace", json={**body, "lesson_pass": 1}).json()
    assert asked["lesson_passes"] == {"compare_assign": 1, "code": None}
    assert asked["lessons"]["code"] == plain["lessons"]["code"]
    assert asked["lessons"]["compare_assign"] != plain["lessons"]["compare_assign"]
    assert asked["steps"] == plain["steps"]  # the trace is the whole run's, as before
    assert {
        f["label"]: f["add"] for f in asked["lessons"]["compare_assign"]["final"]
    } == pytest.approx(torch_grads(1))
    for bad in (-1, "1", 1.5):
        assert client.post("/api/trace", json={**body, "lesson_pass": bad}).status_code == 422
