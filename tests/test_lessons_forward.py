"""Lesson 3, forward mode: dual-number passes, one per input element, against reverse mode and
torch.func.jvp (PyTorch's own forward mode)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.examples import EXAMPLES
from app.main import app
from engine import lessons
from engine.autograd.ops import GRADIENT_OPS, OPS, Op
from engine.program import run_program

client = TestClient(app)

EVERY_OP = (
    "x = [1.0, 0.5, -2.0]\nw = [[1., 2, 3], [4, 5, 6]]\n"
    "L = mse(w @ relu(x), [1., 2]) + max(x, 0.5).sum() + log_softmax(w, axis=0).sum() "
    "+ x[1:].sum() + cross_entropy(w, [0, 2]) + (softmax(w)*w).T.reshape(3, 2).sum(axis=1).mean()"
    " + abs(min(x, w[0])).sum() + sqrt(exp(sin(x)*cos(x))).sum() / tanh(sigmoid(x)).sum()"
    " + (x**2 / (1 + x*x) - x).sum() + log(2**w).sum()"
)


def test_the_notes_example_one_pass_per_input():
    r = client.post(
        "/api/trace", json={"source": "x*y + x", "values": {"x": 2, "y": 3}, "lessons": ["forward"]}
    ).json()
    data = r["lessons"]["forward"]
    assert [p["label"] for p in data["passes"]] == ["x", "y"]
    # Pass for x: ẋ = 1, ẏ = 0, (xy)˙ = ẋy + xẏ = 3, out˙ = 3 + 1 = 4.
    assert data["passes"][0]["tangents"] == {"n0": 1.0, "n1": 0.0, "n2": 3.0, "n3": 4.0}
    assert data["passes"][1]["tangents"]["n3"] == 2.0
    assert data["forward"] == data["reverse"] == {"n0": 4.0, "n1": 2.0}
    assert data["same"]
    assert data["cost"] == {
        "inputs": 2,
        "outputs": 1,
        "ops": 2,
        "forward_passes": 2,
        "reverse_passes": 1,
        "forward_evals": 4,
        "reverse_evals": 2,
    }
    assert data["rules"]["n2"] == "x\u0307·y + x·y\u0307"  # ẋ·y + x·ẏ (issue 16: was x˙·y + x·y˙)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e["id"])
def test_forward_equals_reverse_on_every_gallery_example(example):
    data = lessons.forward_mode(run_program(example["source"], example["values"]))
    assert data["same"], example["id"]
    for leaf, g in data["reverse"].items():
        np.testing.assert_allclose(data["forward"][leaf], g, rtol=1e-9, atol=1e-12)


def test_every_op_has_a_tangent_rule_that_agrees_with_torch_jvp():
    data = lessons.forward_mode(run_program(EVERY_OP))
    assert data["same"]
    x0 = np.array([1.0, 0.5, -2.0])
    w0 = np.array([[1.0, 2, 3], [4, 5, 6]])

    def f(x: torch.Tensor) -> torch.Tensor:
        w = torch.tensor(w0)
        F = torch.nn.functional
        return (
            ((w @ torch.relu(x) - torch.tensor([1.0, 2])) ** 2).mean()
            + torch.maximum(x, torch.tensor(0.5, dtype=torch.float64)).sum()
            + torch.log_softmax(w, 0).sum()
            + x[1:].sum()
            + F.cross_entropy(w, torch.tensor([0, 2]))
            + (torch.softmax(w, -1) * w).T.reshape(3, 2).sum(1).mean()
            + torch.abs(torch.minimum(x, w[0])).sum()
            + torch.sqrt(torch.exp(torch.sin(x) * torch.cos(x))).sum()
            / torch.tanh(torch.sigmoid(x)).sum()
            + (x**2 / (1 + x * x) - x).sum()
            + torch.log(2**w).sum()
        )

    for i, p in enumerate(data["passes"][:3]):  # the passes seeded on x's elements
        assert p["label"] == "x" and p["index"] == [i]
        v = torch.zeros(3, dtype=torch.float64)
        v[i] = 1.0
        _, jvp = torch.func.jvp(f, (torch.tensor(x0),), (v,))
        assert p["tangents"][data["topo"][-1]] == pytest.approx(jvp.item(), rel=1e-10)


def test_a_gradient_of_a_grad_graph_runs_forward_too():
    data = lessons.forward_mode(run_program("x = 3\ny = x**3\ng = grad(y, x)\nh = grad(g*g, x)\nh"))
    assert data["same"] and data["forward"]["n0"] == pytest.approx(972.0)  # d/dx of 2·g·g'


def test_the_passes_on_show_are_bounded_and_stated():
    data = lessons.forward_mode(run_program("W = randn(4, 8)\nL = (W*W).sum()"))
    assert data["inputs"] == 32 and data["shown"] == len(data["passes"]) < 32
    assert data["computed"] == 32 and data["same"]


def test_every_op_of_the_registry_has_its_jvp_rule_and_saved_values():
    # What the lessons read is each op's own: an op added to the registry brings its own.
    for cls in [*OPS.values(), *GRADIENT_OPS.values()]:
        assert cls.jvp is not Op.jvp and isinstance(cls.jvp_rule, str), cls.name
        assert cls.saves is not Op.saves or isinstance(cls.saved, tuple), cls.name


JOINS = (
    "x = [1.0, 0.5, -2.0]\nw = [[1., 2, 3], [4, 5, 6]]\n"
    "L = (cat([x, w[0]]) * cat([w[1], x], dim=0)).sum() + stack([x, w[1]], axis=1).tanh().sum()"
    " + clamp(x * w[0], -1, 1.5).sum() + (w[[1, 0, 1], [0, 2, 2]] * x).sum()"
    " + (x[[0, 0, 2]] ** 2).sum()"
)


def test_the_joins_clamp_and_index_lists_have_tangents_that_agree_with_torch_jvp():
    data = lessons.forward_mode(run_program(JOINS))
    assert data["same"]
    x0 = np.array([1.0, 0.5, -2.0])
    w0 = np.array([[1.0, 2, 3], [4, 5, 6]])

    def f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return (
            (torch.cat([x, w[0]]) * torch.cat([w[1], x])).sum()
            + torch.stack([x, w[1]], dim=1).tanh().sum()
            + torch.clamp(x * w[0], -1, 1.5).sum()
            + (w[[1, 0, 1], [0, 2, 2]] * x).sum()
            + (x[[0, 0, 2]] ** 2).sum()
        )

    out = data["topo"][-1]
    for p in data["passes"]:  # x's 3 elements, then w's first ones
        v = [torch.zeros(3, dtype=torch.float64), torch.zeros((2, 3), dtype=torch.float64)]
        v[0 if p["label"] == "x" else 1][tuple(p["index"])] = 1.0
        _, jvp = torch.func.jvp(f, (torch.tensor(x0), torch.tensor(w0)), tuple(v))
        assert p["tangents"][out] == pytest.approx(jvp.item(), rel=1e-10), p["index"]
    assert {p["label"] for p in data["passes"]} == {"x", "w"}
    rules = set(data["rules"].values())
    # every input's tangent, in order (w[0]₁: the second node of that text)
    assert {"cat(x\u0307, d(w[0]₁))", "cat(d(w[1]₁), x\u0307)", "stack(x\u0307, d(w[1]₂))"} <= rules
    assert "w\u0307[key]" in rules and "[-1 ≤ (x * w[0]) ≤ 1.5]·d(x * w[0])" in rules
    one_sided = lessons.forward_mode(run_program("x = [1.0, -1.0]\nL = clamp(x, min=0).sum()"))
    assert "[0 ≤ x ≤ ∞]·x\u0307" in one_sided["rules"].values()


def test_a_gradient_through_an_index_list_runs_forward_through_its_scatter():
    # grad() of a gather is a scatter_add node in the graph: forward mode pushes through it
    source = "x = [1.0, 2.0, 3.0]\ng = grad((x[[0, 0, 2]] ** 3).sum(), x)\nL = (g * g).sum()"
    run = run_program(source)
    assert "scatter_add" in {n.op.name for n in run.nodes if n.op is not None}
    data = lessons.forward_mode(run)
    assert data["same"]
    # g = (6·x0², 0, 3·x2²) and L = Σ g²: ∂L/∂x0 = 2·6x0²·12x0 = 144·x0³, ∂L/∂x2 = 36·x2³
    assert data["forward"]["n0"] == pytest.approx([144.0, 0.0, 36.0 * 27])
