"""PyTorch's backward as programs write it (spec/language.md): `L.backward()` is a pass where it
stands (grads accumulate, later statements still run), `L.backward(gradient=v)` seeds it, and
`print(…)` / `x.grad` show values in Run.printed, written as PyTorch (or NumPy) prints them —
checked against real torch's own str()."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from engine import ProgramError
from engine.autograd.backward import backward
from engine.library.printing import torch_text
from engine.limits import Limits
from engine.program import run_program

SEEDED = "seed" in inspect.signature(backward).parameters


def printed(source: str, **kw: object) -> list[str]:
    return [p["text"] for p in run_program(source, **kw).printed]  # type: ignore[arg-type]


def refused(source: str) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run_program(source)
    return info.value


def test_backward_marks_the_output_and_later_statements_still_run() -> None:
    r = run_program("x = 2.0\nL = x * x\nL.backward()\nM = L * 3\nprint(x.grad)")
    assert r.output.name == "L" and float(r.output.data) == 4.0
    assert r.trace.to_dict()["grads"] == {"x": 4.0}
    assert r.printed == [{"line": 5, "text": "4.0"}]


def test_every_backward_call_is_a_pass_and_grads_accumulate() -> None:
    # was "the last call wins" (x.grad = 4): PyTorch adds both passes' grads, 10 + 4
    r = run_program("x = 2.0\nA = x * x\nB = x * 10\nB.backward()\nA.backward()\nC = B")
    assert r.output.name == "A" and r.trace.to_dict()["grads"] == {"x": 14.0}
    assert [p["grads_after"] for p in r.trace.to_dict()["passes"]] == [{"x": 10.0}, {"x": 14.0}]


def test_prints_read_as_pytorch_prints_them() -> None:
    src = (
        "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x + x\nprint(y)\n"
        "print(x.grad)\ny.backward()\nprint('x.grad =', x.grad)\nprint(x.grad.item(), y.item())"
        "\nz = torch.tensor([1.0, 0.25])\nprint(z * 2)\nprint(y.grad)"
    )
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x + x
    assert printed(src)[0] == str(y)  # tensor(6., grad_fn=<AddBackward0>)
    y.backward()
    assert x.grad is not None
    z = torch.tensor([1.0, 0.25])
    expected = ["None", f"x.grad = {x.grad!s}", f"{x.grad.item()} {y.item()}", str(z * 2), "None"]
    assert printed(src)[1:] == expected  # a non-leaf's grad is None, as in PyTorch
    assert [p["line"] for p in run_program(src).printed] == [4, 5, 7, 8, 10, 11]


def test_without_torch_values_print_as_numpy_and_grads_as_they_are_then() -> None:
    # statements run in order: before a backward pass, a grad is zeros (no torch: no None)
    src = "x = [1.0, 2.0]\nL = sum(x * x)\nprint(x.grad)\nprint(L, x)\nL.backward()\nx.grad"
    assert printed(src) == ["[0. 0.]", "5.0 [1. 2.]", str(np.array([2.0, 4.0]))]


def test_printed_output_is_cut_at_max_print_chars() -> None:
    lines = printed(
        "x = ones(100)\nfor i in range(50):\n    print(x)", limits=Limits(max_print_chars=2_000)
    )
    assert lines[-1].startswith("… (the printed output is cut at 2,000 characters")
    assert "max_print_chars" in lines[-1] and sum(len(t) for t in lines[:-1]) <= 2_000


@pytest.mark.parametrize(
    ("src", "line", "column", "code", "words"),
    [
        (
            "x = [1.0, 2.0]\nL = x * 2\nL.backward()",
            3,
            1,
            "backward",
            "grad can be implicitly created only for scalar outputs",
        ),
        (
            "x = [1.0, 2.0]\nL = x * 2\nL.backward(gradient=[1.0, 2.0, 3.0])",
            3,
            1,
            "shape",
            "needs v of L's shape (2,), but v has shape (3,)",
        ),
        ("x = const(2.0)\nL = x * 3\nL.backward()", 3, 1, "backward", "does not require grad"),
        ("x = 1.0\nL = x\nL.backward(foo=1)", 3, 12, "keyword", "backward() has no keyword"),
        (
            "import torch\nx = torch.tensor(1.0, requires_grad=True)\ny = x.grad + 1",
            3,
            5,
            "invalid",
            "this grad is None",
        ),
        ("x = 1.0\ny = print(x)", 2, 5, "no_output", "the output is None"),
    ],
)
def test_backward_and_print_refusals(
    src: str, line: int, column: int, code: str, words: str
) -> None:
    e = refused(src)
    assert (e.line, e.column, e.code) == (line, column, code), e.message
    assert words in e.message


@pytest.mark.skipif(not SEEDED, reason="needs backward(seed=…): H8's patch to backward.py")
def test_backward_with_a_gradient_seeds_the_output() -> None:
    src = (
        "import torch\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = x * x\n"
        "y.backward(gradient=torch.tensor([1.0, 0.1, 0.01]))\nprint(x.grad)"
    )
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(gradient=torch.tensor([1.0, 0.1, 0.01]))
    r = run_program(src)
    assert x.grad is not None and printed(src) == [str(x.grad)]
    assert r.trace.to_dict()["grads"]["x"] == pytest.approx(x.grad.tolist())
    first = r.trace.to_dict()["steps"][0]
    assert first["grads"][r.id(r.output)] == pytest.approx([1.0, 0.1, 0.01])


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
        elements=st.one_of(
            st.integers(-2000, 2000).map(float),
            st.floats(-1e5, 1e5, allow_nan=False, width=32),
            st.sampled_from([0.0, 1e-6, 0.5, 123456.0, 1e9]),
        ),
    )
)
def test_tensors_print_as_torch_prints_them(data: np.ndarray) -> None:
    assert torch_text(data) == str(torch.tensor(data, dtype=torch.float32))
