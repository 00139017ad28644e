"""More of the code students paste, run as typed (issue 14): linspace's steps= and bounds
written as constant expressions (`2. * math.pi`), constructors' size=, norm and square built
from existing ops, .data, .item(), stop_gradient, comparisons that are only shown, programs
that compute only inside their prints, .double()/.float() and `x.requires_grad = True`.
Each checked against PyTorch where PyTorch runs it; each refusal at its line and column; each
limit still named."""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import ProgramError, run_program

torch = pytest.importorskip("torch")


def ran(source: str, values: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[str]]:
    r = run_program(source, values)
    return r.trace.to_dict(), [line["text"] for line in r.printed]


def refused(source: str) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run_program(source)
    return info.value


def ops_of(d: dict[str, Any]) -> list[str]:
    return [n["op"] for n in d["nodes"] if n["kind"] == "op"]


# --- linspace(…, steps=n) and numbers written as constant expressions -------------------------


@pytest.mark.parametrize(
    "call",
    [
        "torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)",
        "torch.linspace(-math.pi, math.pi, 9, requires_grad=True)",
        "torch.linspace(start=0, end=torch.pi / 2, steps=5, requires_grad=True)",
        "torch.linspace(np.pi - 1, math.e ** 2, steps=7, requires_grad=True)",
    ],
)
def test_linspace_takes_steps_by_name_and_bounds_as_constant_expressions(call: str) -> None:
    source = f"import torch\nimport math\nimport numpy as np\na = {call}\nout = torch.sin(a).sum()"
    d, _ = ran(source)
    t = eval(call, {"torch": torch, "math": __import__("math"), "np": np})  # noqa: S307 - ours
    ref = torch.sin(t.double()).sum()
    ref.backward()
    assert d["value"] == pytest.approx(ref.item(), abs=1e-6)
    np.testing.assert_allclose(d["grads"]["a"], t.grad.numpy(), atol=1e-6)


def test_numpy_linspace_takes_num_and_module_constants_are_numbers_everywhere() -> None:
    d, _ = ran("import numpy as np\nx = np.linspace(-np.pi, np.pi, num=5)\nL = (x * x).sum()")
    np.testing.assert_allclose(d["grads"]["x"], 2 * np.linspace(-np.pi, np.pi, 5))
    d, _ = ran("import math\nimport torch\nL = torch.pi * x + math.e", {"x": 2.0})
    assert d["grads"] == {"x": pytest.approx(np.pi)}
    d, _ = ran("import torch\nimport math\nt = torch.tensor([0., math.pi / 2], requires_grad=True)"
               "\nL = t.sin().sum()")  # fmt: skip
    assert d["value"] == pytest.approx(1.0) and d["grads"]["t"] == pytest.approx([1.0, 0.0])
    d, _ = ran("import math\nx = [1.0, -5.0]\nL = clamp(x, min=-math.pi, max=2 * math.pi).sum()")
    assert d["value"] == pytest.approx(1.0 - np.pi)
    d, _ = ran("import math\nx = full((2,), 2 * math.pi)\nL = x.sum()")
    assert d["value"] == pytest.approx(4 * np.pi)


@pytest.mark.parametrize(
    ("source", "line", "column", "words"),
    [
        ("import torch\nimport math\nx = torch.zeros(2. * math.pi)", 3, 17,
         "a whole number is needed here, not a fraction: 2. * math.pi is 6.283185307179586"),
        ("import math\nx = zeros(math.pi)", 2, 11, "not a fraction: math.pi is 3.14159"),
        ("x = zeros(2.5)", 1, 11, "a whole number is needed here, not a fraction"),
        ("x = linspace(0, 1, 2.5)", 1, 20, "a whole number is needed here, not a fraction"),
        ("x = linspace(0, 1 / 0, 3)", 1, 17, "1 / 0 gives an infinite value"),
        ("x = linspace(0, 10. ** 400, 3)", 1, 17, "gives an infinite value"),
        ("x = linspace(0, math.pi, 3)", 1, 17, "'math' is not imported: add `import math`"),
        ("import torch\nx = torch.linspace(0, 1, 5, steps=5)", 2, 29, "steps is given twice"),
        ("import torch\nx = torch.linspace(0, steps=5)", 2, 5, "linspace takes start, end, steps"),
    ],
)  # fmt: skip
def test_a_constant_expression_in_the_wrong_place_is_named_with_its_value(
    source: str, line: int, column: int, words: str
) -> None:
    e = refused(source)
    assert (e.line, e.column) == (line, column), e.message
    assert words in e.message


