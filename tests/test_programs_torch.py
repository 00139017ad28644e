"""Random programs against PyTorch: the same expression DAG is built in the engine and in torch
(float64), and the output value and every leaf's grad must agree to 1e-9 relative.

Programs come from `strategies.programs`: scalar and tensor, values used several times (fan-out),
shared subexpressions, constants, broadcasting, batched matmul with 1-d sides, reductions,
views, indexing, softmax and the losses. Domains are kept NaN-free (log/sqrt only of values made
positive, e.g. x*x + 1) and bounded. They are built through the Python API, and — once the
language front end exists — written as source text and run through `engine.run`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.autograd.backward import backward
from engine.autograd.graph import reachable
from engine.tracing.record import trace
from tests.strategies import (
    Instr,
    Program,
    assert_close,
    bounded,
    build_engine,
    engine_grad,
    get_run,
    programs,
    to_source,
    torch_reference,
)

pytest.importorskip("torch")


def check_python_api(prog: Program, order: str = "dfs") -> None:
    value, grads = torch_reference(prog)
    leaves, out, _ = build_engine(prog)
    backward(out, order=order)
    info = f"\n{prog.describe()}"
    assert_close(out.data, value, what="output value" + info)
    for x in leaves:
        assert_close(engine_grad(x), grads[x.name], what=f"grad of {x.name}" + info)


@bounded(150)
@given(programs(tensors=False, max_ops=12))
def test_scalar_programs_match_torch(prog: Program) -> None:
    check_python_api(prog)


@bounded(200)
@given(programs(tensors=True, max_ops=10))
def test_tensor_programs_match_torch(prog: Program) -> None:
    check_python_api(prog)


MATMUL_HEAVY = ("matmul", "matmul", "matmul", "add", "mul", "sub", "tanh", "sigmoid", "sum",
                "mean", "transpose", "softmax", "mse", "index")  # fmt: skip


@bounded(100)
@given(programs(tensors=True, max_ops=8, kinds=MATMUL_HEAVY))
def test_matmul_broadcast_programs_match_torch(prog: Program) -> None:
    assert any(isinstance(e, Instr) for e in prog.entries)
    check_python_api(prog)


@bounded(60)
@given(programs(tensors=True, max_ops=10), st.sampled_from(["dfs", "kahn"]))
def test_traced_programs_match_torch(prog: Program, order: str) -> None:
    """The same through engine.tracing.record: the JSON grads by leaf label equal torch's."""
    value, grads = torch_reference(prog)
    _, out, made = build_engine(prog)
    # Every node: the ones the program made (unused leaves included) and the constants it lifted.
    everything = {n.seq: n for v in made for n in reachable(v)}
    nodes = [everything[k] for k in sorted(everything)]
    d = json.loads(json.dumps(trace(out, nodes=nodes, order=order).to_dict(), allow_nan=False))
    assert_close(d["value"], value, what="output value")
    assert set(d["grads"]) == set(grads)
    for name, g in grads.items():
        assert_close(d["grads"][name], g, what=f"grad of {name}\n{prog.describe()}")


def test_the_generator_makes_fanout_broadcasting_and_batched_matmul() -> None:
    """The programs above really contain what they claim (a check of the generator)."""
    seen: dict[str, int] = {
        "fanout": 0,
        "broadcast": 0,
        "batched_matmul": 0,
        "vector_matmul": 0,
        "shared_subexpression": 0,
        "non_scalar_output": 0,
    }

    @bounded(200)
    @given(programs(tensors=True, max_ops=10))
    def collect(prog: Program) -> None:
        values = [np.asarray(getattr(e, "value", None)) for e in prog.entries]
        _, _, made = build_engine(prog)
        shapes = [v.data.shape for v in made]
        users = prog.users()
        seen["fanout"] += prog.has_fanout()
        seen["shared_subexpression"] += any(
            isinstance(e, Instr) and users[i] > 1 for i, e in enumerate(prog.entries)
        )
        seen["non_scalar_output"] += bool(shapes[-1])
        for e in prog.entries:
            if not isinstance(e, Instr):
                continue
            arg_shapes = [shapes[a] for a in e.args if isinstance(a, int)]
            if e.op == "matmul":
                if any(len(s) > 2 for s in arg_shapes):
                    seen["batched_matmul"] += 1
                if any(len(s) == 1 for s in arg_shapes):
                    seen["vector_matmul"] += 1
            elif (
                e.op in ("add", "sub", "mul", "div", "pow", "max", "min", "mse")
                and len(set(arg_shapes)) > 1
            ):
                seen["broadcast"] += 1
        del values

    collect()
    for what, n in seen.items():
        # A floor, not a quota: hypothesis's choices shift a little with what ran before.
        assert n >= 1, f"the generator made no program with {what}: {seen}"


