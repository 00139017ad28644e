"""Published worked examples, typed as their sources publish them (tests/corpus/, one file each,
its header naming the source and the numbers it prints): each runs and gives those numbers,
and what it prints is what the source shows it printing (PRINTED). Where a source draws
random data, the file writes numbers out and the expected values are PyTorch's for them,
computed here; where it keeps the random draw, what it prints holds whatever was drawn, and
the test checks that relation (RELATIONS). A PyTorch program without random draws or notebook
displays is also run by real torch (float64), and gradtrace's run must be torch's: the same
lines printed after the same passes, the same grads (AS_TORCH). Examples that need a
construct the language leaves out are expected to fail, each with what it needs (NEEDS;
strict: flipped when it lands); one that runs but that gradtrace gets wrong is an interpreter
bug (BUGS, strict too)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import run_program
from engine.errors import ProgramError

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


def logits_loss(t: Any, w: Any, b: Any) -> Any:
    z = t.matmul(t.ones(5, dtype=t.float64), w) + b
    return t.nn.functional.binary_cross_entropy_with_logits(z, t.zeros(3, dtype=t.float64))


def logistic(t: Any, w: Any) -> Any:
    """The cookbook's loss at its W, b = 0.5 (sigmoid written with tanh, as there)."""
    inputs = t.tensor(
        [[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30], [0.74, -2.49, 1.39]],
        dtype=t.float64,
    )
    targets = t.tensor([1.0, 1.0, 0.0, 1.0], dtype=t.float64)
    preds = 0.5 * (t.tanh((inputs @ w + 0.5) / 2) + 1)
    return -t.sum(t.log(preds * targets + (1 - preds) * (1 - targets)))


def logistic_w_grad() -> tuple[Any, dict[str, Any]]:
    """W_grad = grad(loss)(W, b) is a pass: its output the loss, PyTorch's grad of it by W."""
    loss, (w_grad,) = torch_numbers(logistic, [0.1, -0.2, 0.3])
    return loss, {"W": w_grad}


def staged_backward() -> tuple[float, dict[str, Any]]:
    """The hand-written backward pass's last line, dy, is PyTorch's df/dy."""
    _, (_, dy) = torch_numbers(staged, 3.0, -4.0)
    return float(dy), {}


def sin_steps() -> tuple[float, dict[str, Any]]:
    """out = sum(2 sin(a) + 1) over 25 steps of [0, 2π]; its grad is 2 cos(a)."""
    a = np.linspace(0.0, 2.0 * np.pi, 25)
    return float((2 * np.sin(a) + 1).sum()), {"a": 2 * np.cos(a)}