def test_a_huge_linspace_is_refused_quickly_naming_its_limit() -> None:
    start = time.perf_counter()
    e = refused("import torch\nx = torch.linspace(0, 1, steps=10**9)")
    assert time.perf_counter() - start < 1.0
    assert e.status == 413 and e.limit == "max_tensor_elements" and (e.line, e.column) == (2, 5)
    assert "max_tensor_elements" in e.message
    e = refused("import torch\nx = torch.randn(size=(10**5, 10**5), requires_grad=True)")
    assert e.status == 413 and e.limit == "max_tensor_elements"


# --- size= ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "shape"),
    [
        ("torch.randn(size=(2, 3), requires_grad=True)", (2, 3)),
        ("torch.randn(size=(), requires_grad=True)", ()),
        ("torch.rand(size=(4,), requires_grad=True)", (4,)),
        ("torch.zeros(size=(2, 2), requires_grad=True)", (2, 2)),
        ("torch.ones(size=[3], requires_grad=True)", (3,)),
        ("torch.full(size=(2,), fill_value=0.5, requires_grad=True)", (2,)),
        ("torch.full((2,), fill_value=0.5, requires_grad=True)", (2,)),
    ],
)
def test_constructors_take_their_shape_as_size(call: str, shape: tuple[int, ...]) -> None:
    d, _ = ran(f"import torch\na = {call}\nL = (a * 2).sum()")
    assert np.shape(d["grads"]["a"]) == shape and np.all(np.asarray(d["grads"]["a"]) == 2.0)


def test_numpy_names_the_shape_shape_and_a_shape_is_given_once() -> None:
    d, _ = ran("import numpy as np\nW = np.zeros(shape=(2, 3))\nL = W.sum()")
    assert np.shape(d["grads"]["W"]) == (2, 3)
    e = refused("import torch\na = torch.randn(2, size=(2,))")
    assert (e.line, e.column) == (2, 20) and "size is given twice" in e.message


# --- norm, square, .data, .item(), stop_gradient -------------------------------------------------


@pytest.mark.parametrize(
    ("imports", "call", "reference"),
    [
        ("import torch", "x.norm()", lambda x: x.norm()),
        ("import torch", "torch.norm(x)", torch.norm),
        ("import torch", "torch.linalg.norm(x)", torch.linalg.norm),
        ("import numpy as np", "np.linalg.norm(x)", torch.linalg.norm),
        ("import jax.numpy as jnp", "jnp.linalg.norm(x)", torch.linalg.norm),
        ("import torch", "x.norm(dim=1).sum()", lambda x: x.norm(dim=1).sum()),
        ("import numpy as np", "np.linalg.norm(x, axis=0, keepdims=True).sum()",
         lambda x: x.norm(dim=0, keepdim=True).sum()),
    ],
)  # fmt: skip
def test_norm_is_the_two_norm_built_from_existing_ops(
    imports: str, call: str, reference: Any
) -> None:
    values = [[3.0, -4.0], [1.0, 2.0]]
    leaf = "torch.tensor(" + str(values) + ", requires_grad=True)" if "torch" in imports else values
    d, _ = ran(f"{imports}\nx = {leaf}\nL = {call}")
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    out = reference(x)
    out.backward()
    assert d["value"] == pytest.approx(out.item(), rel=1e-12)
    np.testing.assert_allclose(d["grads"]["x"], x.grad.numpy(), rtol=1e-12)  # x / ‖x‖
    assert {"pow", "sum", "sqrt"} <= set(ops_of(d)) and "norm" not in ops_of(d)