# --- the same programs as source text, through engine.run ----------------------------------------


def run_source(prog: Program, order: str = "dfs") -> dict[str, Any]:
    run = get_run()
    source, values = to_source(prog)
    trace_ = run(source, values=values, accumulate="add", order=order)
    return json.loads(json.dumps(trace_.to_dict(), allow_nan=False))


def check_source(prog: Program, order: str = "dfs") -> None:
    value, grads = torch_reference(prog)
    source, values = to_source(prog)
    d = run_source(prog, order)
    info = f"\nsource:\n{source}values: {values}"
    assert_close(d["value"], value, what="output value" + info)
    assert set(d["grads"]) == set(grads), info
    for name, g in grads.items():
        assert_close(d["grads"][name], g, what=f"grad of {name}" + info)


@bounded(100)
@given(programs(tensors=False, max_ops=12))
def test_scalar_source_programs_match_torch(prog: Program) -> None:
    check_source(prog)


@bounded(120)
@given(programs(tensors=True, max_ops=10), st.sampled_from(["dfs", "kahn"]))
def test_tensor_source_programs_match_torch(prog: Program, order: str) -> None:
    check_source(prog, order)


@bounded(60)
@given(programs(tensors=True, max_ops=8, kinds=MATMUL_HEAVY))
def test_matmul_source_programs_match_torch(prog: Program) -> None:
    check_source(prog)


def test_a_source_program_with_a_loop_matches_torch() -> None:
    """An unrolled RNN-like loop: the weight fans out once per step, its grad sums the steps."""
    import torch

    run = get_run()
    source = (
        "W = [[0.5, -0.25], [0.125, 0.75]]\n"
        "h = [1.0, -2.0]\n"
        "for i in range(4):\n"
        "    h = tanh(W @ h + 0.5)\n"
        "L = sum(h * h)\n"
    )
    d = run(source).to_dict()
    W = torch.tensor([[0.5, -0.25], [0.125, 0.75]], dtype=torch.float64, requires_grad=True)
    h0 = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    h = h0
    for _ in range(4):
        h = torch.tanh(W @ h + 0.5)
    L = (h * h).sum()
    L.backward()
    assert_close(d["value"], L.item())
    assert_close(d["grads"]["W"], W.grad.numpy())
    assert_close(d["grads"]["h"], h0.grad.numpy())


# --- hand-written source programs: constructors, methods, rebinding, loops ---------------------


def _mlp(t: dict[str, Any]) -> Any:
    import torch

    h = torch.tanh(t["X"] @ t["W1"] + t["b1"])
    return torch.nn.functional.cross_entropy(h @ t["W2"], torch.tensor([0, 2, 1, 2]))


def _methods(t: dict[str, Any]) -> Any:
    import torch

    s = (t["W"].T @ t["v"]).tanh().sum(dim=0)
    return s * torch.sigmoid(t["v"]).mean() + t["W"].exp().sum(dim=1, keepdim=True).log().sum()


def _nonscalar(t: dict[str, Any]) -> Any:
    import torch

    return (
        torch.maximum(t["a"], t["b"])
        * torch.minimum(t["a"], torch.tensor(0.5, dtype=torch.float64))
        - abs(t["b"]) ** 2
    )


def _rnn(t: dict[str, Any]) -> Any:
    import torch

    h = t["h"]
    loss = t["loss"]  # `loss = 0` binds a name to a literal: a leaf, with grad 1
    for i in range(3):
        h = torch.tanh(t["W"] @ h + t["U"] * (i + 1))
        loss = loss + (h * h).sum()
    return loss


def _softmax_loss(t: dict[str, Any]) -> Any:
    import torch

    p = torch.softmax(t["z"], 1)
    return ((p - t["y"]) ** 2).mean() + torch.log_softmax(t["z"], 0)[1, 2] * -1


