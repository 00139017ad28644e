"""Lesson 8, what backward keeps alive: saved values per step, freed after their last use,
the peak; what each op keeps is checked against the tensors PyTorch's grad_fn saves."""

from __future__ import annotations

import pytest
import torch
from fastapi.testclient import TestClient

from app.examples import EXAMPLES
from app.main import app
from engine import lessons
from engine.autograd.value import leaf
from engine.lessons.memory import saved_by
from engine.program import run_program

client = TestClient(app)

# engine op -> (how to make it in torch, the names of the _saved_ tensors torch keeps)
TORCH = {
    "add": (lambda a, b: a + b, set()),
    "mul": (lambda a, b: a * b, {"self", "other"}),
    "div": (lambda a, b: a / b, {"self", "other"}),
    "max": (torch.maximum, {"self", "other"}),
    "exp": (lambda a, b: a.exp(), {"result"}),
    "log": (lambda a, b: a.log(), {"self"}),
    "sqrt": (lambda a, b: a.sqrt(), {"result"}),
    "sin": (lambda a, b: a.sin(), {"self"}),
    "tanh": (lambda a, b: a.tanh(), {"result"}),
    "sigmoid": (lambda a, b: a.sigmoid(), {"result"}),
    "relu": (lambda a, b: a.relu(), {"result"}),
    "abs": (lambda a, b: a.abs(), {"self"}),
    "neg": (lambda a, b: -a, set()),
    "softmax": (lambda a, b: a.softmax(-1), {"result"}),
}


@pytest.mark.parametrize("name", sorted(TORCH))
def test_each_op_keeps_what_pytorch_keeps(name):
    import engine.autograd.ops as O

    fn, expected = TORCH[name]
    a0, b0 = [1.0, 2.0], [3.0, 0.5]
    a = torch.tensor(a0, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(b0, dtype=torch.float64, requires_grad=True)
    grad_fn = fn(a, b).grad_fn
    kept = {
        n[len("_saved_") :]
        for n in dir(grad_fn)
        if n.startswith("_saved_")
        and not n.startswith("_saved_raw")
        and isinstance(getattr(grad_fn, n), torch.Tensor)
    }
    assert kept == expected
    x, y = leaf(a0, "a"), leaf(b0, "b")
    unary = {
        "exp": O.exp,
        "log": O.log,
        "sqrt": O.sqrt,
        "sin": O.sin,
        "tanh": O.tanh,
        "sigmoid": O.sigmoid,
        "relu": O.relu,
        "abs": O.absolute,
        "neg": O.neg,
        "softmax": O.softmax,
    }
    binary = {"add": O.add, "mul": O.mul, "div": O.div, "max": O.maximum}
    node = unary[name](x) if name in unary else binary[name](x, y)
    ours = {"self" if v is x else "other" if v is y else "result" for v in saved_by(node)}
    assert ours == expected


def test_the_notes_example_keeps_x_and_y_until_the_mul_runs():
    r = client.post(
        "/api/trace", json={"source": "x*y + x", "values": {"x": 2, "y": 3}, "lessons": ["memory"]}
    ).json()
    data = r["lessons"]["memory"]
    assert [(s["value"], s["by"], s["last_step"]) for s in data["saved"]] == [
        ("n0", ["n2"], 2),
        ("n1", ["n2"], 2),
    ]
    assert [s["count"] for s in data["steps"]] == [2, 2, 2]
    assert data["steps"][2]["freed"] == ["n0", "n1"]
    assert data["not_saved"] == ["n2", "n3"]  # the add reads nothing; the mul's result is unused
    assert data["peak"] == {"step": 0, "count": 2, "elements": 2}


def test_activations_are_freed_as_backward_passes_them_and_detach_cuts():
    ex = next(e for e in EXAMPLES if e["id"] == "saved")
    data = lessons.memory(run_program(ex["source"]))
    steps = data["steps"]
    counts = [s["count"] for s in steps]
    assert counts == sorted(counts, reverse=True)  # the peak is at the start; then it falls
    assert steps[0]["count"] == data["peak"]["count"] == 7
    assert steps[-1]["count"] == len(steps[-1]["freed"])  # the last step frees what is left
    kinds = {s["value"]: s["kind"] for s in data["saved"]}
    assert kinds["n3"] == "op"  # h = tanh(W @ x) keeps its output
    assert data["detached"] == ["n4"]
    cut = lessons.memory(run_program("x = 2\nh = exp(x)\nc = const(h)\nL = c*3"))
    assert cut["cut"] == ["n1", "n4"] and cut["saved"] == []


def torch_saved(grad_fn) -> set[str]:
    """The tensors (not sizes, not index lists) a torch grad_fn keeps for its backward."""
    return {
        n[len("_saved_") :]
        for n in dir(grad_fn)
        if n.startswith("_saved_")
        and not n.startswith("_saved_raw")
        and isinstance(getattr(grad_fn, n), torch.Tensor)
    }


def test_joins_clamp_and_index_lists_keep_what_pytorch_keeps():
    import engine.autograd.ops as O

    a0, b0 = [1.0, -2.0, 0.5], [3.0, 0.5, -1.0]
    a = torch.tensor(a0, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(b0, dtype=torch.float64, requires_grad=True)
    x, y = leaf(a0, "a"), leaf(b0, "b")
    made = {  # engine node, torch grad_fn, the names torch keeps: self is a (x here)
        "cat": (O.cat([x, y]), torch.cat([a, b]).grad_fn, set()),
        "stack": (O.stack([x, y], axis=1), torch.stack([a, b], dim=1).grad_fn, set()),
        "gather": (O.gather(x, ((0, 2, 0),)), a[[0, 2, 0]].grad_fn, set()),
        "clamp": (O.clamp(x, -1.0, 0.75), torch.clamp(a, -1.0, 0.75).grad_fn, {"self"}),
    }
    for name, (node, grad_fn, expected) in made.items():
        assert node.op is not None and node.op.name == name
        assert torch_saved(grad_fn) == expected, name
        ours = {"self" if v is x else "other" if v is y else "result" for v in saved_by(node)}
        assert ours == expected, name


def test_a_program_with_joins_frees_the_clamped_input_after_clamp_runs():
    data = lessons.memory(
        run_program("x = [1.0, -2.0]\ny = [0.5, 3.0]\nL = clamp(cat([x, y]), 0, 1).sum()")
    )
    # only clamp reads a value (its input, the cat); cat, sum and the leaves keep nothing
    assert [(s["value"], s["by"]) for s in data["saved"]] == [("n2", ["n3"])]
    assert data["peak"]["elements"] == 4
    freed = [s["freed"] for s in data["steps"]]
    assert ["n2"] in freed
