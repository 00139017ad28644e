"""Lesson 9, misconceptions with their real symptoms, each checked against PyTorch doing the
same wrong thing."""

from __future__ import annotations

import pytest
import torch
from fastapi.testclient import TestClient

from app.main import app
from engine import lessons
from engine.program import run_program

client = TestClient(app)
MAX = "a = x*y\nb = max(a, z)\nL = a*b"
XYZ = {"x": 2, "y": 3, "z": 4}


def t64(v) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.float64, requires_grad=True)


def test_backward_twice_doubles_and_pytorch_says_why():
    data = client.post(
        "/api/trace",
        json={"source": "x*y + x", "values": {"x": 2, "y": 3}, "lessons": ["mistakes"]},
    ).json()["lessons"]["mistakes"]
    x, y = t64(2.0), t64(3.0)
    L = x * y + x
    L.backward(retain_graph=True)
    L.backward()
    assert (
        data["twice"]["second"]
        == {"n0": x.grad.item(), "n1": y.grad.item()}
        == {"n0": 8.0, "n1": 4.0}
    )
    x2, y2 = t64(2.0), t64(3.0)
    L2 = x2 * y2 + x2
    L2.backward()
    with pytest.raises(RuntimeError) as err:
        L2.backward()
    assert data["twice"]["torch_error"] == "RuntimeError: " + str(err.value)
    # A graph of adds saves nothing: PyTorch runs it twice without a word.
    silent = lessons.mistakes(run_program("x + y", {"x": 2, "y": 3}))["twice"]
    assert silent["torch_error"] is None and silent["second"] == {"n0": 2.0, "n1": 2.0}


def test_forgetting_zero_grad_matches_torch_sgd_without_it():
    data = lessons.mistakes(run_program("w = 3.0\nL = (w - 1)**2"))["zero_grad"]
    for zero, run in ((True, data["zeroed"]), (False, data["accumulated"])):
        w = t64(3.0)
        for row in run[:-1]:
            if zero and w.grad is not None:
                w.grad.zero_()
            ((w - 1) ** 2).backward()
            assert row["params"]["n0"] == pytest.approx(w.item())
            assert row["held"]["n0"] == pytest.approx(w.grad.item())
            with torch.no_grad():
                w -= 0.1 * w.grad
        assert run[-1]["params"]["n0"] == pytest.approx(w.item())
    assert data["accumulated"][2]["held"]["n0"] == pytest.approx(8.96)  # 4 + 3.2·… summed


def test_a_missing_local_backward_drops_the_path_errata_1():
    data = lessons.mistakes(run_program(MAX, XYZ))["missing"]
    x, y, z = t64(2.0), t64(3.0), t64(4.0)
    a = x * y
    (a * torch.maximum(a, z).detach()).backward()  # b without a backward of its own
    assert (
        data["without"]
        == {"n0": x.grad.item(), "n1": y.grad.item(), "n3": 0.0}
        == {"n0": 18.0, "n1": 12.0, "n3": 0.0}
    )
    assert data["correct"] == {"n0": 36.0, "n1": 24.0, "n3": 0.0}  # PyTorch: 36, 24, 0
    assert data["dropped"] == "n4" and data["wrong"] == ["n0", "n1"]
    other = lessons.mistakes(run_program(MAX, XYZ), drop="n2")["missing"]
    assert other["dropped"] == "n2" and other["without"] == {"n0": 0.0, "n1": 0.0, "n3": 0.0}


def test_one_hot_upstream_vectors_are_the_jacobians_rows():
    src = "x = [1.0, 2.0, 3.0]\nW = [[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]]\ny = W @ x * x[0]"
    r = client.post(
        "/api/trace",
        json={
            "source": src,
            "lessons": ["mistakes"],
            "lesson_options": {"mistakes": {"upstream": [2, -1]}},
        },
    )
    data = r.json()["lessons"]["mistakes"]["vector"]
    x, W = t64([1.0, 2.0, 3.0]), t64([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]])
    y = W @ x * x[0]
    jac = torch.autograd.functional.jacobian(lambda x_: W.detach() @ x_ * x_[0], x.detach())
    for i, row in enumerate(data["rows"]):
        assert row["grads"]["n0"] == pytest.approx(jac[i].tolist())
    (gx,) = torch.autograd.grad(y, x, torch.tensor([2.0, -1.0], dtype=torch.float64))
    assert data["custom"]["grads"]["n0"] == pytest.approx(gx.tolist())
    assert data["ones"]["n0"] == pytest.approx(jac.sum(0).tolist())
    assert lessons.mistakes(run_program("x*y", {"x": 1, "y": 2}))["vector"] == {"scalar": True}