# (inp + 1)² transposed, seeded with ones: 2(inp + 1), 4 on the diagonal and 2 elsewhere.
JACOBIAN_AFTER_ZEROING = 2 * (np.eye(4, 5) + 1)
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
    "pytorch_basics_autograd": lambda: torch_numbers(logits_loss, [[0.1] * 3] * 5, [0.0] * 3),
    "pytorch_tensor_stack_cat": (38.75, {"x": [[5.0, -10.0, 20.0], [15.0, 0.0, -5.0]]}),
    "d2l_autograd_dot": (None, {"x": [0.0, 4.0, 8.0, 12.0]}),
    "d2l_autograd_dot_short": (28.0, {"x": [0.0, 4.0, 8.0, 12.0]}),
    "d2l_autograd_sum": (6.0, {"x": [1.0, 1.0, 1.0, 1.0]}),
    "d2l_autograd_nonscalar": (None, {"x": [0.0, 2.0, 4.0, 6.0]}),
    "d2l_autograd_detach": (36.0, {"x": [0.0, 1.0, 4.0, 9.0]}),
    "d2l_autograd_detach_sum": (36.0, {"x": [0.0, 1.0, 4.0, 9.0]}),
    # jax.grad(f)(x) is a pass: its output f(x), the grad of its leaf f'(x) (and printed)
    "jax_cookbook_grad_tanh": (0.96402758, {"x": 0.070650816}),
    "jax_cookbook_logistic": logistic_w_grad,
    "micrograd_readme": (24.7041, {"a": 138.8338, "b": 645.5773}),
    "micrograd_readme_plain": (24.7041, {"a": 138.8338, "b": 645.5773}),
    "karpathy_zero_to_hero_neuron": (0.7071, NEURON),
    "karpathy_zero_to_hero_neuron_steps": (0.7071, NEURON),
    "karpathy_zero_to_hero_tanh_exp": (0.7071, NEURON),
    "karpathy_makemore_cross_entropy": lambda: torch_numbers(cross_entropy, LOGITS),
    "karpathy_makemore_f_cross_entropy": lambda: torch_numbers(cross_entropy, LOGITS),
    "karpathy_makemore_logprobs": lambda: torch_numbers(cross_entropy, LOGITS),
    "numpy_linear_regression_mse": lambda: torch_numbers(mse, [0.3, -0.1]),
    "pytorch_gentle_autograd": ([-12.0, 65.0], {"a": [36.0, 81.0], "b": [-12.0, -8.0]}),
    "pytorch_gentle_autograd_backward": ([-12.0, 65.0], {"a": [36.0, 81.0], "b": [-12.0, -8.0]}),
    "pytorch_blitz_while_norm": (None, {}),  # random x, and the loop's count: RELATIONS
    "pytorch_autograd_fundamentals": sin_steps,
    "pytorch_polynomial_numpy": None,  # random start, 2,000 steps
    "pytorch_polynomial_autograd": None,
    "d2l_autograd_control_flow": (None, {}),  # random a: RELATIONS
    # a = random.normal(random.PRNGKey(1), ()) is JAX's -0.15443718: b doubles to -1265.1494
    # (×8192), c = 100·b, so d = -126514.94 and its grad 819200 (the grad's own leaf, a_2)
    "d2l_autograd_control_flow_jax": (-126514.94, {"a_2": 819200.0}),
    "d2l_autograd_jax_dot": (28.0, {"x": [0.0, 4.0, 8.0, 12.0]}),
    "d2l_autograd_jax_sum": (6.0, {"x": [1.0, 1.0, 1.0, 1.0]}),
    "d2l_autograd_jax_nonscalar": (14.0, {"x": [0.0, 2.0, 4.0, 6.0]}),
    "d2l_autograd_jax_detach": (36.0, {"x": [0.0, 1.0, 4.0, 9.0]}),  # u = x * x, compared
    # the last pass differentiates tanh'' (its output, -0.1362…) to the third derivative
    "jax_cookbook_higher_tanh": (-0.13621868, {"x": -0.13621868, "x_2": 0.25265405}),
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
    # Multi-pass examples and training loops (issue 20); AS_TORCH checks most of them.
    "pytorch_autograd_fundamentals_simple_example": None,
    "pytorch_autograd_fundamentals_simple_prints": sin_steps,
    "pytorch_autograd_fundamentals_training": None,  # random weights and data
    "pytorch_autograd_fundamentals_requires_grad_off": (np.full((2, 3), 2.0), {}),
    "pytorch_autograd_fundamentals_no_grad": (None, {}),
    "pytorch_autograd_fundamentals_no_grad_decorator": None,
    "pytorch_autograd_fundamentals_detach": (None, {"x": [0.0] * 5}),  # random x: RELATIONS
    "pytorch_autograd_fundamentals_in_place": (None, {}),  # PyTorch's error: REFUSED
    "pytorch_basics_jacobian_products": (None, {"inp": JACOBIAN_AFTER_ZEROING}),
    "pytorch_basics_disabling_tracking": (None, {}),  # random w, b; prints True/False/False
    "pytorch_autograd_mechanics_saved_self": None,
    "pytorch_autograd_mechanics_saved_result": None,
    "pytorch_autograd_mechanics_threads": None,
    "pytorch_autograd_mechanics_train_fn": (None, {"x": np.full((5, 5), 4.5)}),
    "d2l_mlp_activations": None,
    "d2l_linear_regression_scratch": None,
    "d2l_linear_regression_scratch_data": (None, {}),
    "d2l_linear_regression_scratch_classes": None,
    "microgpt_lesson_training_loop": None,
    "microgpt_lesson_training_loop_plain": None,
    # Issue 25's transforms: their printed numbers are JAX's, checked by running jax on the
    # same file (tests/test_corpus_transforms.py); the torch ones' relations there too.
    **{
        name: (None, {})
        for name in (
            "jax_cookbook_starting_with_grad",
            "jax_cookbook_logistic_random",
            "jax_cookbook_value_and_grad",
            "jax_cookbook_jacfwd_jacrev",
            "jax_cookbook_jvp",
            "jax_cookbook_vjp",
            "jax_cookbook_hvp",
            "jax_vmap_batched_grad",
            "pytorch_autograd_functional_hessian_docs",
            "pytorch_autograd_functional_jacobian_docs",
            "jax_quickstart_grad",
            "jax_quickstart_hessian",
            "jax_jit_decorated_grad",
            "jax_cookbook_hvp_grad_of_grad",
            # torch.func's doc examples: random x, checked by their own asserts
            "pytorch_func_grad_docs",
            "pytorch_func_jacrev_docs",
            "pytorch_func_jacfwd_docs",
            "pytorch_func_hessian_docs",
            "pytorch_func_jvp_docs",
            "pytorch_func_vjp_docs",
            # torch.autograd.functional's, compared with torch on the inputs drawn
            "pytorch_autograd_functional_vjp_docs",
            "pytorch_autograd_functional_jvp_docs",
            "pytorch_autograd_functional_hvp_docs",
            "pytorch_autograd_functional_vhp_docs",
            "pytorch_autograd_functional_jacobian_tuple_docs",
            "pytorch_autograd_functional_hessian_tuple_docs",
        )
    },  # fmt: skip
    "jax_autodiff_higher_order": (None, {}),
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
    "d2l_autograd_detach": ["tensor([True, True, True, True])"],
    "d2l_autograd_control_flow": ["tensor(True)"],
    # JAX prints Array([ True,  True,  True,  True], dtype=bool); gradtrace prints a JAX
    # program's values as NumPy does.
    "d2l_autograd_jax_detach": ["[ True  True  True  True]"],
    "pytorch_gentle_autograd": ["tensor([True, True])", "tensor([True, True])"],
    "jax_cookbook_grad_tanh": ["0.070650816"],
    "karpathy_zero_to_hero_neuron": [
        "0.7071066904050358",
        "---",
        "x2 0.5000001283844369",
        "w2 0.0",
        "x1 -1.5000003851533106",
        "w1 1.0000002567688737",
    ],
    "jax_cookbook_higher_tanh": ["-0.13621868", "0.25265405"],
    "karpathy_micrograd_lecture_abc": ["4.0"],
    "karpathy_micrograd_lecture_nudge": ["d1 4.0", "d2 4.0001", "slope 0.9999999999976694"],
    "pytorch_basics_disabling_tracking": ["True", "False", "False"],
    "jax_autodiff_higher_order": ["4.0", "10.0", "6.0", "0.0"],
    "d2l_autograd_control_flow_jax": ["True"],
    "pytorch_basics_jacobian_products": [
        "First call\ntensor([[4., 2., 2., 2., 2.],\n        [2., 4., 2., 2., 2.],\n"
        "        [2., 2., 4., 2., 2.],\n        [2., 2., 2., 4., 2.]])",
        "\nSecond call\ntensor([[8., 4., 4., 4., 4.],\n        [4., 8., 4., 4., 4.],\n"
        "        [4., 4., 8., 4., 4.],\n        [4., 4., 4., 8., 4.]])",
        "\nCall after zeroing gradients\ntensor([[4., 2., 2., 2., 2.],\n"
        "        [2., 4., 2., 2., 2.],\n        [2., 2., 4., 2., 2.],\n"
        "        [2., 2., 2., 4., 2.]])",
    ],
}
# How close a printed number must be to the one shown: JAX prints float32 (7 digits); the
# lecture's torch.Tensor([6.8813735870195432]) is float32 before .double() (b = 6.8813734),
# while gradtrace is float64 throughout, so its numbers differ from the lecture's at 1e-7.
PRINT_TOLERANCE = {"karpathy_zero_to_hero_neuron": 1e-6}


