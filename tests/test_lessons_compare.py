"""Lesson 1, "= instead of +=", through POST /api/trace {"lessons": ["compare_assign"]}."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from fastapi.testclient import TestClient

from app.main import app
from engine import lessons
from engine.program import run_program

client = TestClient(app)


def lesson(source: str, values: dict[str, Any], name: str, **options: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"source": source, "values": values, "lessons": [name]}
    if options:
        body["lesson_options"] = {name: options}
    r = client.post("/api/trace", json=body)
    assert r.status_code == 200, r.text
    return r.json()["lessons"][name]


def test_the_notes_example_loses_the_first_path_of_x():
    data = lesson("x*y + x", {"x": 2, "y": 3}, "compare_assign")
    x = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    (x * y + x).backward()
    final = {f["label"]: f for f in data["final"]}
    assert final["x"]["add"] == pytest.approx(x.grad.item()) == 4.0
    assert final["x"]["assign"] == 3.0 and final["x"]["wrong"]  # the 1 from `+ x` is lost
    assert final["y"]["add"] == final["y"]["assign"] == pytest.approx(y.grad.item())
    assert data["wrong"] == ["x"]
    assert data["first_divergence"] == 2
    row = data["rows"][2]
    assert row["diverged"] == ["n0"]
    assert row["overwritten"] == [
        {"input": "n0", "before": 1.0, "contribution": 3.0, "should_be": 4.0}
    ]


def test_the_rows_line_up_with_the_main_trace():
    source, values = "(x*y + x)*(x - y)", {"x": 2, "y": 3}
    r = client.post(
        "/api/trace", json={"source": source, "values": values, "lessons": ["compare_assign"]}
    ).json()
    data = r["lessons"]["compare_assign"]
    assert [row["node"] for row in data["rows"]] == [s["node"] for s in r["steps"]]
    assert [row["add"] for row in data["rows"]] == [s["grads"] for s in r["steps"]]
    assert set(data["columns"]) == {n["id"] for n in r["nodes"] if n["grad"] is not None}


def test_x_times_x_is_wrong_even_within_one_step():
    data = lessons.compare_assign(run_program("x*x", {"x": 3}))
    assert data["final"][0]["add"] == 6.0 and data["final"][0]["assign"] == 3.0
    assert data["rows"][1]["overwritten"][0]["before"] == 3.0


def test_a_tree_has_nothing_to_overwrite():
    data = lessons.compare_assign(run_program("x*y + z", {"x": 2, "y": 3, "z": 1}))
    assert data["wrong"] == [] and data["first_divergence"] is None
    assert all(not row["diverged"] for row in data["rows"])


def test_an_unknown_lesson_is_a_400_naming_the_lessons():
    r = client.post("/api/trace", json={"source": "x", "lessons": ["nope"]})
    assert r.status_code == 400
    assert "compare_assign" in r.json()["error"]["message"]


def test_a_trace_without_lessons_has_no_lessons_field():
    r = client.post("/api/trace", json={"source": "x*y"})
    assert "lessons" not in r.json()


def test_lesson_options_are_checked_not_passed_blindly():
    def post(options):
        return client.post(
            "/api/trace",
            json={"source": "x*y", "lessons": ["gradcheck"], "lesson_options": options},
        )

    assert post({"gradcheck": {"max_elements": 1}}).status_code == 200
    for bad in (
        {"gradcheck": {"limits": 1}},
        {"gradcheck": {"max_elements": "many"}},
        {"gradcheck": {"source": "x"}},
    ):
        r = post(bad)
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_option"
