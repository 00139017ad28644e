"""One program, two spellings: gradtrace's own (`exp(x)`, `sum(x, axis=1)`, a bound literal
is a leaf) and PyTorch's (`torch.exp(x)`, `x.sum(dim=1)`, `torch.tensor(v,
requires_grad=True)`, a tensor without it a constant). Hypothesis writes both from one list of
steps; both must give the same value and grads, equal to real PyTorch's (float64)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import run

torch = pytest.importorskip("torch")
F = torch.nn.functional


@dataclass(frozen=True)
class Step:
    """One op in both spellings ({0}, {1}: its inputs) and what torch computes for it."""

    ours: str
    theirs: str
    torch: Callable[..., Any]
    arity: int = 1


STEPS = {
    "exp": Step("exp({0} * 0.3)", "torch.exp({0} * 0.3)", lambda a: torch.exp(a * 0.3)),
    "tanh": Step("tanh({0})", "{0}.tanh()", torch.tanh),
    "sigmoid": Step("sigmoid({0})", "torch.sigmoid({0})", torch.sigmoid),
    "relu": Step("relu({0})", "F.relu({0})", F.relu),
    "square": Step("{0} ** 2", "torch.pow({0}, 2)", lambda a: a**2),
    "pow-method": Step("{0} ** 3", "{0}.pow(3)", lambda a: a.pow(3)),
    "sum-keep": Step(
        "sum({0}, axis=1, keepdims=True) * {0}",
        "{0}.sum(dim=1, keepdim=True) * {0}",
        lambda a: a.sum(dim=1, keepdim=True) * a,
    ),
    "mean-0": Step("mean({0}, axis=0) + {0}", "torch.mean({0}, 0) + {0}", lambda a: a.mean(0) + a),
    "softmax": Step("softmax({0}, axis=1)", "F.softmax({0}, dim=1)", lambda a: F.softmax(a, 1)),
    "log-softmax": Step(
        "log_softmax({0}, axis=0)", "torch.log_softmax({0}, dim=0)", lambda a: a.log_softmax(0)
    ),
    "clamp": Step(
        "clamp({0}, -0.5, 0.7)", "{0}.clamp(min=-0.5, max=0.7)", lambda a: a.clamp(-0.5, 0.7)
    ),
    "view": Step(
        "reshape(reshape({0}, (6,)), (2, 3))", "{0}.view(-1).view(2, 3)", lambda a: a.view(2, 3)
    ),
    "gather": Step("{0}[[1, 1]]", "{0}[[1, 1]]", lambda a: a[[1, 1]]),
    "mul": Step("{0} * {1}", "torch.mul({0}, {1})", lambda a, b: a * b, 2),
    "maximum": Step("max({0}, {1})", "torch.maximum({0}, {1})", torch.maximum, 2),
    "minimum": Step("min({0}, {1})", "np.minimum({0}, {1})", torch.minimum, 2),
    "cat": Step(
        "cat([{0}, {1}], axis=1)[:, 1:4]",
        "torch.cat([{0}, {1}], dim=1)[:, 1:4]",
        lambda a, b: torch.cat([a, b], dim=1)[:, 1:4],
        2,
    ),
    "stack": Step(
        "sum(stack([{0}, {1}], axis=2), axis=2)",
        "torch.stack([{0}, {1}], dim=2).sum(dim=2)",
        lambda a, b: torch.stack([a, b], 2).sum(2),
        2,
    ),
    "matmul": Step(
        "matmul({0}, {1}.T) @ {0}",
        "torch.matmul({0}, {1}.t()) @ {0}",
        lambda a, b: (a @ b.T) @ a,
        2,
    ),
}
# torch.mul is not in the table of torch's functions: spell it as an operator there
STEPS["mul"] = Step("{0} * {1}", "{0} * {1}", lambda a, b: a * b, 2)

numbers = st.floats(-1.5, 1.5, allow_nan=False).map(lambda v: round(v, 3))
matrix = st.lists(st.lists(numbers, min_size=3, max_size=3), min_size=2, max_size=2)


@st.composite
def programs(draw: Any) -> tuple[list[list[list[float]]], list[tuple[str, tuple[int, ...]]]]:
    leaves = [draw(matrix) for _ in range(3)]  # a, b: leaves; k: a constant
    steps = []
    for i in range(draw(st.integers(1, 6))):
        name = draw(st.sampled_from(sorted(STEPS)))
        inputs = tuple(draw(st.integers(0, 2 + i)) for _ in range(STEPS[name].arity))
        steps.append((name, inputs))
    return leaves, steps


NAMES = ["a", "b", "k"]


def sources(leaves: list[Any], steps: list[tuple[str, tuple[int, ...]]]) -> tuple[str, str]:
    ours = [f"a = {leaves[0]}", f"b = {leaves[1]}", f"k = const({leaves[2]})"]
    theirs = [
        "import torch",
        "import numpy as np",
        "import torch.nn.functional as F",
        f"a = torch.tensor({leaves[0]}, requires_grad=True)",
        f"b = torch.tensor({leaves[1]}, dtype=torch.float64, requires_grad=True)",
        f"k = torch.tensor({leaves[2]})",
    ]
    names = list(NAMES)
    for i, (name, inputs) in enumerate(steps):
        args = [names[j] for j in inputs]
        ours.append(f"v{i} = {STEPS[name].ours.format(*args)}")
        theirs.append(f"v{i} = {STEPS[name].theirs.format(*args)}")
        names.append(f"v{i}")
    last = names[-1]
    ours.append(f"L = sum({last} * {last}) + sum(a * b)")
    theirs.append(f"L = ({last} * {last}).sum() + (a * b).sum()")
    return "\n".join(ours), "\n".join(theirs)


def reference(leaves: list[Any], steps: list[tuple[str, tuple[int, ...]]]) -> tuple[float, Any]:
    a, b = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in leaves[:2])
    values = [a, b, torch.tensor(leaves[2], dtype=torch.float64)]
    for name, inputs in steps:
        values.append(STEPS[name].torch(*(values[j] for j in inputs)))
    out = (values[-1] * values[-1]).sum() + (a * b).sum()
    out.backward()
    grad = {
        n: (np.zeros((2, 3)) if x.grad is None else x.grad.numpy())
        for n, x in zip("ab", (a, b), strict=True)
    }
    return float(out), grad


def grads_of(d: dict[str, Any]) -> dict[str, Any]:
    return {n: np.asarray(d["grads"].get(n, np.zeros((2, 3)))) for n in ("a", "b")}


@settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(programs())
def test_both_spellings_give_torchs_value_and_grads(program: Any) -> None:
    leaves, steps = program
    ours, theirs = sources(leaves, steps)
    a = run(ours).to_dict()
    b = run(theirs).to_dict()
    assert "k" not in a["grads"] and "k" not in b["grads"], "a constant got a gradient"
    value, expected = reference(leaves, steps)
    for d, src in ((a, ours), (b, theirs)):
        assert d["value"] == pytest.approx(value, rel=1e-9, abs=1e-12), src
        for n in ("a", "b"):
            np.testing.assert_allclose(
                grads_of(d)[n], expected[n], rtol=1e-9, atol=1e-12, err_msg=src
            )
    assert a["value"] == b["value"] and a["grads"] == b["grads"]
    assert [n["op"] for n in a["nodes"]] == [n["op"] for n in b["nodes"]]


def test_the_generator_reaches_every_step() -> None:
    # (more examples than the test above runs: this one only draws them)
    seen: set[str] = set()

    @settings(max_examples=200, derandomize=True, database=None, deadline=None)
    @given(programs())
    def collect(program: Any) -> None:
        seen.update(name for name, _ in program[1])

    collect()
    assert seen == set(STEPS)
