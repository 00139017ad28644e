"""Lesson 7, the same program in PyTorch and JAX: the generated PyTorch code is RUN here (torch
2.13, in this process) and must print exactly the lines the panel shows — grads and grad_fn
names. The JAX code is generated and checked for shape, not run (JAX is not installed in CI)."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
import torch
from fastapi.testclient import TestClient

from app.examples import EXAMPLES
from app.main import app
from engine import lessons
from engine.program import run_program

client = TestClient(app)

MORE = [
    ("sub_div_pow", "x = 2.0\ny = 0.5\nL = (1 - x)*(x/4) + 2**y + x**y + 1/y", {}),
    (
        "index_transpose",
        "W = randn(3, 4)\nv = W[:, 1] + W[0, 1:].sum()\n"
        "M = W.T.reshape(2, 6)\nL = v.sum() + M.mean(axis=0).sum()",
        {},
    ),
    ("ce_batch", "Z = randn(3, 4)\nt = [0, 3, 1]\nL = cross_entropy(Z, t)", {}),
    ("detach_loop", "x = 1.5\nh = x\nfor i in range(3):\n    h = h*const(h) + i\nh", {}),
    (
        "free_vector",
        "mse(w @ x, y)",
        {"w": [[1.0, 2.0], [3.0, 4.0]], "x": [0.5, -1.0], "y": [1.0, 2.0]},
    ),
    ("second_order", "x = 3\ny = x**3\ng = grad(y, x)\ng", {}),
    ("nonscalar", "x = [1.0, 2.0, 3.0]\ny = x * x", {}),
    ("seeded", "seed(7)\nA = rand(2, 3)\nB = randn(3)\nL = relu(A @ B - 0.2).sum()", {}),
    # names of the generated code's own (np, print, show, torch): renamed, so it still runs
    (
        "shadowing",
        "np = 2.0\nprint = np * 3\nfor torch in range(2):\n    show = print + torch\nshow",
        {},
    ),
]


def run_torch(code: str) -> str:
    out = io.StringIO()
    dtype = torch.get_default_dtype()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<generated>", "exec"), {"__name__": "generated"})  # noqa: S102
    finally:
        torch.set_default_dtype(dtype)
    return out.getvalue()


CASES: list[tuple[str, str, dict[str, Any]]] = [
    (e["id"], e["source"], e["values"]) for e in EXAMPLES
] + MORE


@pytest.mark.parametrize(("name", "source", "values"), CASES, ids=[c[0] for c in CASES])
def test_the_generated_pytorch_code_prints_what_the_panel_says(name, source, values):
    data = lessons.code(run_program(source, values))
    assert run_torch(data["torch"]) == data["torch_output"]


def test_the_notes_max_example_prints_the_errata_numbers():
    r = client.post(
        "/api/trace",
        json={
            "source": "(x*y)*max(x*y, z)",
            "values": {"x": 2, "y": 3, "z": 4},
            "lessons": ["code"],
        },
    )
    data = r.json()["lessons"]["code"]
    # ERRATA 1: PyTorch prints 36, 24, 0 (not the note's 21, 14, 0).
    assert data["torch_output"] == (
        "out.grad_fn: MulBackward0\nx.grad = 36.0\ny.grad = 24.0\nz.grad = 0.0\n"
    )
    assert run_torch(data["torch"]) == data["torch_output"]
    assert sorted(data["node_grad_fns"].values()) == ["MaximumBackward0"] + ["MulBackward0"] * 3


def test_grad_fn_names_follow_pytorch():
    data = lessons.code(run_program(MORE[0][1]))
    fns = sorted(data["node_grad_fns"].values())
    assert {"RsubBackward1", "DivBackward0", "PowBackward2", "PowBackward1", "MulBackward0"} <= set(
        fns
    )


def test_the_jax_code_mirrors_the_program():
    data = lessons.code(
        run_program(
            "W = randn(4, 8)\nx = randn(8)\nb = zeros(4)\ny = ones(4)\n"
            "L = ((sigmoid(W@x + b) - y)**2).sum()"
        )
    )
    jax_code = data["jax"]
    assert 'jax.config.update("jax_enable_x64", True)' in jax_code
    assert '"W": jnp.array(rng.standard_normal((4, 8))),' in jax_code
    assert "L = jnp.sum((jax.nn.sigmoid(W @ x + b) - y)**2)" in jax_code
    assert "grads = jax.grad(f)(params)" in jax_code
    compile(jax_code, "<jax>", "exec")  # valid Python
    assert data["jax_output"].splitlines()[0].startswith("W.grad = [[")
    ce = lessons.code(run_program("Z = randn(3, 4)\nt = [0, 3, 1]\nL = cross_entropy(Z, t)"))["jax"]
    assert "[jnp.arange(Z.shape[0]), t]" in ce  # one label per row (ERRATA 3)
    assert lessons.code(run_program("x = 3\ny = x**3\ng = grad(y, x)\ng"))["jax"] is None