def node_value(d: dict[str, Any], label: str) -> Any:
    [node] = [n for n in d["nodes"] if n["label"] == label and n["kind"] == "leaf"]
    return np.asarray(node["value"])


def doubled_until_large(d: dict[str, Any]) -> None:
    """y = x * 2^k for the first k at which ‖y‖ ≥ 1000, and x.grad = [0.1, 1.0, 0.0001] * 2^k
    (the seed v times dy/dx), whatever x was drawn."""
    x, y = node_value(d, "x"), np.asarray(d["value"])
    factor = float(y[0] / x[0])
    assert factor == 2.0 ** round(np.log2(factor)) and factor >= 2.0
    np.testing.assert_allclose(y, x * factor, rtol=1e-12)
    assert np.linalg.norm(y) >= 1000 > np.linalg.norm(y / 2)
    np.testing.assert_allclose(d["grads"]["x"], np.array([0.1, 1.0, 0.0001]) * factor)


def grad_is_d_over_a(d: dict[str, Any]) -> None:
    """d is linear in a, so a.grad = d / a (what the source's last line checks)."""
    a = float(node_value(d, "a"))
    assert d["grads"]["a"] == pytest.approx(float(d["value"]) / a, rel=1e-12)
    assert abs(float(d["value"])) >= 1000  # the while loop ran until ‖b‖ ≥ 1000


