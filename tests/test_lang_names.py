"""The newer names (spec/language.md, "Code as students already write it"): PyTorch's leaves,
dot/pow/view/cat/stack/linspace/arange/maximum/minimum/clamp, `dim=`/`keepdim=`, shapes as
numbers and integer-array indexing. Each construct is checked against PyTorch (float64) where
it has a gradient, and each refusal at its line and column."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from engine import ProgramError, run, run_program

torch = pytest.importorskip("torch")


def trace(source: str, values: dict[str, Any] | None = None) -> dict[str, Any]:
    return run(source, values).to_dict()


def refused(source: str) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(source)
    return info.value


def t(v: Any) -> Any:
    return torch.tensor(v, dtype=torch.float64, requires_grad=True)


def close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b), rtol=1e-12, atol=1e-14)


# --- PyTorch's leaves -------------------------------------------------------------------------


def test_requires_grad_makes_a_leaf_and_a_tensor_without_it_is_a_constant() -> None:
    d = trace(
        "import torch\nx = torch.tensor([1.0, 2.0])\n"
        "w = torch.tensor([0.5, -1.0], requires_grad=True)\nL = (x * w).sum()"
    )
    assert d["grads"] == {"w": [1.0, 2.0]}
    kinds = {n["label"]: n["kind"] for n in d["nodes"]}
    assert kinds["x"] == "const" and kinds["w"] == "leaf"
    assert len(d["nodes"]) == 4  # x, w, x*w, sum: one node per tensor, no copies


@pytest.mark.parametrize(
    "made",
    ["torch.ones(2, 2)", "torch.zeros((2, 2))", "torch.full((2, 2), 1.0)", "torch.rand(2, 2)"],
)
def test_every_torch_constructor_takes_requires_grad(made: str) -> None:
    src = f"import torch\nx = {made[:-1]}, requires_grad=True)\nL = (x * x).sum()"
    assert np.shape(trace(src)["grads"]["x"]) == (2, 2)
    # PyTorch: y = 2.0 is a Python number, x a constant, so L needs no grad: no leaf at all
    assert trace(f"import torch\nx = {made}\ny = 2.0\nL = (x * y).sum()")["grads"] == {}


def test_requires_grad_underscore_as_a_statement_and_in_an_expression() -> None:
    a = trace("import torch\nx = torch.ones(3)\nx.requires_grad_()\nL = (x * x).sum()")
    assert a["grads"] == {"x": [2.0, 2.0, 2.0]}
    b = trace("import torch\nx = torch.ones(3).requires_grad_()\nL = (x * x).sum()")
    assert b["grads"] == a["grads"]


def test_without_torch_a_bound_constructor_is_a_leaf_as_before() -> None:
    assert trace("x = ones(2)\nL = (x * x).sum()")["grads"] == {"x": [2.0, 2.0]}


def test_dtype_and_device_are_accepted_and_ignored() -> None:
    d = trace(
        "import torch\nx = torch.tensor(2.0, dtype=torch.float32, requires_grad=True)\ny = x * x"
    )
    assert d["grads"] == {"x": 4.0}


def test_torch_autograd_grad_is_the_languages_grad() -> None:
    src = "import torch\nx = torch.tensor(3.0, requires_grad=True)\ny = x ** 3\n"
    # torch.autograd.grad is a pass of its own (PyTorch's: it returns dy/dx = 3x² = 27 and
    # leaves x.grad as it was); the last line only shows g. The language's own grad(y, x)
    # builds dy/dx as a graph, which the implicit pass differentiates again: 6x = 18.
    for call in (
        "g = torch.autograd.grad(y, x, create_graph=True)[0]",
        "g = torch.autograd.grad(y, [x], create_graph=True, retain_graph=True)[0]",
    ):
        ran = run_program(src + call + "\ng")
        d = ran.trace.to_dict()
        assert d["value"] == 27.0 and d["grads"] == {"x": 27.0}
        assert ran.interpreter.passes.passes[0].grads_after[ran.nodes[0].seq] is None
        assert [p["text"] for p in ran.printed] == ["tensor(27., grad_fn=<MulBackward0>)"]
    d = trace(src + "g = grad(y, x)\ng")
    assert d["value"] == 27.0 and d["grads"] == {"x": 18.0}


def test_a_zero_dimensional_randn() -> None:
    d = trace("seed(1)\nx = randn()\ny = x * 2")
    assert d["value"] == pytest.approx(2 * np.random.default_rng(1).standard_normal())


# --- more names, each against PyTorch -----------------------------------------------------------

A = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]
B = [[2.0, 1.0, -1.0], [1.0, 0.0, 3.0]]


def torch_grads(f: Any, *values: Any) -> tuple[float, list[Any]]:
    leaves = [t(v) for v in values]
    out = f(*leaves)
    out.backward()
    return float(out), [np.zeros(x.shape) if x.grad is None else x.grad.numpy() for x in leaves]


CASES = [
    ("dot", "L = dot(a[0], b[0])", lambda a, b: torch.dot(a[0], b[0])),
    ("method-dot", "L = a[1].dot(b[1])", lambda a, b: a[1].dot(b[1])),
    ("pow", "L = pow(a, 2).sum() + a.pow(3).sum()", lambda a, b: (a**2).sum() + a.pow(3).sum()),
    ("view", "L = (a.view(-1) * b.view(6)).sum()", lambda a, b: (a.view(-1) * b.view(6)).sum()),
    (
        "cat",
        "c = cat([a, b], dim=1)\nL = (c * c).sum() + concatenate([a, b], 0).sum()",
        lambda a, b: (torch.cat([a, b], dim=1) ** 2).sum() + torch.cat([a, b], 0).sum(),
    ),
    (
        "stack",
        "s = stack([a, b], axis=2)\nL = (s * s[:, :, 0:1]).sum()",
        lambda a, b: (torch.stack([a, b], 2) * torch.stack([a, b], 2)[:, :, 0:1]).sum(),
    ),
    (
        "maximum",
        "L = (maximum(a, b) * minimum(a, b)).sum()",
        lambda a, b: (torch.maximum(a, b) * torch.minimum(a, b)).sum(),
    ),
    (
        "clamp",
        "L = (clamp(a, -1.5, 3.0) * b).sum() + a.clip(min=0).sum()",
        lambda a, b: (torch.clamp(a, -1.5, 3.0) * b).sum() + a.clamp(min=0).sum(),
    ),
    (
        "dim-keepdim",
        "L = (a.sum(dim=1, keepdim=True) * b).sum() + mean(b, dim=0).sum()",
        lambda a, b: (a.sum(dim=1, keepdim=True) * b).sum() + b.mean(dim=0).sum(),
    ),
    (
        "softmax-dim",
        "L = (softmax(a, dim=0) * b).sum() + (log_softmax(b, 1) * a).sum()",
        lambda a, b: (torch.softmax(a, 0) * b).sum() + (torch.log_softmax(b, 1) * a).sum(),
    ),
    (
        "gather",
        "L = (a[[0, 1, 1], [2, 0, 2]] * a[[1, 1], [0, 0]].sum()).sum()",
        lambda a, b: (a[[0, 1, 1], [2, 0, 2]] * a[[1, 1], [0, 0]].sum()).sum(),
    ),
    (
        "gather-range",
        "y = [2, 0]\nL = -log(softmax(a, axis=1)[range(2), y]).mean()",
        lambda a, b: -torch.log(torch.softmax(a, 1)[range(2), [2, 0]]).mean(),
    ),
    (
        "gather-rows",
        "L = (a[[1, 0, 1]] * b[[0, 0, 1], :]).sum()",
        lambda a, b: (a[[1, 0, 1]] * b[[0, 0, 1], :]).sum(),
    ),
]


@pytest.mark.parametrize(("src", "reference"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_name_matches_torch(src: str, reference: Any) -> None:
    d = trace(f"a = {A}\nb = {B}\n{src}")
    value, (ga, gb) = torch_grads(reference, A, B)
    assert d["value"] == pytest.approx(value, rel=1e-12)
    close(d["grads"]["a"], ga)
    close(d["grads"]["b"], gb)


def test_clamp_passes_the_gradient_on_its_bounds_as_torch_does() -> None:
    x = [-1.0, 0.0, 0.5, 1.0, 2.0]
    for call, ref in (
        ("clamp(x, 0, 1)", lambda v: torch.clamp(v, 0, 1)),
        ("clamp(x, min=0)", lambda v: torch.clamp(v, min=0)),
        ("x.clamp(max=1)", lambda v: v.clamp(max=1)),
        ("clip(x, 1, 0)", lambda v: torch.clamp(v, 1, 0)),  # lo > hi: every element is hi
    ):
        d = trace(f"x = {x}\nL = {call}.sum()")
        value, (g,) = torch_grads(lambda v, ref=ref: ref(v).sum(), x)
        assert d["value"] == pytest.approx(value)
        close(d["grads"]["x"], g)


def test_repeated_indices_add_their_gradients() -> None:
    d = trace("x = [1.0, 2.0, 3.0]\ny = x[[0, 0, 0, 2]]\nL = (y * [1, 2, 3, 4]).sum()")
    assert d["grads"] == {"x": [6.0, 0.0, 4.0]}
    assert any(n["op"] == "gather" for n in d["nodes"])


def test_an_index_name_bound_to_ints_holds_labels_not_a_leaf() -> None:
    d = trace("scores = [[1.0, 2.0], [3.0, 4.0]]\ny = [1, 0]\nL = scores[range(2), y].sum()")
    assert d["grads"] == {"scores": [[0.0, 1.0], [1.0, 0.0]]}
    assert "y" not in {n["label"] for n in d["nodes"]}
    d = trace(
        "import torch\ns = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "y = torch.tensor([2, 2])\nL = s[y].sum()"
    )
    assert d["grads"] == {"s": [0.0, 0.0, 2.0]}


def test_a_free_index_name_takes_its_labels_from_values() -> None:
    d = trace("L = scores[y].sum()", {"scores": [1.0, 2.0, 3.0], "y": [2, 0]})
    assert d["grads"]["scores"] == [1.0, 0.0, 1.0]


def test_arange_and_linspace_as_numpy_makes_them() -> None:
    for src, expected in (
        ("arange(4.0)", np.arange(4.0)),
        ("arange(1, 2, 0.25)", np.arange(1, 2, 0.25)),
        ("arange(-1.5, 1.5, 0.5)", np.arange(-1.5, 1.5, 0.5)),
        ("arange(3)", np.arange(3)),
        ("linspace(0, 1, 5)", np.linspace(0, 1, 5)),
        ("linspace(-1.0, 2.5, 8)", np.linspace(-1.0, 2.5, 8)),
    ):
        d = trace(f"x = {src}\nx")
        close(d["value"], expected)
        assert d["grads"]["x"] == [1.0] * len(expected)


def test_d2l_arange_dot_gives_four_x() -> None:
    d = trace("import torch\nx = torch.arange(4.0, requires_grad=True)\ny = 2 * torch.dot(x, x)")
    assert d["value"] == 28.0 and d["grads"] == {"x": [0.0, 4.0, 8.0, 12.0]}


# --- shapes as numbers --------------------------------------------------------------------------


def test_shapes_are_known_numbers() -> None:
    d = trace(
        "x = randn(2, 3)\nz = zeros(*x.shape)\nw = ones(x.shape)\n"
        "L = (x + z + w).sum() / x.shape[0] + len(x) + x.shape[-1] + x.size(1)"
    )
    rng = np.random.default_rng(0).standard_normal((2, 3))
    assert d["value"] == pytest.approx((rng + 1).sum() / 2 + 2 + 3 + 3)
    assert d["grads"]["x"] == [[0.5] * 3] * 2


def test_like_constructors_take_the_shape_of_a_value() -> None:
    d = trace(
        "import torch\nx = torch.tensor([[1.0, 2.0]])\nz = torch.zeros_like(x)\nL = (x + z).sum()"
    )
    assert {n["label"]: n["shape"] for n in d["nodes"]}["z"] == [1, 2]
    d = trace("x = [[1.0, 2.0]]\nz = zeros_like(x)\nL = (x + z).sum()")  # NumPy's takes a list
    assert {n["label"]: n["shape"] for n in d["nodes"]}["z"] == [1, 2]
    with pytest.raises(ProgramError):  # PyTorch's: zeros_like(): argument 'input' must be Tensor
        trace("import torch\nz = torch.zeros_like([1.0, 2.0])")


def test_a_shape_inside_a_loop_bound_and_a_reshape() -> None:
    d = trace("x = [1.0, 2.0, 3.0]\ns = x[0]\nfor i in range(1, len(x)):\n    s = s + x[i]\ns")
    assert d["value"] == 6.0
    d = trace(
        "x = [[1.0, 2.0], [3.0, 4.0]]\ny = [5.0, 6.0, 7.0, 8.0]\nL = (y.view(*x.shape) * x).sum()"
    )
    assert d["value"] == 70.0


# --- refusals -------------------------------------------------------------------------------

REFUSED = [
    ("shape-alone", "x = [1.0]\ny = x.shape", 2, 5, "the output is a tuple"),
    ("shape-axis-out", "x = [1.0, 2.0]\ny = x * x.shape[1]", 2, 9, "past the end of a tuple"),
    ("len-of-scalar", "x = 2.0\ny = x * len(x)", 2, 9, "len() of a 0-d tensor"),
    ("cat-not-list", "a = [1.0]\nc = cat(a, a)", 2, 9, "cat takes a list of values"),
    ("cat-empty", "c = cat([])", 1, 9, "cat takes a list of values"),
    ("cat-scalars", "a = 1.0\nc = cat([a, a])", 2, 5, "cat cannot join scalars"),
    ("cat-shapes", "a = [1.0]\nb = [[1.0]]\nc = cat([a, b])", 3, 5, "differ on another axis"),
    (
        "stack-shapes",
        "a = [1.0]\nb = [1.0, 2.0]\nc = stack([a, b])",
        3,
        5,
        "stack needs values of one shape",
    ),
    ("cat-axis", "a = [1.0]\nc = cat([a, a], axis=1)", 2, 5, "axis 1 is out of range"),
    ("cat-axis-twice", "a = [1.0]\nc = cat([a], 0, dim=0)", 2, 17, "axis is given twice"),
    ("clamp-no-bound", "x = [1.0]\ny = clamp(x)", 2, 5, "clamp needs a bound"),
    ("clamp-value-bound", "x = [1.0]\ny = clamp(x, min=x)", 2, 18, "clamp's min is a number"),
    ("clamp-twice", "x = [1.0]\ny = clamp(x, 0, min=0)", 2, 17, "min is given twice"),
    (
        "index-out",
        "x = [1.0, 2.0]\ny = x[[0, 2]]",
        2,
        5,
        "index 2 is out of range for an axis of length 2",
    ),
    (
        "index-lengths",
        "x = [[1.0, 2.0]]\ny = x[[0, 0], [0, 1, 1]]",
        2,
        5,
        "index lists of different lengths",
    ),
    ("index-empty", "x = [1.0]\ny = x[[]]", 2, 7, "an empty list of indices"),
    ("index-fraction", "x = [1.0]\ny = x[[0.5]]", 2, 7, "not a fraction"),
    ("range-step-0", "x = [1.0]\ny = x[range(0, 1, 0)]", 2, 7, "range() step cannot be 0"),
    ("arange-step-0", "x = arange(0, 1, 0.0)", 1, 5, "arange's step cannot be 0"),
    ("linspace-count", "x = linspace(0, 1, 2.5)", 1, 20, "not a fraction"),
    ("linspace-negative", "x = linspace(0, 1, -1)", 1, 5, "linspace needs a count ≥ 0"),
    ("max-one", "x = [1.0]\ny = max(x)", 2, 5, "max of one value (a reduction"),
    ("pow-one", "x = 1.0\ny = pow(x)", 2, 5, "pow takes a value and an exponent"),
    ("dot-value", "dot = 2.0\ny = dot(dot, dot)", 2, 5, "'dot' is a value, not a function"),
    (
        "requires-grad-kw",
        "x = [1.0]\ny = x.sum(requires_grad=True)",
        2,
        11,
        "no keyword 'requires_grad'",
    ),
    (
        "requires-grad-value",
        "import torch\nx = torch.ones(2, requires_grad=1)",
        2,
        33,
        "True or False",
    ),
    ("dtype-call", "import torch\nx = torch.ones(2, dtype=f(1))", 2, 25, "unknown function 'f'"),
    (
        "torch-transpose",
        "import torch\nx = [[[1.0]]]\ny = x.transpose(1, 2)",
        3,
        5,
        "has no attribute .transpose",
    ),
    (
        "requires-grad-stmt",
        "import torch\nx = [1.0]\n(x * 2).requires_grad_()",
        3,
        1,
        "has no attribute .requires_grad_",
    ),
    ("size-no-axis", "x = [1.0]\ny = x.size()", 2, 5, "the output is a tuple"),
    ("gather-too-long", "x = [1.0]\ny = x[range(99999)]", 2, 7, "max_tensor_elements"),
    ("arange-too-long", "x = arange(0, 1, 0.00001)", 1, 5, "max_tensor_elements"),
]


@pytest.mark.parametrize(
    ("src", "line", "column", "words"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_refused_with_its_position(src: str, line: int, column: int, words: str) -> None:
    e = refused(src)
    assert words in e.message, e.message
    assert (e.line, e.column) == (line, column), e.message
