"""The published transform examples of tests/corpus/ (issue 25), each run twice: by gradtrace
and by the real library (jax on the CPU, in float32), their printed lines compared number by
number. Where a source draws with torch.rand, the relation its answer must satisfy is checked
on what gradtrace drew (gradtrace's torch generator is not torch's)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import run_program
from engine.autograd.value import Value

CORPUS = Path(__file__).parent / "corpus"
JAX_FILES = [
    "jax_cookbook_starting_with_grad",
    "jax_cookbook_logistic_random",
    "jax_cookbook_value_and_grad",
    "jax_cookbook_jacfwd_jacrev",
    "jax_cookbook_jvp",
    "jax_cookbook_vjp",
    "jax_cookbook_hvp",
    "jax_autodiff_higher_order",
    "jax_vmap_batched_grad",
    "d2l_autograd_control_flow_jax",
    "jax_quickstart_grad",
    "jax_quickstart_hessian",
    "jax_jit_decorated_grad",
    "jax_cookbook_hvp_grad_of_grad",
]
# The numbers of a printed line: JAX's reprs (Array(…, dtype=float32)) name a dtype, whose
# digits are not numbers of the answer.
DTYPE = re.compile(r"dtype=\w+")
NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def numbers_of(line: str) -> list[float]:
    return [float(n) for n in NUMBER.findall(DTYPE.sub("", line))]


def printed_by_jax(source: str) -> list[str]:
    pytest.importorskip("jax")
    lines: list[str] = []

    def capture(*args: Any, sep: str = " ", end: str = "\n") -> None:
        lines.append(sep.join(str(a) for a in args))

    scope: dict[str, Any] = {"print": capture}
    exec(compile(source, "<corpus>", "exec"), scope)  # noqa: S102 (the real library, in a test)
    return lines


@pytest.mark.parametrize("name", JAX_FILES)
def test_a_published_jax_transform_prints_jaxs_numbers(name: str) -> None:
    source = (CORPUS / f"{name}.py").read_text(encoding="utf-8")
    ours = [line["text"] for line in run_program(source).printed]
    theirs = printed_by_jax(source)
    if name == "d2l_autograd_control_flow_jax":  # its last line is a notebook display
        theirs.append("True")
    assert len(ours) == len(theirs), (ours, theirs)
    for a, b in zip(ours, theirs, strict=True):
        x, y = numbers_of(a), numbers_of(b)
        assert len(x) == len(y), (a, b)
        np.testing.assert_allclose(x, y, rtol=2e-5, atol=2e-6, err_msg=f"{a!r} vs {b!r}")


def drawn(run: Any, name: str) -> np.ndarray:
    v = run.interpreter.env[name]
    return np.asarray(v.data if isinstance(v, Value) else v.node.data)


def shown(run: Any) -> list[float]:
    """The numbers of the last line a run shows (a notebook's display of its last value)."""
    return numbers_of(run.printed[-1]["text"])


def test_the_published_autograd_functional_examples_hold_their_relations() -> None:
    source = (CORPUS / "pytorch_autograd_functional_hessian_docs.py").read_text(encoding="utf-8")
    run = run_program(source)
    x = drawn(run, "inputs")
    H = np.zeros((2, 2, 2, 2))
    for i, j in np.ndindex(2, 2):
        H[i, j, i, j] = 6 * x[i, j]  # ∂²Σx³ / ∂x_ij²
    np.testing.assert_allclose(shown(run), H.ravel(), atol=5e-5)  # its display, to 4 places
    source = (CORPUS / "pytorch_autograd_functional_jacobian_docs.py").read_text(encoding="utf-8")
    run = run_program(source)
    x = drawn(run, "inputs")
    J = np.zeros((2, 2, 2))
    for i, j in np.ndindex(2, 2):
        J[i, i, j] = np.exp(x[i, j])  # row i of Σ_j exp(x_ij) depends on row i of x only
    np.testing.assert_allclose(shown(run), J.ravel(), atol=5e-5)


def adder(x: Any, y: Any) -> Any:
    return 2 * x + 3 * y


def pow_reducer(x: Any) -> Any:
    return x.pow(3).sum()


# file -> what torch.autograd.functional answers on the inputs gradtrace drew (and v)
TORCH_DOCS: dict[str, Any] = {
    "vjp": lambda af, t, x: af.vjp(adder, x, t.ones(2)),
    "jvp": lambda af, t, x: af.jvp(adder, x, (t.ones(2), t.ones(2))),
    "hvp": lambda af, t, x: af.hvp(pow_reducer, x, t.ones(2, 2)),
    "vhp": lambda af, t, x: af.vhp(pow_reducer, x, t.ones(2, 2)),
    "jacobian_tuple": lambda af, t, x: af.jacobian(lambda a, b: 2 * a.exp() + 3 * b, x),
    "hessian_tuple": lambda af, t, x: af.hessian(
        lambda a, b: (2 * a.pow(2) + 3 * b.pow(2)).sum(), x
    ),
}


def flat_numbers(v: Any) -> list[float]:
    if isinstance(v, tuple | list):
        return [n for x in v for n in flat_numbers(x)]
    return [float(n) for n in v.detach().reshape(-1)]


@pytest.mark.parametrize("name", TORCH_DOCS)
def test_a_documented_autograd_functional_example_shows_torchs_answer(name: str) -> None:
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as af

    source = (CORPUS / f"pytorch_autograd_functional_{name}_docs.py").read_text(encoding="utf-8")
    run = run_program(source)
    drawn_inputs = run.interpreter.env["inputs"]
    if isinstance(drawn_inputs, tuple):
        x: Any = tuple(torch.tensor(drawn_value(v), dtype=torch.float64) for v in drawn_inputs)
    else:
        x = torch.tensor(drawn_value(drawn_inputs), dtype=torch.float64)
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        expected = flat_numbers(TORCH_DOCS[name](af, torch, x))
    finally:
        torch.set_default_dtype(before)
    np.testing.assert_allclose(shown(run), expected, atol=5e-5)  # shown to 4 places


def drawn_value(v: Any) -> np.ndarray:
    return np.asarray(v.data if isinstance(v, Value) else v.node.data)
