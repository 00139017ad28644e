"""Published worked examples, typed as their sources publish them (tests/corpus/, one file each,
its header naming the source and the numbers it prints): each runs and gives those numbers.
Where a source draws random data, the file writes numbers out and the expected values are
PyTorch's for them, computed here. Examples that need a construct the language leaves out,
or one not built yet, are expected to fail (strict: the lead flips them when it lands)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import run

CORPUS = Path(__file__).parent / "corpus"


def torch_numbers(f: Callable[..., Any], *values: Any) -> tuple[float, list[Any]]:
    torch = pytest.importorskip("torch")
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = f(torch, *leaves)
    out.backward()
    return float(out), [x.grad.numpy() for x in leaves]


def staged(t: Any, x: Any, y: Any) -> Any:
    sig = t.sigmoid
    return (x + sig(y)) / (sig(x) + (x + y) ** 2)


LOGITS = [[0.2, -1.0, 0.5, 0.1], [1.5, 0.3, -0.2, 0.0], [-0.5, 0.8, 0.9, -1.2]]


def cross_entropy(t: Any, z: Any) -> Any:
    return t.nn.functional.cross_entropy(z, t.tensor([2, 0, 3]))


def softmax_loss(t: Any, w: Any, b: Any) -> Any:
    x = t.tensor([[1.0, 2.0], [-1.0, 0.5], [0.3, -0.7]], dtype=t.float64)
    p = t.softmax(x @ w + b, 1)
    return -t.log(p[range(3), [0, 2, 1]]).mean() + 0.5e-3 * (w * w).sum()


def mse(t: Any, w: Any) -> Any:
    x = t.tensor([[1.0, 2.0], [2.0, 0.5], [-1.0, 1.5]], dtype=t.float64)
    return ((x @ w - t.tensor([1.0, 0.0, 2.0], dtype=t.float64)) ** 2).mean()


W_CS231N = [[0.1, -0.2, 0.3], [0.05, 0.4, -0.1]]
NEURON = {"x1": -1.5, "w1": 1.0, "x2": 0.5, "w2": 0.0, "b": 0.5}
# file -> (the output's value, {leaf: grad}); a callable gives them from PyTorch.
EXPECTED: dict[str, Any] = {
    "cs231n_simple_expression": (-12.0, {"x": -4.0, "y": -4.0, "z": 3.0}),
    "cs231n_sigmoid_neuron": (0.7311, {"w": [-0.1966, -0.3932, 0.1966], "x": [0.3932, -0.5898]}),
    "cs231n_staged_computation": lambda: torch_numbers(staged, 3.0, -4.0),
    "cs231n_max_gate": (-20.0, {"x": -8.0, "y": 6.0, "z": 2.0, "w": 0.0}),
    "cs231n_softmax_loss": lambda: torch_numbers(softmax_loss, W_CS231N, [[0.0, 0.1, -0.1]]),
    "colah_computational_graph": (6.0, {"a": 2.0, "b": 5.0}),
    "pytorch_blitz_autograd": (27.0, {"x": [[4.5, 4.5], [4.5, 4.5]]}),
    "pytorch_blitz_no_print": (27.0, {"x": [[4.5, 4.5], [4.5, 4.5]]}),
    "pytorch_basics_autograd": None,
    "pytorch_tensor_stack_cat": (38.75, {"x": [[5.0, -10.0, 20.0], [15.0, 0.0, -5.0]]}),
    "d2l_autograd_dot": (None, {"x": [0.0, 4.0, 8.0, 12.0]}),
    "d2l_autograd_dot_short": (28.0, {"x": [0.0, 4.0, 8.0, 12.0]}),
    "d2l_autograd_sum": (6.0, {"x": [1.0, 1.0, 1.0, 1.0]}),
    "d2l_autograd_nonscalar": (None, {"x": [0.0, 2.0, 4.0, 6.0]}),
    "d2l_autograd_detach": (None, {"x": [0.0, 1.0, 4.0, 9.0]}),
    "d2l_autograd_detach_sum": (36.0, {"x": [0.0, 1.0, 4.0, 9.0]}),
    "jax_cookbook_grad_tanh": (0.070650816, {}),
    "jax_cookbook_logistic": None,
    "micrograd_readme": (24.7041, {"a": 138.8338, "b": 645.5773}),
    "micrograd_readme_plain": (24.7041, {"a": 138.8338, "b": 645.5773}),
    "karpathy_zero_to_hero_neuron": (0.7071, NEURON),
    "karpathy_zero_to_hero_neuron_steps": (0.7071, NEURON),
    "karpathy_zero_to_hero_tanh_exp": (0.7071, NEURON),
    "karpathy_makemore_cross_entropy": lambda: torch_numbers(cross_entropy, LOGITS),
    "karpathy_makemore_f_cross_entropy": lambda: torch_numbers(cross_entropy, LOGITS),
    "karpathy_makemore_logprobs": lambda: torch_numbers(cross_entropy, LOGITS),
    "numpy_linear_regression_mse": lambda: torch_numbers(mse, [0.3, -0.1]),
}
# The grads a callable's leaves are, in order.
LEAVES = {
    "cs231n_staged_computation": ["x", "y"],
    "cs231n_softmax_loss": ["W", "b"],
    "karpathy_makemore_cross_entropy": ["logits"],
    "karpathy_makemore_f_cross_entropy": ["logits"],
    "karpathy_makemore_logprobs": ["logits"],
    "numpy_linear_regression_mse": ["W"],
}
# What keeps an example from running as published.
NEEDS = {
    "pytorch_basics_autograd": "binary_cross_entropy_with_logits is not in the language",
    "jax_cookbook_grad_tanh": "grad of a module function, printed (H8: jax.grad(f), print)",
    "jax_cookbook_logistic": "jnp.array of True/False targets (booleans are not numbers); def",
    "micrograd_readme": "micrograd's Value class is not an allowed import; f-strings",
    "karpathy_zero_to_hero_neuron": "torch.Tensor(…).double() and x.requires_grad = True",
    "karpathy_makemore_cross_entropy": "logits.max(1, keepdim=True).values (a max reduction)",
    "d2l_autograd_dot": "bare x / x.grad lines before the end (H8: shown values)",
    "d2l_autograd_detach": "x.grad == u, a comparison as the output",
    "d2l_autograd_nonscalar": "y.backward(gradient=…) (H8)",
}


def case(name: str) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=NEEDS[name])] if name in NEEDS else []
    return pytest.param(name, marks=marks, id=name)


def test_every_corpus_file_has_an_expectation_and_a_header() -> None:
    files = {p.stem for p in CORPUS.glob("*.py")}
    assert files == set(EXPECTED)
    assert len(files) >= 25
    for p in CORPUS.glob("*.py"):
        lines = p.read_text(encoding="utf-8").splitlines()
        head = lines[: next(i for i, line in enumerate(lines) if not line.startswith("#"))]
        assert head[0].startswith("# source: "), p.name
        for field in ("# url: http", "# section: ", "# prints: "):
            assert any(line.startswith(field) for line in head), (p.name, field)


@pytest.mark.parametrize("name", [case(n) for n in sorted(EXPECTED)])
def test_a_published_example_gives_its_numbers(name: str) -> None:
    d = run((CORPUS / f"{name}.py").read_text(encoding="utf-8")).to_dict()
    expected = EXPECTED[name]
    assert expected is not None, "no numbers to check"
    if callable(expected):
        value, grads = expected()
        expected = (value, dict(zip(LEAVES[name], grads, strict=True)))
    value, grads = expected
    published = 1e-4 if not callable(EXPECTED[name]) else 1e-9  # printed to 4 digits
    if value is not None:
        assert d["value"] == pytest.approx(value, rel=published, abs=published)
    for leaf, grad in grads.items():
        np.testing.assert_allclose(
            np.asarray(d["grads"][leaf]), np.asarray(grad), rtol=published, atol=published
        )