def test_square_data_item_and_stop_gradient() -> None:
    d, _ = ran("import numpy as np\nx = [3.0, -1.0]\nL = np.square(x).sum() + x.square().sum()")
    assert d["grads"]["x"] == pytest.approx([12.0, -4.0])
    d, _ = ran("x = 2.0\ny = x.data * x")  # the data is a constant: only the right x is traced
    assert d["grads"] == {"x": 2.0} and "const" in {n["kind"] for n in d["nodes"]}
    d, printed = ran("import torch\nx = torch.tensor(3.0, requires_grad=True)\ny = x * x\n"
                     "z = y.item() * x\nprint(y.item(), x.data)")  # fmt: skip
    assert d["grads"] == {"x": 9.0} and printed == ["9.0 tensor(3.)"]
    d, _ = ran("import jax\nimport jax.numpy as jnp\nx = jnp.arange(4.0)\n"
               "u = jax.lax.stop_gradient(x * x)\nL = (u * x).sum()")  # fmt: skip
    assert d["grads"]["x"] == [0.0, 1.0, 4.0, 9.0]


@pytest.mark.parametrize(
    ("source", "line", "column", "words"),
    [
        ("x = [1.0, 2.0]\ny = x.item()", 2, 5, "item() needs a tensor of one element, but this "
         "one has shape (2,)"),
        ("x = [1.0, 2.0]\ny = x.norm(p=1)", 2, 12, "norm() has no keyword 'p'"),
        ("x = [1.0, 2.0]\ny = x.double(1)", 2, 5, ".double() takes no arguments"),
        ("import numpy as np\ny = np.linalg.inv(x)", 2, 5,
         "numpy.linalg.inv is not supported; the functions of numpy.linalg that work are: norm"),
        ("import torch\nx = torch.Tensor(3)", 2, 5, "torch.Tensor(n) makes n uninitialised"),
        ("import jax\ny = jax.lax.cond(x)", 2, 5, "jax.lax.cond is not supported"),
    ],
)  # fmt: skip
def test_the_new_names_refuse_what_they_cannot_mean(
    source: str, line: int, column: int, words: str
) -> None:
    e = refused(source)
    assert (e.line, e.column) == (line, column), e.message
    assert words in e.message


# --- comparisons that are only shown --------------------------------------------------------------

GENTLE = """import torch
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3*a**3 - b**2
Q.backward(gradient=torch.tensor([1., 1.]))
print(9*a**2 == a.grad)
print(-2*b == b.grad, a.grad > 40, 0 < a[0] <= 2)
a.grad == 9*a**2"""


def test_a_printed_comparison_shows_as_pytorch_prints_it() -> None:
    d, printed = ran(GENTLE)
    a = torch.tensor([2.0, 3.0], dtype=torch.float64)
    assert printed == [
        str(torch.tensor([True, True])),
        f"{torch.tensor([True, True])} {a * 9 * a > 40} {str(0 < a[0] <= 2)}",
        str(torch.tensor([True, True])),
    ]
    assert " tensor([False,  True]) " in printed[1]  # padded, as PyTorch pads
    assert d["value"] == [-12.0, 65.0]  # the backward() output, not the last line
    assert "eq" not in ops_of(d) and len(d["steps"]) > 1


def test_a_comparison_shows_as_numpy_prints_it_without_torch() -> None:
    d, printed = ran("x = [1.0, 2.0]\ny = x * x\nprint(y == x, y > 0.5)\ny >= 4")
    assert printed == ["[ True False] [ True  True]", "[False  True]"]
    assert d["value"] == [1.0, 4.0] and d["grads"]["x"] == [2.0, 4.0]  # the left side: y


def test_a_grad_not_yet_known_compares_as_pytorch_compares_none() -> None:
    source = (
        "import torch\nx = torch.tensor([1.0], requires_grad=True)\n"
        "print(x.grad == 0)\nL = x.sum()\nL.backward()\nprint(x.grad == 1)"
    )
    _, printed = ran(source)
    none = None
    assert printed == [str(none == torch.tensor([0.0])), "tensor([True])"]


