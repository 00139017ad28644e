"""Lesson 5, tensors shape by shape: each step's shapes, the matmul rule's shapes, and the
broadcast reduction as its own sub-step; the grads themselves are checked against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from app.main import app
from engine import lessons
from engine.program import run_program

client = TestClient(app)
BATCH = "A = randn(2, 3, 4)\nB = randn(4, 4)\nc = randn(3, 1)\nC = (A @ B) * c\nL = C.sum()"


def lesson(source: str) -> tuple[dict, dict]:
    r = client.post("/api/trace", json={"source": source, "lessons": ["shapes"]})
    assert r.status_code == 200, r.text
    body = r.json()
    return body, body["lessons"]["shapes"]


def test_a_broadcast_scale_is_summed_over_axes_0_and_2():
    body, data = lesson(BATCH)
    mul = data["steps"][2]
    assert mul["op"] == "mul" and mul["upstream"] == [2, 3, 4]
    c_term = next(t for t in mul["terms"] if t["shape"] == [3, 1])
    assert c_term["work"] == [
        {
            "kind": "reduce",
            "from": [2, 3, 4],
            "to": [3, 1],
            "axes": [0, 2],
            "added": [0],
            "ones": [2],
        }
    ]
    # The grads the reduction produced are torch's.
    v = {n["label"]: np.array(n["value"]) for n in body["nodes"]}
    A, B, c = (torch.tensor(v[k], requires_grad=True) for k in "ABc")
    ((A @ B) * c).sum().backward()
    grads = body["grads"]
    for name, t in (("A", A), ("B", B), ("c", c)):
        np.testing.assert_allclose(grads[name], t.grad.numpy(), rtol=1e-12)


def test_batched_matmul_shows_both_rules_with_their_shapes():
    _, data = lesson(BATCH)
    mm = data["steps"][3]
    assert mm["op"] == "matmul" and mm["inputs"] == [[2, 3, 4], [4, 4]]
    a_term, b_term = mm["terms"]
    assert a_term["rule"] == "ū·Bᵀ"
    assert a_term["work"] == [{"kind": "matmul", "a": [2, 3, 4], "b": [4, 4], "out": [2, 3, 4]}]
    assert b_term["rule"] == "Aᵀ·ū"
    assert b_term["work"][0] == {"kind": "matmul", "a": [2, 4, 3], "b": [2, 3, 4], "out": [2, 4, 4]}
    assert b_term["work"][1]["kind"] == "reduce" and b_term["work"][1]["axes"] == [0]


def test_the_sigmoid_mse_layer_has_a_4_by_8_weight_grad():
    src = (
        "W = randn(4, 8)\nx = randn(8)\nb = zeros(4)\ny = ones(4)\n"
        "L = ((sigmoid(W@x + b) - y)**2).sum()"
    )
    body, data = lesson(src)
    mm = next(s for s in data["steps"] if s.get("op") == "matmul")
    w_term = next(t for t in mm["terms"] if t["shape"] == [4, 8])
    assert w_term["work"] == [{"kind": "matmul", "a": [4, 1], "b": [1, 8], "out": [4, 8]}]
    total = next(s for s in data["steps"] if s.get("op") == "sum")
    assert total["terms"][0]["work"] == [{"kind": "broadcast", "from": [1], "to": [4]}]
    v = {n["label"]: np.array(n["value"]) for n in body["nodes"] if n["kind"] == "leaf"}
    W, x, b = (torch.tensor(v[k], requires_grad=True) for k in ("W", "x", "b"))
    ((torch.sigmoid(W @ x + b) - torch.tensor(v["y"])) ** 2).sum().backward()
    np.testing.assert_allclose(body["grads"]["W"], W.grad.numpy(), rtol=1e-12)


def test_softmax_cross_entropy_shows_p_minus_onehot():
    src = "z = [2.0, 1.0, 0.0]\nL = cross_entropy(z, 0)"
    _, data = lesson(src)
    sm = data["steps"][1]["softmax"]
    z = torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64, requires_grad=True)
    torch.nn.functional.cross_entropy(z, torch.tensor(0)).backward()
    # The notes' numbers: p ≈ [0.665, 0.245, 0.090], dz ≈ [−0.335, 0.245, 0.090].
    assert sm["p"] == pytest.approx([0.665, 0.245, 0.090], abs=1e-3)
    assert sm["onehot"] == [1.0, 0.0, 0.0]
    assert sm["grad"] == pytest.approx(z.grad.tolist(), rel=1e-12)
    batch = lessons.shapes(
        run_program("Z = [[2.0, 1.0, 0.0], [0.5, 0.5, 3.0]]\nL = cross_entropy(Z, [0, 2])")
    )
    assert batch["steps"][1]["softmax"]["rows"] == 2


def test_scalar_programs_say_so():
    data = lessons.shapes(run_program("x*y + x", {"x": 2, "y": 3}))
    assert not data["tensors"] and data["steps"][2]["terms"][0]["work"] == []
