"""Lesson 6, higher-order gradients: grad(L, x) builds the gradient as a graph, and the trace's
backward pass through it is the second pass. Checked against torch.autograd.grad with
create_graph=True."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.main import app
from engine import ProgramError, lessons, run, run_program
from engine.autograd.higher import grad
from engine.autograd.value import leaf

client = TestClient(app)
CUBE = "x = 3\ny = x**3\ng = grad(y, x)\ng"


def t64(v: float) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.float64, requires_grad=True)


def test_the_second_pass_of_x_cubed_gives_6x():
    r = client.post("/api/trace", json={"source": CUBE, "lessons": ["higher"]}).json()
    assert r["value"] == 27.0  # g = 3x² at x = 3
    assert r["grads"] == {"x": 18.0}  # the second pass: 6x
    data = r["lessons"]["higher"]
    (call,) = data["calls"]
    assert call["value"] == 27.0 and call["result"] == r["output"] and call["line"] == 3
    built = {n["id"]: n for n in r["nodes"] if n["id"] in call["nodes"]}
    assert [n["op"] for n in built.values() if n["kind"] == "op"] == ["pow", "mul"]  # 3·x**2
    steps = [s["node"] for s in r["steps"][1:]]
    assert all(s in built for s in steps)  # every local backward is of a node grad() built
    assert data["checks"] == [
        {
            "leaf": "n0",
            "label": "x",
            "value": 3.0,
            "analytic": 18.0,
            "numeric": pytest.approx(18.0, rel=1e-8),
            "agree": True,
        }
    ]


@pytest.mark.parametrize("x0", [-1.5, 0.3, 2.0])
def test_third_derivative_and_a_neuron_match_torch(x0):
    t = run(f"x = {x0}\ny = x**3\nh = grad(grad(y, x), x)\nh")
    x = t64(x0)
    (g,) = torch.autograd.grad(x**3, x, create_graph=True)
    (h,) = torch.autograd.grad(g, x, create_graph=True)
    h.backward()
    assert float(t.output.data) == pytest.approx(h.item()) == pytest.approx(6 * x0)
    assert t.to_dict()["grads"]["x"] == pytest.approx(x.grad.item()) == 6.0

    src = f"x = {x0}\nw = 0.7\nL = tanh(w*x)\ng = grad(L, w)\nP = g**2 + L\nP"
    d = run(src).to_dict()
    x, w = t64(x0), t64(0.7)
    L = torch.tanh(w * x)
    (g,) = torch.autograd.grad(L, w, create_graph=True)
    P = g**2 + L
    P.backward()
    assert d["value"] == pytest.approx(P.item(), rel=1e-12)
    assert d["grads"]["x"] == pytest.approx(x.grad.item(), rel=1e-10)
    assert d["grads"]["w"] == pytest.approx(w.grad.item(), rel=1e-10)


def test_tensor_rules_run_on_graph_nodes_like_torch():
    rng = np.random.default_rng(3)
    A0, B0, c0 = (
        rng.standard_normal((2, 3, 4)),
        rng.standard_normal((4, 2)),
        rng.standard_normal((3, 1)),
    )
    A, B = leaf(A0, "A"), leaf(B0, "B")
    L = (((A @ B) ** 2) * c0).sum() + (A[:, 1].softmax() * A.sum(axis=0)[1]).mean()
    gA, gB = grad(L, [A, B])
    S = (gA * gA).sum() + gB.sum()
    (hB,) = grad(S, [B])
    At, Bt = torch.tensor(A0, requires_grad=True), torch.tensor(B0, requires_grad=True)
    Lt = (((At @ Bt) ** 2) * torch.tensor(c0)).sum() + (
        torch.softmax(At[:, 1], -1) * At.sum(0)[1]
    ).mean()
    gAt, gBt = torch.autograd.grad(Lt, [At, Bt], create_graph=True)
    (hBt,) = torch.autograd.grad((gAt * gAt).sum() + gBt.sum(), [Bt])
    np.testing.assert_allclose(gA.data, gAt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hB.data, hBt.numpy(), rtol=1e-10, atol=1e-12)


def test_grad_of_an_unused_value_is_zero_and_bad_calls_are_refused():
    assert run("x = 2\nw = 5\ng = grad(x*x, w)\ng").to_dict()["value"] == 0.0
    with pytest.raises(ProgramError, match="name"):
        run("x = 2\ngrad(x*x, 2*x)")
    with pytest.raises(ProgramError, match="constant"):
        run("x = 2\nc = const(x)\ngrad(x*c, c)")
    with pytest.raises(ProgramError, match="grad"):
        run("x = 2\ngrad(x)")


def test_a_program_without_grad_has_no_calls():
    data = lessons.higher(run_program("x*y", {"x": 2, "y": 3}))
    assert data["calls"] == [] and not data["second_pass"]
