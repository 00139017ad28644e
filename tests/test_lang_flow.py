"""Control flow (spec/language.md, "Code as students already write it"): `x += e`, if/elif/else
and while decided on the values as eager PyTorch decides them (the graph records the path
taken), loops over lists, zip, enumerate and a tensor's rows, comprehensions, Python's sum of a
list, break/continue, names bound to ints used as ints, unpacking, and the leaf rule for a
name bound to constants only. A generated property holds branching programs equal to PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import ProgramError, run


def trace(source: str, values: dict[str, Any] | None = None) -> dict[str, Any]:
    return run(source, values).to_dict()


def out_value(d: dict[str, Any]) -> Any:
    return next(n for n in d["nodes"] if n["id"] == d["output"])["value"]


def refused(source: str, values: dict[str, Any] | None = None) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(source, values)
    return info.value


@pytest.mark.parametrize(
    ("op", "expected"), [("+=", 5.0), ("-=", -1.0), ("*=", 6.0), ("/=", 2 / 3)]
)
def test_augmented_assignment_is_a_new_node(op: str, expected: float) -> None:
    d = trace(f"x = 2.0\ny = x\ny {op} 3", {})
    assert out_value(d) == pytest.approx(expected)
    assert [n["label"] for n in d["nodes"]] == ["x", "3", "y"]  # x, the constant, y = x op 3


def test_if_decides_on_the_values_and_the_graph_holds_only_the_path_taken() -> None:
    src = "if x > 0:\n    y = x * x\nelif x == 0:\n    y = x + 1\nelse:\n    y = -x\nL = y * 2"
    for x, value, grad in [(3.0, 18.0, 12.0), (0.0, 2.0, 2.0), (-2.0, 4.0, -2.0)]:
        d = trace(src, {"x": x})
        assert out_value(d) == value and d["grads"] == {"x": grad}
    made = [n.get("op") for n in trace(src, {"x": 3.0})["nodes"]]
    assert "add" not in made and "neg" not in made and made.count("mul") == 2


def test_while_runs_until_its_condition_is_false() -> None:
    d = trace("y = x\nwhile y < 100:\n    y = y * 2", {"x": 3.0})
    assert out_value(d) == 192.0 and d["grads"] == {"x": 64.0}


def test_conditions_chain_and_join_as_python_does() -> None:
    src = "if 0 < x <= 1 and not (x == 0.5 or x > 0.9):\n    y = x * 10\nelse:\n    y = x"
    assert out_value(trace(src, {"x": 0.3})) == 3.0
    assert out_value(trace(src, {"x": 0.5})) == 0.5
    assert out_value(trace(src, {"x": 2.0})) == 2.0
    assert out_value(trace("y = x * 2 if x > 1 else x * 3", {"x": 1.0})) == 3.0


def test_a_condition_on_a_tensor_of_several_values_is_an_error() -> None:
    e = refused("x = [1.0, 2.0]\nif x > 0:\n    y = x")
    assert (e.line, e.column, e.code) == (2, 4, "shape")
    assert "Boolean value of Tensor with more than one value is ambiguous" in e.message
    assert "(2,)" in e.message


def test_comparisons_and_and_or_are_values_but_not_an_output() -> None:
    # Python's: a comparison is True/False (of tensors, elementwise); `x and 2` is 2 here. Either
    # as the last statement gives nothing to differentiate, and the message says what it is.
    e = refused("y = x < 2")
    assert (e.line, e.column, e.code) == (1, 5, "no_output") and "not a value" in e.message
    assert run("y = x and 2").to_dict()["value"] == 2.0  # a number last: a constant output
    assert run("y = x * 2\nbig = y > 1 and y < 3\nL = y * 2 if big else y").to_dict()["value"] == 4


def test_loops_over_lists_zip_and_enumerate() -> None:
    src = "ws = [w1, w2, w3]\nL = 0 * w1\nfor i, w in enumerate(ws):\n    L = L + w * i"
    assert trace(src)["grads"] == {"w1": 0.0, "w2": 1.0, "w3": 2.0}
    src = "xs = [1.0, 2.0]\nws = [a, b]\nL = sum(w * x for w, x in zip(ws, xs))"
    d = trace(src)
    assert d["grads"] == {"a": 1.0, "b": 2.0}
    adds = [n for n in d["nodes"] if n.get("op") == "add"]
    assert len(adds) == 1  # a + b: a chain of additions, no leading 0


def test_a_tensor_is_looped_over_by_its_rows() -> None:
    src = "L = 0 * X[0, 0]\nfor row in X:\n    L = L + sum(row) * 2"
    d = trace(src, {"X": [[1.0, 2.0], [3.0, 4.0]]})
    assert out_value(d) == 20.0 and d["grads"] == {"X": [[2.0, 2.0], [2.0, 2.0]]}
    # a list written out and looped over is a list of constants (Python's), not a tensor
    d = trace("X = [[1.0, 2.0], [3.0, 4.0]]\nL = w * 0\nfor row in X:\n    L = L + sum(row) * w")
    assert d["grads"] == {"w": 10.0}


def test_comprehensions_with_conditions_and_nested_loops() -> None:
    src = "ys = [v * v for v in [a, b, c] if v > 0]\nL = sum(ys)"
    assert trace(src, {"a": 2.0, "b": -1.0, "c": 3.0})["grads"] == {"a": 4.0, "b": 0.0, "c": 6.0}
    src = "L = sum([x * i * j for i in range(1, 3) for j in range(2)])"
    assert out_value(trace(src, {"x": 1.0})) == 0 + 1 + 0 + 2


def test_break_continue_and_pass() -> None:
    src = (
        "y = x\nfor i in range(10):\n    if i == 1:\n        continue\n    if i > 3:\n"
        "        break\n    y = y + i\n    pass"
    )
    assert out_value(trace(src, {"x": 0.0})) == 0 + 2 + 3
    e = refused("break")
    assert (e.line, e.column) == (1, 1) and "inside a loop" in e.message


def test_names_bound_to_ints_are_used_wherever_an_int_is() -> None:
    src = (
        "n = 3\nm = n // 2 + 1\nW = zeros(n, m)\nfor i in range(n):\n    W = W + i\n"
        "L = sum(W[n - 1])"
    )
    d = trace(src)
    assert out_value(d) == 3.0 * 2 and "n" not in d["grads"]  # n is a number, not a parameter
    d = trace("scores = [1.0, 5.0, 2.0]\ny = 1\nL = scores[y] * 2")
    assert d["grads"] == {"scores": [0.0, 2.0, 0.0]}
    e = refused("x = 2.5\nz = zeros(x)")
    assert (e.line, e.column) == (2, 11) and e.code == "static"


def test_unpacking() -> None:
    d = trace("a, b = 1.0, 2.0\nL = a * b")
    assert d["grads"] == {"a": 2.0, "b": 1.0}  # each a leaf, as a = 1.0 would make
    d = trace("def f(x):\n    return x * 2, x * 3\np, q = f(v)\nL = p + q", {"v": 1.0})
    assert out_value(d) == 5.0
    e = refused("a, b = [1.0, 2.0, 3.0]\nL = a")
    assert "cannot be unpacked into 2 names" in e.message


def test_a_name_bound_to_constants_only_is_a_leaf_without_torch() -> None:
    d = trace("W = 0.01 * randn(2, 3)\nx = [1.0, 2.0, 3.0]\nL = sum(W @ x)")
    assert d["grads"]["W"] == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    assert [n["label"] for n in d["nodes"]][0] == "W"  # one leaf, not 0.01 * randn(...)
    expected = 0.01 * np.random.default_rng(0).standard_normal((2, 3))
    assert np.allclose([n for n in d["nodes"] if n["label"] == "W"][0]["value"], expected)
    # with torch imported, a tensor without requires_grad stays a constant (as in PyTorch)
    d = trace(
        "import torch\nW = 0.01 * torch.randn(2, 3)\nx = torch.ones(3, requires_grad=True)\n"
        "L = (W @ x).sum()"
    )
    assert "W" not in d["grads"]


# --- a generated property: branching programs agree with PyTorch -----------------------------

BODIES = ["y = y * x", "y = y + x * x", "y = tanh(y) + x", "y = y * 0.5 - x"]


@st.composite
def branching(draw: Any) -> tuple[str, float]:
    lines = ["y = x"]
    for _ in range(draw(st.integers(1, 3))):
        c = draw(st.sampled_from(["x > 0", "y < 1", "x * y >= 0.5", "not y > 2"]))
        a, b = draw(st.sampled_from(BODIES)), draw(st.sampled_from(BODIES))
        lines += [f"if {c}:", f"    {a}", "else:", f"    {b}"]
    lines += ["k = 0", "while y < 3 and k < 4:", "    y = y + x * x + 0.5", "    k = k + 1"]
    return "\n".join(lines), draw(st.floats(-2, 2).filter(lambda v: abs(v) > 1e-3))


def torch_run(src: str, x: float) -> tuple[float, float]:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    env: dict[str, Any] = {"x": t, "tanh": torch.tanh}
    exec(src, {}, env)  # the reference: PyTorch running the same text  # noqa: S102
    env["y"].backward()
    return float(env["y"]), float(t.grad)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(branching())
def test_branching_programs_agree_with_torch(case: tuple[str, float]) -> None:
    src, x = case
    value, grad = torch_run(src, x)
    d = trace(src + "\nL = y", {"x": x})
    assert out_value(d) == pytest.approx(value, rel=1e-9, abs=1e-12)
    assert d["grads"]["x"] == pytest.approx(grad, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    ("source", "where", "words"),
    [
        ("def f(x):\n    yield x\ny = f(2)", (2, 5), "yield is not part of the language"),
        ("def f(x):\n    await x\ny = f(2)", (2, 5), "await is not part of the language"),
        ("async def f():\n    pass\ny = 1", (1, 1), "async def is not part of the language"),
        ("ys = [x async for x in y]", (1, 6), "async for is not part of the language"),
        (
            "a = [1.0, 2.0]\nb = [1.0, 2.0, 3.0]\nif a == b:\n    c = 1\nL = a",
            (3, 4),
            "cannot compare values of shapes (2,) and (3,)",
        ),
    ],
)
def test_what_is_refused_is_named_as_itself(
    source: str, where: tuple[int, int], words: str
) -> None:
    """The refusal names the construct written, not what it happens to look like (a bare
    expression, a def), and shapes that cannot be compared before a condition's truth."""
    e = refused(source)
    assert (e.line, e.column) == where and words in e.message, e.message
    assert e.msg is not None and e.in_language("zh") != e.message  # keyed, worded in 中文
