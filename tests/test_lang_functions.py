"""Functions in the language (spec/language.md, "Code as students already write it"): `def`
and `lambda` inlined at each call with their own names, positional and keyword arguments,
defaults, read-only globals, recursion refused at the call, the call depth limit, and the grad
transform `grad(f)(x)` (also spelt jax.grad, torch.func.grad) checked against PyTorch."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from engine import ProgramError, run, run_program
from engine.limits import Limits


def grads(source: str, values: dict[str, Any] | None = None) -> dict[str, Any]:
    return run(source, values).to_dict()["grads"]


def result(source: str, values: dict[str, Any] | None = None) -> float:
    d = run(source, values).to_dict()
    out = next(n for n in d["nodes"] if n["id"] == d["output"])
    return float(out["value"])


def refused(source: str, limits: Limits | None = None) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(source, limits=limits) if limits else run(source)
    return info.value


def test_a_def_is_inlined_at_each_call_with_its_own_names() -> None:
    src = "def f(a, b=2):\n    h = a * b\n    return h + 1\ny = f(x)\nz = f(y, b=3)"
    d = run(src, {"x": 2.0}).to_dict()
    labels = [n["label"] for n in d["nodes"]]
    assert "h" in labels and "h_2" in labels  # one h per call, numbered as rebindings are
    assert result(src, {"x": 2.0}) == (2 * 2 + 1) * 3 + 1
    assert d["grads"] == {"x": 6.0}


def test_keyword_arguments_and_defaults_bind_as_python_binds_them() -> None:
    src = "def f(a, b=10, c=100):\n    return a + b + c\ny = f(x, c=1) + f(b=2, a=x)"
    assert result(src, {"x": 1.0}) == (1 + 10 + 1) + (1 + 2 + 100)


def test_a_lambda_is_a_function_and_can_be_called_where_it_is_written() -> None:
    assert result("f = lambda t, k=3: t * k\ny = f(x) + (lambda s: s * s)(x)", {"x": 2.0}) == 10


def test_a_function_reads_the_programs_names_when_it_runs() -> None:
    # W is assigned after the def, before the call: as in Python
    src = "def f(x):\n    return W * x\nW = 3.0\ny = f(2.0)"
    assert grads(src) == {"W": 2.0}


def test_a_functions_number_argument_is_a_whole_number_where_one_is_needed() -> None:
    src = "def col(v, n):\n    return reshape(v, (n, 1))\nL = sum(col(x, 3) * 2)"
    assert grads(src, {"x": [1.0, 2.0, 3.0]}) == {"x": [2.0, 2.0, 2.0]}


def test_globals_are_read_only_inside_a_function() -> None:
    e = refused("w = 2.0\ndef f(x):\n    y = w * x\n    w = y\n    return w\nL = f(3.0)")
    assert (e.line, e.column, e.code) == (3, 9, "unbound")
    assert "'w' is used before it is assigned in f" in e.message


def test_a_functions_own_names_do_not_exist_outside_it() -> None:
    e = refused("def f(x):\n    h = x * 2\n    return h\ny = f(1.0)\nz = h + 1")
    assert (e.line, e.column, e.code) == (5, 5, "unbound")
    assert "'h' is a name inside a function" in e.message


@pytest.mark.parametrize(
    ("src", "line", "column", "words"),
    [
        ("def f(x):\n    return f(x)\ny = f(2.0)", 2, 12, "f calls itself; recursion is not"),
        (
            "def f(x):\n    return g(x)\ndef g(x):\n    return f(x)\ny = f(2.0)",
            4,
            12,
            "f calls g, which calls f again; recursion is not supported",
        ),
        ("f = lambda x: f(x)\ny = f(1.0)", 1, 15, "f calls itself"),
        (
            "def f(n, x):\n    if n > 0:\n        return f(n - 1, x)\n    return x\ny = f(3, 2.0)",
            3,
            16,
            "recursion is not supported",
        ),
    ],
)
def test_recursion_is_refused_at_the_call(src: str, line: int, column: int, words: str) -> None:
    e = refused(src)
    assert (e.line, e.column, e.code) == (line, column, "recursion")
    assert words in e.message and e.status == 400


def test_calls_nest_at_most_max_call_depth() -> None:
    chain = "".join(f"def f{i}(x):\n    return f{i + 1}(x) + 1\n" for i in range(6))
    src = chain + "def f6(x):\n    return x\ny = f0(1.0)"
    assert result(src) == 7.0
    e = refused(src, Limits(max_call_depth=4))
    assert e.limit == "max_call_depth" and e.status == 413 and "4" in e.message


@pytest.mark.parametrize(
    ("src", "line", "column", "words"),
    [
        ("def f(a, b):\n    return a\ny = f(1.0)", 3, 5, "f() is missing its argument 'b'"),
        ("def f(a):\n    return a\ny = f(1.0, 2.0)", 3, 5, "f() takes 1 argument but 2"),
        ("def f(a):\n    return a\ny = f(1.0, c=2)", 3, 5, "f() has no argument 'c'"),
        ("def f(a):\n    return a\ny = f(1.0, a=2)", 3, 5, "f() got two values for 'a'"),
        ("def f(a):\n    return a\ng = f", 3, 5, "the output is the function f"),
        ("def f(a):\n    return a\ny = f(x) + f", 3, 5, "'f' is a function"),
        ("def f(*a):\n    return 1\ny = f(1)", 1, 1, "must be plain names"),
        ("return 1", 1, 1, "return can only stand inside a def"),
        ("y = lambda: 1", 1, 5, None),  # a lambda bound to a name is fine, but gives no value
        ("z = 1\nlambda: 0", 2, 1, "the output is the function lambda"),
        ("def f(x):\n    pass\ny = f(1.0) + 1", 3, 5, "+ is not defined between None"),
        ("@d\ndef f(x):\n    return x", 1, 2, "decorators are not part of the language"),
    ],
)
def test_function_refusals_say_where_and_why(
    src: str, line: int, column: int, words: str | None
) -> None:
    e = refused(src)
    if words is None:
        assert e.code == "no_output"
        return
    assert (e.line, e.column) == (line, column), e.message
    assert words in e.message


def torch_grad(f: Any, x: float, order: int = 1) -> float:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = f(t)
    for _ in range(order):
        (y,) = torch.autograd.grad(y, t, create_graph=True)
    return float(y)


def test_the_grad_transform_matches_torch() -> None:
    src = "def f(t):\n    return tanh(t) * t\ny = grad(f)(x)"
    expected = torch_grad(lambda t: torch.tanh(t) * t, 0.7)
    assert result(src, {"x": 0.7}) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "src",
    [
        "import jax\nimport jax.numpy as jnp\ndef f(t):\n    return jnp.tanh(t) * t\n"
        "y = jax.grad(f)(x)\nprint(y)",
        "import torch\ndef f(t):\n    return torch.tanh(t) * t\ny = torch.func.grad(f)(x)\n"
        "print(y)",
    ],
    ids=["jax", "torch.func"],
)
def test_jax_and_torch_func_grad_are_passes_that_give_the_gradient(src: str) -> None:
    # jax.grad(f)(x) runs where it stands, a pass: its steps are f's backward, its result
    # f'(x) (printed), and x the leaf it differentiates at
    expected = torch_grad(lambda t: torch.tanh(t) * t, 0.7)
    ran = run_program(src, {"x": 0.7})
    d = ran.trace.to_dict()
    assert d["grads"]["x"] == pytest.approx(expected, rel=1e-12)
    shown = ran.printed[0]["text"].removeprefix("tensor(").rstrip(")")
    assert float(shown) == pytest.approx(expected, abs=1e-4)


def test_grad_of_grad_and_of_a_language_function() -> None:
    assert result("f = lambda t: t**3\ny = grad(grad(f))(x)", {"x": 2.0}) == 12.0
    expected = torch_grad(torch.tanh, 2.0)
    assert result("g = grad(tanh)\ny = g(2.0)") == pytest.approx(expected, rel=1e-12)
    # the result is a graph: it is differentiated again by the program's backward pass
    assert grads("f = lambda t: t**3\ny = grad(f)(x)", {"x": 2.0}) == {"x": 12.0}


def test_grad_transform_refusals() -> None:
    e = refused("f = lambda t: t * ones(3)\ny = grad(f)(2.0)")
    assert e.code == "shape" and "Gradient only defined for scalar-output" in e.message
    e = refused("y = grad(x * 2)(1.0)")
    assert (e.line, e.column) == (1, 10) and "grad(f) takes a function" in e.message
    e = refused("def f(t):\n    return t\ng = grad(f, argnums=1)")
    assert e.code == "keyword"
