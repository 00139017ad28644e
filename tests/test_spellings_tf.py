"""TensorFlow's spelling (issue 25, item 2): tf.Variable, tf.constant, `with tf.GradientTape()
as tape:` (persistent, watch, watch_accessed_variables), tape.gradient of one source, a list or
a dict, tape.jacobian, nested tapes, tf.math.*, tf.reduce_sum/reduce_mean, tf.matmul, tf.nn.*.

Each gradient is checked against torch 2.13 (float64) computing the same function with
torch.autograd; what a program prints against TensorFlow's format (`tf.Tensor(6.0, shape=(),
dtype=float32)`, with gradtrace's float64 numbers). Refusals are positioned. TensorFlow itself
runs the corpus's tape examples and these functions in tests/test_tensorflow_oracle.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import ProgramError, run_program
from tests.strategies import bounded

torch = pytest.importorskip("torch")


def ran(source: str) -> tuple[dict[str, Any], list[str]]:
    r = run_program(source)
    return r.interpreter.env, [p["text"] for p in r.printed]


def data(v: Any) -> np.ndarray:
    return np.asarray(getattr(v, "data", v), dtype=np.float64)


def t64(v: Any, grad: bool = True) -> Any:
    return torch.tensor(v, dtype=torch.float64, requires_grad=grad)


# Each: the TensorFlow spelling of f(x, w), torch's; x of shape (2, 3), w of shape (3, 2).
FUNCTIONS = {
    "matmul_mean": ("tf.reduce_mean(tf.matmul(x, w) ** 2)", lambda x, w: ((x @ w) ** 2).mean()),
    "math": ("tf.reduce_sum(tf.math.exp(x) * tf.math.sin(x)) + tf.reduce_sum(tf.math.square(w))",
             lambda x, w: (x.exp() * x.sin()).sum() + (w**2).sum()),
    "nn": ("tf.reduce_sum(tf.nn.relu(x) + tf.nn.sigmoid(x)) + tf.reduce_sum(tf.nn.softmax(w))",
           lambda x, w: (x.relu() + x.sigmoid()).sum() + w.softmax(-1).sum()),
    "axis": ("tf.reduce_sum(tf.reduce_mean(x, axis=1) * tf.reduce_sum(w, axis=0))",
             lambda x, w: (x.mean(1) * w.sum(0)).sum()),
    "ops": ("tf.reduce_sum(tf.multiply(tf.add(x, 1.0), tf.subtract(x, 0.5)) / tf.divide(2.0, 3.0))"
            " + tf.reduce_sum(tf.math.tanh(w) + tf.math.log(w * w + 1))",
            lambda x, w: ((x + 1) * (x - 0.5) / (2.0 / 3.0)).sum()
            + (w.tanh() + (w * w + 1).log()).sum()),
    "transpose": ("tf.reduce_sum(tf.transpose(x) * w) + tf.reduce_max(x)",
                  lambda x, w: (x.T * w).sum() + x.max()),
}  # fmt: skip
XS = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
WS = [[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]]


def torch_grads(f: Any, x: Any, w: Any) -> tuple[float, list[np.ndarray]]:
    tx, tw = t64(x), t64(w)
    y = f(tx, tw)
    gx, gw = torch.autograd.grad(y, [tx, tw])
    return float(y), [gx.numpy(), gw.numpy()]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_tape_gradients_of_a_list_equal_torchs(name: str) -> None:
    tf_expr, f = FUNCTIONS[name]
    env, _ = ran(
        f"import tensorflow as tf\nx = tf.Variable({XS})\nw = tf.Variable({WS})\n"
        f"with tf.GradientTape() as tape:\n    y = {tf_expr}\n"
        "dx, dw = tape.gradient(y, [x, w])"
    )
    value, (gx, gw) = torch_grads(f, XS, WS)
    assert float(data(env["y"])) == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(data(env["dx"]), gx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(data(env["dw"]), gw, rtol=1e-12, atol=1e-12)


@bounded(25)
@given(
    st.lists(st.floats(-2, 2), min_size=3, max_size=3),
    st.sampled_from(sorted(FUNCTIONS)),
    st.booleans(),
)
def test_one_program_in_three_spellings_gives_one_answer(
    xs: list[float], name: str, watched: bool
) -> None:
    """TensorFlow's tape (a Variable or a watched constant) and the PyTorch spelling run here
    agree with torch."""
    x = [xs, [v / 2 for v in xs]]
    tf_expr, f = FUNCTIONS[name]
    made = f"x = tf.constant({x})" if watched else f"x = tf.Variable({x})"
    watch = "    tape.watch(x)\n" if watched else ""
    env, _ = ran(
        f"import tensorflow as tf\n{made}\nw = tf.constant({WS})\n"
        f"with tf.GradientTape() as tape:\n{watch}    y = {tf_expr}\ndx = tape.gradient(y, x)"
    )
    _, (gx, _) = torch_grads(f, x, WS)
    np.testing.assert_allclose(data(env["dx"]), gx, rtol=1e-9, atol=1e-12)
    r = run_program(
        f"import torch\nx = torch.tensor({x}, requires_grad=True)\nw = torch.tensor({WS})\n"
        "L = ((x @ w) ** 2).mean()\nL.backward()"
    )
    tx = t64(x)
    ((tx @ t64(WS, False)) ** 2).mean().backward()
    np.testing.assert_allclose(r.trace.to_dict()["grads"]["x"], tx.grad.numpy(), rtol=1e-12)


def test_a_persistent_tape_gives_several_gradients_and_a_plain_one_refuses_the_second() -> None:
    env, _ = ran(
        "import tensorflow as tf\nx = tf.Variable(2.0)\n"
        "with tf.GradientTape(persistent=True) as tape:\n    y = x * x\n    z = tf.math.exp(y)\n"
        "a = tape.gradient(y, x)\nb = tape.gradient(z, x)"
    )
    tx = t64(2.0)
    y = tx * tx
    (ga,) = torch.autograd.grad(y, tx, retain_graph=True)
    (gb,) = torch.autograd.grad(y.exp(), tx)
    assert float(data(env["a"])) == pytest.approx(float(ga))
    assert float(data(env["b"])) == pytest.approx(float(gb), rel=1e-12)
    with pytest.raises(ProgramError) as info:
        run_program(
            "import tensorflow as tf\nx = tf.Variable(2.0)\nwith tf.GradientTape() as t:\n"
            "    y = x * x\na = t.gradient(y, x)\nb = t.gradient(y, x)"
        )
    e = info.value
    assert (e.line, e.column, e.msg.key if e.msg else None) == (6, 5, "tape_used")


def test_nested_tapes_give_torchs_second_derivative() -> None:
    env, printed = ran(
        "import tensorflow as tf\nx = tf.Variable(0.7)\nwith tf.GradientTape() as t2:\n"
        "    with tf.GradientTape() as t1:\n        y = tf.math.sin(x) * x * x\n"
        "    dy = t1.gradient(y, x)\nd2y = t2.gradient(dy, x)\nprint(d2y)"
    )
    tx = t64(0.7)
    (g,) = torch.autograd.grad(tx.sin() * tx * tx, tx, create_graph=True)
    (g2,) = torch.autograd.grad(g, tx)
    assert float(data(env["dy"])) == pytest.approx(float(g), rel=1e-12)
    assert float(data(env["d2y"])) == pytest.approx(float(g2), rel=1e-12)
    assert printed == [f"tf.Tensor({float(data(env['d2y']))}, shape=(), dtype=float32)"]


def test_jacobian_equals_torchs() -> None:
    env, printed = ran(
        "import tensorflow as tf\nx = tf.Variable([0.5, -1.0, 2.0])\n"
        "with tf.GradientTape() as tape:\n    y = tf.nn.sigmoid(x) * x[0]\n"
        "j = tape.jacobian(y, x)\nprint(j.shape)"
    )
    want = torch.autograd.functional.jacobian(lambda x: x.sigmoid() * x[0], t64([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(data(env["j"]), want.numpy(), rtol=1e-12)
    assert printed == ["(3, 3)"]


def test_a_vector_target_gives_the_gradient_of_its_sum() -> None:
    env, _ = ran(
        "import tensorflow as tf\nx = tf.Variable([1.0, 2.0])\n"
        "with tf.GradientTape() as tape:\n    y = x * x * [3.0, 4.0]\ng = tape.gradient(y, x)"
    )
    tx = t64([1.0, 2.0])
    (tx * tx * t64([3.0, 4.0], False)).sum().backward()
    np.testing.assert_allclose(data(env["g"]), tx.grad.numpy())


@pytest.mark.parametrize(
    ("source", "printed"),
    [
        ("x = tf.constant(6.0)\nprint(x)", "tf.Tensor(6.0, shape=(), dtype=float32)"),
        ("x = tf.constant([1.0, 2.0])\nprint(x)", "tf.Tensor([1. 2.], shape=(2,), dtype=float32)"),
        ("x = tf.constant([[1.0, 2.0], [3.0, 4.0]])\nprint(x)",
         "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"),
        ("x = tf.constant([1, 2, 3])\nprint(x)", "tf.Tensor([1 2 3], shape=(3,), dtype=int32)"),
        ("x = tf.Variable(3.0)\nprint(x)",
         "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=3.0>"),
        ("x = tf.Variable([1.0, 2.0])\nprint(x)",
         "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([1., 2.], "
         "dtype=float32)>"),
        ("x = tf.Variable([1.0, 2.0])\nprint(x.shape)", "(2,)"),
        ("x = tf.constant(2.0)\nprint(x.numpy())", "2.0"),
    ],
)  # fmt: skip
def test_prints_as_tensorflow_prints(source: str, printed: str) -> None:
    _, shown = ran("import tensorflow as tf\n" + source + "\ny = tf.constant(1.0)")
    assert shown == [printed]


@pytest.mark.parametrize(
    ("body", "line", "column", "key"),
    [
        ("x = tf.Variable(2.0)\ny = x * x\nwith tf.GradientTape() as t:\n    z = y * x\n"
         "g = t.gradient(z, x)", 6, 5, "tape_outside"),
        ("x = tf.Variable(2.0)\nwith tf.GradientTape() as (a, b):\n    z = x * x", 3, 27,
         "with_only"),
        ("x = tf.Variable(2.0)\nwith tf.GradientTape() as t:\n    z = x * x\n"
         "g = t.gradient(z, {'x': x})\nh = g['y']", 6, 7, "dict_key"),
        ("with tf.GradientTape() as t:\n    t.watch([1.0])\n", 3, 5, "not_a_tensor"),
    ],
)  # fmt: skip
def test_refusals_are_positioned(body: str, line: int, column: int, key: str) -> None:
    with pytest.raises(ProgramError) as info:
        run_program("import tensorflow as tf\n" + body + "\ny = tf.constant(1.0)")
    e = info.value
    assert (e.line, e.column) == (line, column), e.message
    assert e.msg is not None and e.msg.key == key, e.message
