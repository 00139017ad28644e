"""No new way in (issue 25): escape attempts through each new construct — the tape, a dict,
torch's and NumPy's seeded generators, micrograd's Value, tinygrad's Tensor, HIPS autograd's
elementwise_grad — are refused where they are written, and every limit holds (positioned 413s,
fast)."""

from __future__ import annotations

import time

import pytest

from engine import ProgramError, run_program


def refused(source: str) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run_program(source)
    return info.value


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        ("import tensorflow as tf\nwith tf.GradientTape() as __builtins__:\n    x = 1.0", 2, 1),
        ("import tensorflow as tf\nt = tf.GradientTape()\ny = t.__class__", 3, 5),
        ("import tensorflow as tf\nt = tf.GradientTape()\ny = t.__enter__()", 3, 5),
        ("import tensorflow as tf\ny = tf.Variable.__init__", 2, 5),
        ("from tinygrad import Tensor\ny = Tensor.__call__([1.0])", 2, 5),
        ("import torch\ng = torch.Generator()\ny = g.__dict__", 3, 5),
        ("import torch\ng = torch.Generator()\ny = g.seed_everything(1)", 3, 5),
        ("d = {'a': 1.0}\ny = d['__class__']", 2, 7),
        ("d = {'a': 1.0}\ny = d.keys()", 2, 5),
        ("from micrograd.engine import Value\na = Value(1.0)\na.__dict__ = 1\nb = a", 3, 1),
        ("from micrograd.engine import Value\na = Value(1.0)\ny = a._prev", 3, 5),
        ("import autograd.numpy as np\nfrom autograd import elementwise_grad\n"
         "g = elementwise_grad(lambda x: x)\ny = g.__globals__", 4, 5),
        ("import tensorflow as tf\ny = tf.GradientTape(persistent=__import__)", 2, 32),
    ],
)  # fmt: skip
def test_escapes_through_the_new_constructs_are_refused_where_written(
    source: str, line: int, column: int
) -> None:
    e = refused(source)
    assert e.status == 400 and (e.line, e.column) == (line, column), e.message


@pytest.mark.parametrize(
    ("source", "limit"),
    [
        ("import torch\ntorch.manual_seed(0)\nx = torch.randn(1000000)\ny = x",
         "max_tensor_elements"),
        ("import numpy as np\nnp.random.seed(0)\nx = np.random.normal(0, 1, (1000, 1000))\ny = x",
         "max_tensor_elements"),
        ("import torch\ng = torch.Generator().manual_seed(1)\nx = torch.rand(5000, 5000, "
         "generator=g)\ny = x", "max_tensor_elements"),
        ("import tensorflow as tf\nx = tf.Variable(tf.linspace(-1.0, 1.0, 4000))\n"
         "with tf.GradientTape() as t:\n    y = tf.nn.sigmoid(x)\nj = t.jacobian(y, x)",
         "max_trace_numbers"),
        ("import tensorflow as tf\nx = tf.Variable(2.0)\n"
         "with tf.GradientTape(persistent=True) as t:\n    y = x * x\n"
         "for i in range(100000):\n    g = t.gradient(y, x)", None),
        ("d = {}\nfor i in range(100000):\n    d = {'a': d, 'b': i}\ny = 1.0", None),
    ],
)  # fmt: skip
def test_every_limit_holds_through_the_new_constructs(source: str, limit: str | None) -> None:
    start = time.perf_counter()
    e = refused(source)
    assert time.perf_counter() - start < 10
    assert e.line is not None and e.status == 413, e.message
    if limit is not None:
        assert e.limit == limit, e.message


def test_a_seed_beyond_what_the_library_takes_is_refused_at_it() -> None:
    e = refused("import numpy as np\nnp.random.seed(10**30)\nx = 1.0")
    assert (e.line, e.column) == (2, 16), e.message
