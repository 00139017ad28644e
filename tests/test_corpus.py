"""Published worked examples, typed as their sources publish them (tests/corpus/, one file each,
its header naming the source and the numbers it prints): each runs and gives those numbers,
and what it prints is what the source shows it printing (PRINTED). Where a source draws
random data, the file writes numbers out and the expected values are PyTorch's for them,
computed here. Examples that need a construct the language leaves out, or one not built yet,
are expected to fail, each with what it needs (NEEDS; strict: flipped when it lands)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import run_program

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


def staged_backward() -> tuple[float, dict[str, Any]]:
    """The hand-written backward pass's last line, dy, is PyTorch's df/dy."""
    _, (_, dy) = torch_numbers(staged, 3.0, -4.0)
    return float(dy), {}


def sin_steps() -> tuple[float, dict[str, Any]]:
    """out = sum(2 sin(a) + 1) over 25 steps of [0, 2π]; its grad is 2 cos(a)."""
    a = np.linspace(0.0, 2.0 * np.pi, 25)
    return float((2 * np.sin(a) + 1).sum()), {"a": 2 * np.cos(a)}


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
    "pytorch_gentle_autograd": (None, {"a": [36.0, 81.0], "b": [-12.0, -8.0]}),
    "pytorch_gentle_autograd_backward": ([-12.0, 65.0], {"a": [36.0, 81.0], "b": [-12.0, -8.0]}),
    "pytorch_blitz_while_norm": None,  # random x, and the loop's count with it
    "pytorch_autograd_fundamentals": sin_steps,
    "pytorch_polynomial_numpy": None,  # random start, 2,000 steps
    "pytorch_polynomial_autograd": None,
    "d2l_autograd_control_flow": None,  # random a; the check is a comparison
    "d2l_autograd_control_flow_jax": None,
    "d2l_autograd_jax_dot": ([0.0, 4.0, 8.0, 12.0], {}),
    "d2l_autograd_jax_sum": ([1.0, 1.0, 1.0, 1.0], {}),
    "d2l_autograd_jax_nonscalar": ([0.0, 2.0, 4.0, 6.0], {}),
    "d2l_autograd_jax_detach": None,  # its output is a comparison
    "jax_cookbook_higher_tanh": (None, {}),  # PRINTED holds its numbers
    "cs231n_simple_expression_backward": (-4.0, {}),
    "cs231n_staged_backward": staged_backward,
    "cs231n_case_study_linear": None,  # random data and weights
    "micrograd_test_sanity_check": (-20.0, {"x": 46.0}),
    "micrograd_test_more_ops": (24.7041, {"a": 138.8338, "b": 645.5773}),
    "karpathy_micrograd_lecture_f": (20.0, {}),
    "karpathy_micrograd_lecture_slope": (2.999378523327323e-06, {}),
    "karpathy_micrograd_lecture_abc": (4.0, {"a": -3.0, "b": 2.0, "c": 1.0}),
    "karpathy_micrograd_lecture_nudge": (4.0001, {}),
    "karpathy_micrograd_lecture_value": (-8.0, {"a": 6.0, "b": -4.0, "c": -2.0, "f": 4.0}),
    "karpathy_micrograd_lecture_mlp": None,  # random weights
    "baydin_survey_example": (11.652, {"x1": 5.5, "x2": 1.716}),
    "baydin_survey_evaluation_trace": (11.652, {"x1": 5.5, "x2": 1.716}),
}
# What a program prints, as its source shows it (numbers compared to the digits shown).
PRINTED = {
    "pytorch_blitz_autograd": [
        "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)",
        "tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)",
        "tensor([[27., 27.],\n        [27., 27.]], grad_fn=<MulBackward0>) "
        "tensor(27., grad_fn=<MeanBackward0>)",
        "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])",
    ],
    "d2l_autograd_nonscalar": ["tensor([0., 2., 4., 6.])"],
    "jax_cookbook_higher_tanh": ["-0.13621868", "0.25265405"],
    "karpathy_micrograd_lecture_abc": ["4.0"],
    "karpathy_micrograd_lecture_nudge": ["d1 4.0", "d2 4.0001", "slope 0.9999999999976694"],
}
# Values of named nodes the source gives along the way (the hand-written backward passes).
NODES: dict[str, Any] = {
    "cs231n_simple_expression_backward": {"q": 3.0, "f": -12.0, "dfdx": -4.0},
    "cs231n_staged_backward": lambda: {"dx_3": torch_numbers(staged, 3.0, -4.0)[1][0]},
}
# Numbers the source prints to fewer digits than 4 decimals, or to all of them.
TOLERANCE = {
    "baydin_survey_example": 1e-3,
    "baydin_survey_evaluation_trace": 1e-3,
    "karpathy_micrograd_lecture_slope": 1e-12,
    "karpathy_micrograd_lecture_nudge": 1e-12,
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
    "pytorch_gentle_autograd": "print(9*a**2 == a.grad): a comparison as a value",
    "pytorch_blitz_while_norm": "the norm method (y.data.norm()); and x is random",
    "pytorch_autograd_fundamentals": "linspace's steps= keyword, and a bound written 2. * math.pi "
    "(linspace reads only number literals there)",
    "pytorch_polynomial_numpy": "linspace's bound -math.pi; np.square; the % operator; "
    "f-strings; 2,000 steps of 2,000-element tensors are past max_nodes",
    "pytorch_polynomial_autograd": "torch.accelerator and set_default_device; f-strings; the % "
    "operator; with torch.no_grad(); a.grad = … (assigning a grad); past max_nodes",
    "d2l_autograd_control_flow": "the norm method (b.norm()); randn's size= keyword; "
    "a.grad == d / a, a comparison as the output",
    "d2l_autograd_control_flow_jax": "jnp.linalg.norm; jax.random (PRNGKey, normal); "
    "d_grad == d / a, a comparison as the output",
    "d2l_autograd_jax_detach": "jax.lax.stop_gradient; a comparison as the output",
    "jax_cookbook_higher_tanh": "a program of prints only: its last statement computes nothing "
    "to trace",
    "cs231n_case_study_linear": "matplotlib; strings as values (dtype='uint8'); assigning to "
    "an index (X[ix] = …); np.c_; and the data are random",
    "micrograd_test_sanity_check": "micrograd's Value class (an import of micrograd.engine); "
    "assert; torch.Tensor(…).double() and x.requires_grad = True",
    "micrograd_test_more_ops": "micrograd's Value class (an import of micrograd.engine); "
    "assert; torch.Tensor(…).double() and a.requires_grad = True",
    "karpathy_micrograd_lecture_value": "class (the lecture's own Value), f-strings, set(), "
    "attribute assignment (e.label = 'e')",
    "karpathy_micrograd_lecture_mlp": "import random; class (Neuron, Layer, MLP and Value); "
    "random.uniform; p.data += … (assigning to an attribute)",
}


def case(name: str) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=NEEDS[name])] if name in NEEDS else []
    return pytest.param(name, marks=marks, id=name)


def test_every_corpus_file_has_an_expectation_and_a_header() -> None:
    files = {p.stem for p in CORPUS.glob("*.py")}
    assert files == set(EXPECTED)
    assert len(files) >= 45
    assert set(NEEDS) | set(PRINTED) | set(NODES) | set(TOLERANCE) <= files
    assert len(files) - len(NEEDS) >= 30  # how many run unchanged (the rest say why not)
    for p in CORPUS.glob("*.py"):
        lines = p.read_text(encoding="utf-8").splitlines()
        head = lines[: next(i for i, line in enumerate(lines) if not line.startswith("#"))]
        assert head[0].startswith("# source: "), p.name
        for field in ("# url: http", "# section: ", "# prints: "):
            assert any(line.startswith(field) for line in head), (p.name, field)


NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def same_print(got: str, shown: str) -> bool:
    """Is `got` what the source shows, its numbers to the digits shown (JAX prints float32)?"""
    if got == shown:
        return True
    if NUMBER.sub("#", got) != NUMBER.sub("#", shown):
        return False
    pairs = zip(NUMBER.findall(got), NUMBER.findall(shown), strict=True)
    return all(abs(float(a) - float(b)) <= 1e-7 * max(1.0, abs(float(b))) for a, b in pairs)


@pytest.mark.parametrize("name", [case(n) for n in sorted(EXPECTED)])
def test_a_published_example_gives_its_numbers(name: str) -> None:
    ran = run_program((CORPUS / f"{name}.py").read_text(encoding="utf-8"))
    d = ran.trace.to_dict()
    expected = EXPECTED[name]
    assert expected is not None, "no numbers to check"
    if callable(expected):
        value, grads = expected()
        if name in LEAVES:
            grads = dict(zip(LEAVES[name], grads, strict=True))
        expected = (value, grads)
    value, grads = expected
    published = 1e-4 if not callable(EXPECTED[name]) else 1e-9  # printed to 4 digits
    published = TOLERANCE.get(name, published)
    if value is not None:
        np.testing.assert_allclose(
            np.asarray(d["value"]), np.asarray(value), rtol=published, atol=published * 1e-3
        )
    for leaf, grad in grads.items():
        np.testing.assert_allclose(
            np.asarray(d["grads"][leaf]), np.asarray(grad), rtol=published, atol=published
        )
    nodes = NODES.get(name, {})
    for label, want in (nodes() if callable(nodes) else nodes).items():
        [node] = [n for n in d["nodes"] if n["label"] == label]
        assert node["value"] == pytest.approx(float(want), rel=published), label
    if name in PRINTED:
        texts = [line["text"] for line in ran.printed]
        assert len(texts) == len(PRINTED[name]), texts
        for got, shown in zip(texts, PRINTED[name], strict=True):
            assert same_print(got, shown), (got, shown)