@pytest.mark.parametrize(
    ("source", "line", "column", "words", "code"),
    [
        ("x = [1.0, 2.0]\nprint(x == [1.0, 2.0, 3.0])", 2, 7,
         "cannot compare values of shapes (2,) and (3,)", "shape"),
    ],
)  # fmt: skip
def test_a_comparison_of_shapes_that_do_not_broadcast_is_refused(
    source: str, line: int, column: int, words: str, code: str
) -> None:
    e = refused(source)
    assert (e.line, e.column, e.code) == (line, column, code), e.message
    assert words in e.message


def test_a_huge_comparison_is_refused_naming_max_tensor_elements() -> None:
    e = refused("x = zeros(16384, 1)\ny = zeros(1, 16384)\nprint(x == y)")
    assert e.status == 413 and e.limit == "max_tensor_elements" and (e.line, e.column) == (3, 7)


# --- a program that computes only inside its prints --------------------------------------------


def test_the_output_of_a_program_of_prints_is_the_last_value_printed() -> None:
    d, printed = ran("import jax.numpy as jnp\nfrom jax import grad\n"
                     "print(grad(jnp.tanh)(2.0))\nprint(grad(grad(jnp.tanh))(2.0))")  # fmt: skip
    t = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.tanh(t), t, create_graph=True)
    (h,) = torch.autograd.grad(g, t)
    assert [float(p) for p in printed] == pytest.approx([g.item(), h.item()], rel=1e-12)
    # each jax.grad is a pass; the last one's output is tanh'(x), which it differentiates
    assert d["value"] == pytest.approx(g.item(), rel=1e-12)
    d, _ = ran("print(x * x)\nprint('done')", {"x": 3.0})  # a string is not a value
    assert d["value"] == 9.0 and d["grads"] == {"x": 6.0}
    d, _ = ran("x = 3.0\nprint(x * x)")  # x = 3.0 gives a value: it is the output
    assert d["value"] == 3.0
    d, _ = ran("x = 3.0\ny = x + 1\nprint(x * x)")  # an assignment came first: it is the output
    assert d["value"] == 4.0
    assert refused("print('hello')").code == "no_output"


# --- .double(), .float(), x.requires_grad = True -------------------------------------------------


def test_conversions_change_nothing_and_requires_grad_may_be_assigned() -> None:
    source = ("import torch\nx1 = torch.Tensor([2.0]).double()  ; x1.requires_grad = True\n"
              "w1 = torch.Tensor([-3.0]).float()\nw1.requires_grad = True\n"
              "c = torch.Tensor([5.0]).double()\no = torch.tanh(x1*w1 + c)\no.backward()\n"
              "print(o.data.item())\nprint('x1', x1.grad.item())")  # fmt: skip
    d, printed = ran(source)
    x1 = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    w1 = torch.tensor([-3.0], dtype=torch.float64, requires_grad=True)
    o = torch.tanh(x1 * w1 + 5.0)
    o.backward()
    assert set(d["grads"]) == {"x1", "w1"}  # c asked for no gradient: a constant
    assert d["grads"]["x1"] == pytest.approx(x1.grad.tolist(), rel=1e-12)
    assert printed == [str(o.item()), f"x1 {x1.grad.item()}"]


@pytest.mark.parametrize(
    ("source", "line", "column", "words"),
    [
        ("x = 1.0\nx.grad = 2.0", 2, 1, "x.grad is set to a tensor or None"),
        ("x = [1.0, 2.0]\nx[0] = 2.0", 2, 1, "assigning to an index (x[i] = …) is not part"),
        ("x = [1.0, 2.0]\n(x + 1).requires_grad = True", 2, 1, "only a leaf's requires_grad"),
    ],
)  # fmt: skip
def test_assignments_to_a_part_are_refused_by_name(
    source: str, line: int, column: int, words: str
) -> None:
    e = refused(source)
    assert (e.line, e.column) == (line, column), e.message
    assert words in e.message


