"""Lesson 4, the gradient check: central differences beside backward, with ERRATA 4's verdicts."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.main import app
from engine import lessons
from engine.lessons.gradcheck import EPS, MAX_ELEMENTS, relative_error, verdict
from engine.program import run_program

client = TestClient(app)

SIGMOID_MSE = (
    "W = randn(4, 8)\nx = randn(8)\nb = zeros(4)\ny = ones(4)\n"
    "L = ((sigmoid(W@x + b) - y)**2).sum()"
)


def test_the_thresholds_are_the_errata_ones():
    assert verdict(9.9e-8) == "pass" and verdict(1e-7) == "warn"
    assert verdict(9.9e-5) == "warn" and verdict(1e-4) == "fail" and verdict(5e-4) == "fail"
    assert relative_error(0.0, 0.0) == 0.0  # both zero is a pass
    assert EPS == 1e-5


def test_a_smooth_layer_passes_and_its_numbers_match_torch():
    r = client.post("/api/trace", json={"source": SIGMOID_MSE, "lessons": ["gradcheck"]})
    body = r.json()
    data = body["lessons"]["gradcheck"]
    assert data["verdict"] == "pass" and data["checked"] == data["elements"] == 48
    leaves = {n["id"]: np.array(n["value"]) for n in body["nodes"] if n["kind"] == "leaf"}
    W, x, b, y = (torch.tensor(leaves[i], requires_grad=True) for i in ("n0", "n1", "n2", "n3"))
    ((torch.sigmoid(W @ x + b) - y) ** 2).sum().backward()
    torch_grads = {"W": W.grad.numpy(), "x": x.grad.numpy(), "b": b.grad.numpy()}
    for row in data["rows"]:
        if row["label"] in torch_grads:
            expect = torch_grads[row["label"]][tuple(row["index"])]
            assert row["analytic"] == pytest.approx(expect, rel=1e-12, abs=1e-15)
            assert row["numeric"] == pytest.approx(expect, rel=1e-6, abs=1e-9)
            assert row["rel_error"] < 1e-7


def test_the_check_catches_the_assign_bug():
    data = lessons.gradcheck(run_program("x*y + x", {"x": 2, "y": 3}, accumulate="assign"))
    rows = {r["label"]: r for r in data["rows"]}
    assert rows["x"]["analytic"] == 3.0 and rows["x"]["numeric"] == pytest.approx(4.0)
    assert rows["x"]["rel_error"] == pytest.approx(1 / 7) and rows["x"]["verdict"] == "fail"
    assert rows["y"]["verdict"] == "pass"
    assert data["verdict"] == "fail"
    r = client.post(
        "/api/trace",
        json={
            "source": "x*y + x",
            "values": {"x": 2, "y": 3},
            "accumulate": "assign",
            "lessons": ["gradcheck"],
        },
    )
    assert r.json()["lessons"]["gradcheck"]["summary"]["fail"] == 1


def test_kinks_are_flagged_not_failed():
    source = "x = [-1.0, 0.0, 2.0]\nw = [0.5, -1.5, 2.0]\nL = (relu(x)*w + abs(x)).sum()"
    data = lessons.gradcheck(run_program(source))
    by = {(r["label"], tuple(r["index"])): r for r in data["rows"]}
    assert by[("x", (1,))]["verdict"] == "kink"  # relu and abs at 0
    assert by[("x", (0,))]["verdict"] == by[("x", (2,))]["verdict"] == "pass"
    assert data["summary"]["fail"] == 0 and data["verdict"] == "pass"
    tie = lessons.gradcheck(run_program("max(x, z)", {"x": 1, "z": 1}))
    assert [r["verdict"] for r in tie["rows"]] == ["kink", "kink"]


def test_the_element_limit_is_stated():
    data = lessons.gradcheck(run_program("W = randn(10, 10)\nL = (W*W).sum()"))
    assert data["elements"] == 100 and data["checked"] == data["limit"] == MAX_ELEMENTS
    assert data["truncated"]
    assert [r["index"] for r in data["rows"][:2]] == [[0, 0], [0, 1]]  # row-major