def detached_is_x_without_grad(d: dict[str, Any], printed: list[str]) -> None:
    """print(y) of y = x.detach() shows x's numbers, and no requires_grad."""
    x, y = printed
    assert x.endswith(", requires_grad=True)") and y == x.replace(", requires_grad=True", "")
    np.testing.assert_allclose(node_value(d, "x"), [float(v) for v in NUMBER.findall(y)],
                               atol=5e-5)  # fmt: skip


# What a printed, random result must satisfy (the source's own check, or its loop's): a
# function of the trace, or of the trace and the printed lines.
RELATIONS: dict[str, Callable[..., None]] = {
    "pytorch_blitz_while_norm": doubled_until_large,
    "d2l_autograd_control_flow": grad_is_d_over_a,
    "pytorch_autograd_fundamentals_detach": detached_is_x_without_grad,
}
# PyTorch programs that torch runs here as well (float64, no random draws, no notebook
# displays): gradtrace's run must be torch's (tests/test_differential_torch.py), these the
# leaves whose grads are compared pass by pass.
AS_TORCH = {
    "pytorch_autograd_fundamentals_simple_prints": ("a",),
    "pytorch_autograd_fundamentals_no_grad": (),
    "pytorch_basics_jacobian_products": ("inp",),
    "pytorch_autograd_mechanics_train_fn": (),
    "d2l_linear_regression_scratch_data": ("w", "b"),
    "pytorch_autograd_fundamentals_requires_grad_off": ("a",),
}
# Examples whose point is PyTorch's error: gradtrace refuses them with an error of that
# meaning (its message key).
REFUSED = {"pytorch_autograd_fundamentals_in_place": "leaf_in_place"}
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
    "pytorch_basics_autograd": ["w", "b"],
    "karpathy_makemore_f_cross_entropy": ["logits"],
    "karpathy_makemore_logprobs": ["logits"],
    "numpy_linear_regression_mse": ["W"],
}
# What keeps an example from running as published.
NEEDS = {
    "pytorch_polynomial_numpy": "2,000 steps of 2,000-element arrays: past max_total_elements "
    "(50,000)",
    "pytorch_polynomial_autograd": "torch.accelerator and set_default_device (a device)",
    "cs231n_case_study_linear": "matplotlib; strings as values (dtype='uint8'); assigning to "
    "an index (X[ix] = …); np.c_; and the data are random",
    "micrograd_test_sanity_check": "the test is a def that nothing calls (and compares with "
    "torch inside it)",
    "micrograd_test_more_ops": "the test is a def that nothing calls (and compares with torch "
    "inside it)",
    "karpathy_micrograd_lecture_value": "class (the lecture's own Value), set(), attribute "
    "assignment (e.label = 'e')",
    "karpathy_micrograd_lecture_mlp": "import random; class (Neuron, Layer, MLP and Value); "
    "random.uniform",
    "pytorch_autograd_fundamentals_simple_example": "matplotlib (its imports and plt.plot); "
    "grad_fn.next_functions",
    "pytorch_autograd_fundamentals_training": "class (TinyModel, a torch.nn.Module); "
    "torch.nn.Linear and torch.nn.ReLU; model.parameters()",
    "pytorch_autograd_fundamentals_no_grad_decorator": "the decorator @torch.no_grad() (only "
    "decorators that are functions apply)",
    "pytorch_autograd_mechanics_saved_self": "grad_fn._saved_self; x.equal(…); `is`",
    "pytorch_autograd_mechanics_saved_result": "grad_fn._saved_result; y.equal(…); `is`",
    "pytorch_autograd_mechanics_threads": "import threading; threading.Thread",
    "d2l_mlp_activations": "the d2l package (from d2l import torch as d2l; d2l.plot)",
    "d2l_linear_regression_scratch": "the d2l package; import random; yield (a generator)",
    "d2l_linear_regression_scratch_classes": "the d2l package (d2l.Module, d2l.Trainer, "
    "d2l.SyntheticRegressionData); class; decorators (@d2l.add_to_class)",
    "microgpt_lesson_training_loop": "the course's own Value class, used without an import "
    "(micrograd's is `from micrograd.engine import Value`)",
    "microgpt_lesson_training_loop_plain": "p.grad = 0 on a number leaf of a program without "
    "torch (refused with PyTorch's 'assigned grad expected to be a Tensor or None')",
}
# Examples that run but that gradtrace gets wrong: interpreter bugs (the lead's to fix).
BUGS: dict[str, str] = {}