def test_booleans_in_a_list_are_numbers_and_argnums_0_is_the_default() -> None:
    source = (
        "import jax.numpy as jnp\nfrom jax import grad\nt = jnp.array([True, False])\n"
        "def f(w):\n    return (w * t).sum()\ng = grad(f, argnums=0)(jnp.array([2., 3.]))"
    )
    d, _ = ran(source)  # jax.grad is a pass: its output f(w) = 2, its grad of w = t
    assert d["value"] == 2.0 and d["grads"]["w"] == [1.0, 0.0]
    e = refused("from jax import grad\ndef f(w):\n    return w\ng = grad(f, argnums=1)(2.0)")
    assert (e.line, e.column) == (4, 21) and "argnums 1 names no argument" in e.message


# --- every new spelling prints back as the program it means --------------------------------------


def test_the_new_refusals_are_worded_in_chinese_from_their_keys() -> None:
    for source in ("import numpy as np\ny = np.linalg.inv(x)", "x = [1.0]\ny = x.norm(p=1)"):
        e = refused(source)
        assert e.msg is not None and re.search(r"[\u4e00-\u9fff]", e.in_language("zh"))


# --- constant expressions, generated: the number the parser reads is Python's --------------------

FOLDS = settings(max_examples=60, deadline=None, derandomize=True, database=None)
ATOMS = st.sampled_from(["2", "0.5", "3.", "math.pi", "np.e", "torch.pi", "1e-3", "7", "-7"])


@st.composite
def constant_expression(draw: st.DrawFn, depth: int = 3) -> str:
    if depth == 0 or draw(st.booleans()):
        atom = draw(ATOMS)
        return f"-{atom}" if draw(st.booleans()) else atom
    op = draw(st.sampled_from(["+", "-", "*", "/", "**"]))
    left, right = draw(constant_expression(depth - 1)), draw(constant_expression(depth - 1))
    return f"({left} {op} {right})"


@FOLDS
@given(constant_expression())
def test_a_constant_expression_bound_is_the_number_python_computes(text: str) -> None:
    import math

    try:
        want = eval(text, {"math": math, "np": np, "torch": torch})  # noqa: S307 - generated here
    except (ZeroDivisionError, OverflowError):
        want = None
    source = f"import math\nimport numpy as np\nimport torch\nx = torch.linspace({text}, 1., 2)"
    try:
        d, _ = ran(source)
    except ProgramError as e:
        assert e.line == 4, e.message
        if e.code == "too_large":  # a whole-number expression past 2**62, as range() says
            assert isinstance(want, int) and abs(want) > 2**62, e.message
            return
        assert want is None or isinstance(want, complex) or not math.isfinite(want), e.message
        assert e.code == "non_finite", e.message
        return
    assert isinstance(want, int | float) and d["value"][0] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    "marking",
    [
        "V = (0.01 * torch.ones(2, 3)).requires_grad_()",
        "V = 0.01 * torch.ones(2, 3)\nV.requires_grad_()",
        "V = 0.01 * torch.ones(2, 3)\nV.requires_grad = True",
    ],
)
def test_requires_grad_makes_a_leaf_of_what_a_name_holds_as_pytorch_does(marking: str) -> None:
    """PyTorch: a tensor made from constants is a leaf; requires_grad_() gives it a grad of
    its own (V.grad = 2V here), whatever expression made it."""
    torch = pytest.importorskip("torch")
    source = f"import torch\n{marking}\nL = (V * V).sum()\nL.backward()"
    namespace: dict[str, Any] = {"torch": torch}
    exec(source.replace("torch.ones(2, 3)", "torch.ones(2, 3, dtype=torch.float64)"), namespace)
    ours = run_program(source).trace.to_dict()["grads"]
    assert list(ours) == ["V"]
    np.testing.assert_allclose(ours["V"], namespace["V"].grad.numpy(), rtol=1e-12)