SOURCE_PROGRAMS = [
    (
        "mlp",
        "seed(7)\nX = randn(4, 3)\nW1 = randn(3, 5)\nb1 = zeros(5)\nW2 = rand(5, 3)\n"
        "t = [0, 2, 1, 2]\nh = tanh(X @ W1 + b1)\nL = cross_entropy(h @ W2, t)\n",
        None,
        _mlp,
    ),
    ("rebinding", "x = 2\nx = x * 3\nL = x * x + x", None, None),
    (
        "methods",
        "W = [[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]]; v = [1.0, -2.0]\n"
        "s = (W.T @ v).tanh().sum(axis=0)  # a comment\n"
        "s * sigmoid(v).mean() + log(exp(W).sum(axis=1, keepdims=True)).sum()\n",
        None,
        _methods,
    ),
    (
        "nonscalar",
        "max(a, b) * min(a, 0.5) - abs(b) ** 2",
        {"a": [[1.0, -2.0], [0.5, 3.0]], "b": [0.5, -1.5]},
        _nonscalar,
    ),
    (
        "rnn",
        "W = full((2, 2), 0.3)\nU = arange(2)\nh = ones(2)\nloss = 0\n"
        "for i in range(3):\n"
        "    h = tanh(W @ h + U * (i + 1))\n"
        "    loss = loss + sum(h * h)\n"
        "loss\n",
        None,
        _rnn,
    ),
    (
        "softmax_loss",
        "p = softmax(z, axis=1)\nL = mse(p, y) - log_softmax(z, axis=0)[1, 2]",
        {"z": [[1.0, 2.0, 3.0], [0.5, -0.5, 4.0]], "y": [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]},
        _softmax_loss,
    ),
]


@pytest.mark.parametrize(
    "name,source,values,reference", SOURCE_PROGRAMS, ids=[p[0] for p in SOURCE_PROGRAMS]
)
def test_hand_written_source_programs_match_torch(
    name: str, source: str, values: Any, reference: Any
) -> None:
    import torch

    run = get_run()
    d = json.loads(json.dumps(run(source, values=values).to_dict(), allow_nan=False))
    if reference is None:  # rebinding: x = 2; x_2 = 3x = 6; L = x_2² + x_2 → 3·(2·6 + 1) = 39
        assert d["grads"] == {"x": 39.0}
        assert d["value"] == 42.0
        assert [n["label"] for n in d["nodes"] if n["name"] == "x"] == ["x", "x_2"]
        return
    # The leaves' values as the program made them (constructors, literals, values=).
    leaves = {n["label"]: n for n in d["nodes"] if n["kind"] == "leaf"}
    t = {
        k: torch.tensor(n["value"], dtype=torch.float64, requires_grad=True)
        for k, n in leaves.items()
    }
    out = reference(t)
    out.backward(torch.ones_like(out))
    assert_close(d["value"], out.detach().numpy(), what=f"{name}: value")
    assert set(d["grads"]) == set(t)
    for k, tensor_ in t.items():
        g = tensor_.grad.numpy() if tensor_.grad is not None else np.zeros(tuple(tensor_.shape))
        assert_close(d["grads"][k], g, what=f"{name}: grad of {k}")


def test_seeded_constructors_draw_from_numpy_default_rng_in_program_order() -> None:
    run = get_run()
    d = run(
        "seed(7)\nA = randn(2, 3)\nB = rand(3)\nC = randn(2)\nL = sum(A) + sum(B) + sum(C)"
    ).to_dict()
    rng = np.random.default_rng(7)
    values = {n["label"]: n["value"] for n in d["nodes"] if n["kind"] == "leaf"}
    assert_close(values["A"], rng.standard_normal((2, 3)), rtol=0, atol=0)
    assert_close(values["B"], rng.random(3), rtol=0, atol=0)
    assert_close(values["C"], rng.standard_normal(2), rtol=0, atol=0)
    unseeded = run("A = randn(2)\nL = sum(A)").to_dict()
    a = [n["value"] for n in unseeded["nodes"] if n["label"] == "A"][0]
    assert_close(a, np.random.default_rng(0).standard_normal(2), rtol=0, atol=0)