def case(name: str) -> Any:
    reason = NEEDS.get(name) or BUGS.get(name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(name, marks=marks, id=name)


def test_every_corpus_file_has_an_expectation_and_a_header() -> None:
    files = {p.stem for p in CORPUS.glob("*.py")}
    assert files == set(EXPECTED)
    assert len(files) >= 73
    tables = (NEEDS, PRINTED, NODES, TOLERANCE, RELATIONS, AS_TORCH, REFUSED, BUGS)
    assert set().union(*tables) <= files
    assert not set(NEEDS) & set(BUGS)
    # how many run as their sources expect (the rest say why not)
    assert len(files) - len(NEEDS) - len(BUGS) >= 75
    for p in CORPUS.glob("*.py"):
        lines = p.read_text(encoding="utf-8").splitlines()
        head = lines[: next(i for i, line in enumerate(lines) if not line.startswith("#"))]
        assert head[0].startswith("# source: "), p.name
        for field in ("# url: http", "# section: ", "# prints: "):
            assert any(line.startswith(field) for line in head), (p.name, field)


NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def same_print(got: str, shown: str, tolerance: float = 1e-7) -> bool:
    """Is `got` what the source shows, its numbers to the digits shown (JAX prints float32)?"""
    if got == shown:
        return True
    if NUMBER.sub("#", got) != NUMBER.sub("#", shown):
        return False
    pairs = zip(NUMBER.findall(got), NUMBER.findall(shown), strict=True)
    return all(abs(float(a) - float(b)) <= tolerance * max(1.0, abs(float(b))) for a, b in pairs)


@pytest.mark.parametrize("name", [case(n) for n in sorted(EXPECTED)])
def test_a_published_example_gives_its_numbers(name: str) -> None:
    source = (CORPUS / f"{name}.py").read_text(encoding="utf-8")
    if name in REFUSED:
        with pytest.raises(ProgramError) as refused:
            run_program(source)
        assert refused.value.msg is not None and refused.value.msg.key == REFUSED[name]
        return
    if name in AS_TORCH:
        pytest.importorskip("torch")
        from tests.test_differential_torch import assert_runs_as_torch

        assert_runs_as_torch(source, AS_TORCH[name])
    ran = run_program(source)
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
        tolerance = PRINT_TOLERANCE.get(name, 1e-7)
        for got, shown in zip(texts, PRINTED[name], strict=True):
            assert same_print(got, shown, tolerance), (got, shown)
    if name in RELATIONS:
        relation = RELATIONS[name]
        if relation.__code__.co_argcount == 2:
            relation(d, [line["text"] for line in ran.printed])
        else:
            relation(d)
