"""HIPS autograd, micrograd and tinygrad spelled as their users write them (issue 25, item 3).
Each program is run as it is by the real library (HIPS autograd 1.x, micrograd 0.1.0, both
installed for tests) beside gradtrace: the same numbers printed (micrograd's lines identical;
HIPS autograd's to 1e-12, as its own order of operations rounds differently in the last
digit), the same grads. tinygrad is not installed: its Tensor is checked against torch, whose
meaning it shares. Refusals are positioned."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import ProgramError, run_program
from tests.strategies import bounded

NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")


def python_prints(source: str) -> list[str]:
    """What the real library prints running `source` (our own test programs, not input)."""
    shown: list[str] = []

    def show(*args: Any, sep: str = " ", **_: Any) -> None:
        shown.append(sep.join(map(str, args)))

    exec(compile(source, "<program>", "exec"), {"print": show})  # noqa: S102 - our programs
    return shown


def ours(source: str) -> list[str]:
    return [p["text"] for p in run_program(source).printed]


def same_numbers(got: list[str], want: list[str], rtol: float = 1e-12) -> None:
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want, strict=True):
        # the same text around the numbers (NumPy pads for a -0.0 where the other has 0.0)
        assert " ".join(NUMBER.sub("#", g).split()) == " ".join(NUMBER.sub("#", w).split())
        np.testing.assert_allclose(
            [float(v) for v in NUMBER.findall(g)], [float(v) for v in NUMBER.findall(w)],
            rtol=rtol, atol=1e-14,
        )  # fmt: skip


# --- HIPS autograd --------------------------------------------------------------------------
pytest.importorskip("autograd")

HIPS = {
    "readme_tanh": "import autograd.numpy as np\nfrom autograd import grad\n"
    "def tanh(x):\n    y = np.exp(-2.0 * x)\n    return (1.0 - y) / (1.0 + y)\n"
    "grad_tanh = grad(tanh)\nprint(grad_tanh(1.0))\n"
    "print((tanh(1.0001) - tanh(0.9999)) / 0.0002)",
    "higher": "import autograd.numpy as np\nfrom autograd import grad\n"
    "def f(x):\n    return np.sin(x) * x ** 3\nprint(grad(grad(f))(0.7))\n"
    "print(grad(grad(grad(f)))(0.7))",
    "elementwise": "import autograd.numpy as np\nfrom autograd import elementwise_grad as egrad\n"
    "def tanh(x):\n    y = np.exp(-2.0 * x)\n    return (1.0 - y) / (1.0 + y)\n"
    "x = np.linspace(-7, 7, 9)\nprint(egrad(tanh)(x))\nprint(egrad(egrad(tanh))(x))",
    "vector": "import autograd.numpy as np\nfrom autograd import grad\n"
    "def loss(w):\n    x = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]])\n"
    "    return np.mean((np.dot(x, w) - 1.0) ** 2) + np.sum(np.tanh(w))\n"
    "print(grad(loss)(np.array([0.3, -0.2])))",
    "logistic": "import autograd.numpy as np\nfrom autograd import grad\n"
    "def sigmoid(x):\n    return 0.5 * (np.tanh(x / 2.) + 1)\n"
    "def logistic_predictions(weights, inputs):\n    return sigmoid(np.dot(inputs, weights))\n"
    "inputs = np.array([[0.52, 1.12,  0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30],\n"
    "                   [0.74, -2.49, 1.39]])\ntargets = np.array([True, True, False, True])\n"
    "def training_loss(weights):\n    preds = logistic_predictions(weights, inputs)\n"
    "    label_probabilities = preds * targets + (1 - preds) * (1 - targets)\n"
    "    return -np.sum(np.log(label_probabilities))\n"
    "training_gradient_fun = grad(training_loss)\nweights = np.array([0.0, 0.0, 0.0])\n"
    "print('Initial loss:', training_loss(weights))\nfor i in range(100):\n"
    "    weights -= training_gradient_fun(weights) * 0.01\n"
    "print('Trained loss:', training_loss(weights))",
}


@pytest.mark.parametrize("name", sorted(HIPS))
def test_hips_autograd_programs_print_what_autograd_prints(name: str) -> None:
    same_numbers(ours(HIPS[name]), python_prints(HIPS[name]), rtol=1e-9)


@bounded(25)
@given(st.floats(-3, 3), st.sampled_from(["np.tanh(x) * x", "np.exp(-x * x)", "np.sin(x) ** 2",
                                          "x ** 3 / (1.0 + x * x)"]))  # fmt: skip
def test_hips_grad_of_drawn_functions_equals_autograd(x: float, body: str) -> None:
    source = (
        "import autograd.numpy as np\nfrom autograd import grad\n"
        f"def f(x):\n    return {body}\nprint(grad(f)({x!r}))\nprint(grad(grad(f))({x!r}))"
    )
    same_numbers(ours(source), python_prints(source), rtol=1e-9)


# --- micrograd ------------------------------------------------------------------------------
pytest.importorskip("micrograd")

MICROGRAD = {
    "readme": "from micrograd.engine import Value\n\na = Value(-4.0)\nb = Value(2.0)\n"
    "c = a + b\nd = a * b + b**3\nc += c + 1\nc += 1 + c + (-a)\nd += d * 2 + (b + a).relu()\n"
    "d += 3 * d + (b - a).relu()\ne = c - d\nf = e**2\ng = f / 2.0\ng += 10.0 / f\n"
    "print(f'{g.data:.4f}')\ng.backward()\nprint(f'{a.grad:.4f}')\nprint(f'{b.grad:.4f}')",
    "repr": "from micrograd.engine import Value\nx = Value(3.0)\ny = x * x + x.relu()\nprint(x)\n"
    "y.backward()\nprint(x)\nprint(y.data, x.grad)",
    "sgd": "from micrograd.engine import Value\nw = Value(0.5)\nfor step in range(5):\n"
    "    loss = (w * 3.0 - 2.0) ** 2\n    w.grad = 0\n    loss.backward()\n"
    "    w.data -= 0.05 * w.grad\n    print(step, loss.data, w.data)",
}


@pytest.mark.parametrize("name", sorted(MICROGRAD))
def test_micrograd_programs_print_what_micrograd_prints(name: str) -> None:
    assert ours(MICROGRAD[name]) == python_prints(MICROGRAD[name])


def test_micrograd_lecture_tanh_and_exp_equal_torch() -> None:
    torch = pytest.importorskip("torch")
    r = run_program(
        "from micrograd.engine import Value\nx1 = Value(2.0, label='x1')\n"
        "w1 = Value(-3.0, label='w1')\nb = Value(6.8813735870195432, label='b')\n"
        "n = x1*w1 + b; n.label = 'n'\no = n.tanh() + n.exp() * 0.001; o.label = 'o'\n"
        "o.backward()"
    )
    grads = r.trace.to_dict()["grads"]
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in (("x1", 2.0), ("w1", -3.0), ("b", 6.8813735870195432))}  # fmt: skip
    n = t["x1"] * t["w1"] + t["b"]
    (n.tanh() + n.exp() * 0.001).backward()
    for k, v in t.items():
        assert grads[k] == pytest.approx(float(v.grad), rel=1e-12)
    assert {n["label"] for n in r.trace.to_dict()["nodes"]} >= {"n", "o", "x1"}


# --- tinygrad -------------------------------------------------------------------------------
def test_tinygrads_readme_example_equals_torch() -> None:
    torch = pytest.importorskip("torch")
    printed = ours(
        "from tinygrad import Tensor\n\nx = Tensor.eye(3, requires_grad=True)\n"
        "y = Tensor([[2.0,0,-2.0]], requires_grad=True)\nz = y.matmul(x).sum()\nz.backward()\n\n"
        "print(x.grad.tolist())  # dz/dx\nprint(y.grad.tolist())  # dz/dy"
    )
    x = torch.eye(3, dtype=torch.float64, requires_grad=True)
    y = torch.tensor([[2.0, 0, -2.0]], dtype=torch.float64, requires_grad=True)
    y.matmul(x).sum().backward()
    assert printed == [str(x.grad.tolist()), str(y.grad.tolist())]


@pytest.mark.parametrize(
    ("source", "line", "column", "key"),
    [
        ("from micrograd.engine import Value\na = Value([1.0, 2.0])\nb = a", 2, 5,
         "micrograd_number"),
        ("from tinygrad.tensor import Tensor\nx = Tensor.fft(3)\ny = x", 2, 5, "module_lacks"),
        ("import autograd.numpy as np\nfrom autograd import elementwise_grad\n"
         "g = elementwise_grad(3.0)\ny = 1.0", 3, 5, "grad_needs_function"),
    ],
)  # fmt: skip
def test_refusals_are_positioned(source: str, line: int, column: int, key: str) -> None:
    with pytest.raises(ProgramError) as info:
        run_program(source)
    e = info.value
    assert (e.line, e.column) == (line, column), e.message
    assert e.msg is not None and e.msg.key == key, e.message


# --- one program, every spelling ------------------------------------------------------------
# f(x) of one number, written with ops every spelling has: (tf, numpy-like, method) forms.
TERMS = {
    "x * x": ("x * x", "x * x", "x * x"),
    "tanh": ("tf.math.tanh(x)", "np.tanh(x)", "x.tanh()"),
    "exp": ("tf.math.exp(x * 0.5)", "np.exp(x * 0.5)", "(x * 0.5).exp()"),
    "relu": ("tf.nn.relu(x - 0.25)", "np.maximum(x - 0.25, 0.0)", "(x - 0.25).relu()"),
    "cube": ("x ** 3 / 4.0", "x ** 3 / 4.0", "x ** 3 / 4.0"),
}


@bounded(20)
@given(st.floats(-2, 2).filter(lambda v: abs(v - 0.25) > 1e-3),
       st.lists(st.sampled_from(sorted(TERMS)), min_size=1, max_size=3))  # fmt: skip
def test_one_program_in_every_spelling_gives_torchs_gradient(x: float, terms: list[str]) -> None:
    """TensorFlow's tape, HIPS autograd's grad, JAX's grad, micrograd's Value and PyTorch's
    backward, each written out by hypothesis for the same f, give torch's df/dx."""
    torch = pytest.importorskip("torch")
    tf_f, np_f, value_f = (" + ".join(TERMS[t][i] for t in terms) for i in range(3))
    programs = {
        "tensorflow": f"import tensorflow as tf\nx = tf.Variable({x!r})\n"
        f"with tf.GradientTape() as tape:\n    y = {tf_f}\ng = tape.gradient(y, x)\n"
        "print(float(g))",
        "autograd": f"import autograd.numpy as np\nfrom autograd import grad\n"
        f"def f(x):\n    return {np_f}\nprint(float(grad(f)({x!r})))",
        "jax": f"import jax\nimport jax.numpy as np\ndef f(x):\n    return {np_f}\n"
        f"print(float(jax.grad(f)({x!r})))",
        "micrograd": f"from micrograd.engine import Value\nx = Value({x!r})\ny = {value_f}\n"
        "y.backward()\nprint(x.grad)",
        "torch": f"import torch\nx = torch.tensor({x!r}, requires_grad=True)\ny = {value_f}\n"
        "y.backward()\nprint(x.grad.item())",
    }
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    env = {"x": t}
    y = eval(value_f, {}, env)  # noqa: S307 - our own expression, over a torch tensor
    y.backward()
    for name, source in programs.items():
        (shown,) = ours(source)
        assert float(shown) == pytest.approx(float(t.grad), rel=1e-12, abs=1e-15), name
