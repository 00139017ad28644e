"""The program language (spec/language.md): what it accepts, what each program means, and how
each refused construct is reported — exact line and column (1-based, code points) and a
message that says what is wrong."""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np
import pytest
import torch

from engine import ProgramError, run


def trace(source: str, values: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return run(source, values, **kw).to_dict()


def refused(source: str, values: dict[str, Any] | None = None) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(source, values)
    return info.value


def by_label(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["label"]: n for n in d["nodes"]}


def output(d: dict[str, Any]) -> dict[str, Any]:
    return next(n for n in d["nodes"] if n["id"] == d["output"])


def assert_ids_contiguous(d: dict[str, Any]) -> None:
    ids = [n["id"] for n in d["nodes"]]
    assert ids == [f"n{i}" for i in range(len(ids))]
    for i, n in enumerate(d["nodes"]):
        # creation order: every input was made before the node that uses it
        assert all(int(x[1:]) < i for x in n["inputs"]), n


# --- accepted programs ---------------------------------------------------------------------


def test_one_line_expression_is_the_lesson_example() -> None:
    d = trace("x*y + x", {"x": 2, "y": 3})
    assert [
        (n["id"], n["name"], n["label"], n["kind"], n["op"], n["inputs"], n["value"], n["grad"])
        for n in d["nodes"]
    ] == [
        ("n0", "x", "x", "leaf", None, [], 2.0, 4.0),
        ("n1", "y", "y", "leaf", None, [], 3.0, 2.0),
        ("n2", None, "x*y", "op", "mul", ["n0", "n1"], 6.0, 1.0),
        ("n3", "out", "out", "op", "add", ["n2", "n0"], 8.0, 1.0),
    ]
    assert d["output"] == "n3" and d["value"] == 8.0
    assert d["grads"] == {"x": 4.0, "y": 2.0}


def test_statements_separated_by_semicolons_newlines_and_comments() -> None:
    src = "# the lesson\nx = 2; y = 3   # two leaves\n\nu = x*y  # product\nL = u + x\n# end\n"
    d = trace(src)
    assert [n["label"] for n in d["nodes"]] == ["x", "y", "u", "L"]
    assert d["output"] == "n3" and d["value"] == 8.0
    assert d["grads"] == {"x": 4.0, "y": 2.0}
    assert output(d)["name"] == "L"  # an assignment as the last statement is the output
    # same meaning as the one-liner with values
    one = trace("x*y + x", {"x": 2, "y": 3})
    assert [n["grad"] for n in d["nodes"]] == [n["grad"] for n in one["nodes"]]


def test_trailing_semicolon_and_blank_lines_are_fine() -> None:
    assert trace("x = 1;\n\n\n")["value"] == 1.0


def test_reassignment_makes_new_nodes_labelled_x_x2_x3() -> None:
    d = trace("x = 1\nx = x*2\nx = x*3")
    assert [(n["label"], n["name"], n["kind"]) for n in d["nodes"]] == [
        ("x", "x", "leaf"),
        ("2", None, "const"),
        ("x_2", "x", "op"),
        ("3", None, "const"),
        ("x_3", "x", "op"),
    ]
    assert d["value"] == 6.0 and d["output"] == "n4"
    assert d["grads"] == {"x": 6.0}  # only the leaf is in grads, under its own label
    assert by_label(d)["x_2"]["grad"] == 3.0


def test_loop_variable_is_a_constant_number() -> None:
    d = trace("w = 2\nh = 0\nfor i in range(3):\n    h = h*w + i\nh")
    assert d["value"] == 4.0  # ((0*2 + 0)*2 + 1)*2 + 2
    assert d["grads"] == {"w": 1.0, "h": 8.0}
    consts = [n for n in d["nodes"] if n["kind"] == "const"]
    assert [c["value"] for c in consts] == [0.0, 1.0, 2.0]
    assert all(c["grad"] is None for c in consts)
    assert [n["label"] for n in d["nodes"] if n["name"] == "h"] == ["h", "h_2", "h_3", "h_4"]
    assert_ids_contiguous(d)


def test_loop_variable_as_an_index() -> None:
    d = trace("xs = [1, 2, 3]\ns = 0\nfor i in range(3):\n    s = s + xs[i]\ns")
    assert d["value"] == 6.0
    assert d["grads"] == {"xs": [1.0, 1.0, 1.0], "s": 1.0}
    index_nodes = [n for n in d["nodes"] if n["op"] == "index"]
    assert [n["value"] for n in index_nodes] == [1.0, 2.0, 3.0]


def test_range_with_start_stop_step() -> None:
    d = trace("s = 0\nfor i in range(1, 7, 2):\n    s = s + i\ns")
    assert d["value"] == 9.0  # 1 + 3 + 5


def test_nested_loops_unroll_in_program_order() -> None:
    src = (
        "W = [[1, 2, 3], [4, 5, 6]]\ns = 0\nfor i in range(2):\n    for j in range(3):\n"
        "        s = s + W[i, j] * (i + j)\ns"
    )
    d = trace(src)
    assert d["value"] == 40.0
    assert d["grads"]["W"] == [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]
    assert len([n for n in d["nodes"] if n["name"] == "s"]) == 7
    assert_ids_contiguous(d)


def test_last_statement_of_an_unrolled_loop_is_the_output() -> None:
    d = trace("x = 3\nfor i in range(3):\n    y = x * i")
    assert d["value"] == 6.0 and output(d)["label"] == "y_3"
    assert d["grads"] == {"x": 2.0}


def test_randn_uses_seed_0_by_default_drawn_in_program_order() -> None:
    d = trace("a = randn(3)\nb = rand(2, 2)\nL = a.sum() + b.sum()")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(3), rng.random((2, 2))
    nodes = by_label(d)
    assert nodes["a"]["value"] == a.tolist() and nodes["b"]["value"] == b.tolist()
    assert nodes["a"]["kind"] == "leaf" and nodes["b"]["kind"] == "leaf"
    assert trace("a = randn(3)\nb = rand(2, 2)\nL = a.sum() + b.sum()") == d  # a permalink


def test_seed_changes_the_numbers_deterministically() -> None:
    d5 = trace("seed(5)\na = randn(4)")
    assert by_label(d5)["a"]["value"] == np.random.default_rng(5).standard_normal(4).tolist()
    assert by_label(d5)["a"]["value"] != by_label(trace("a = randn(4)"))["a"]["value"]
    assert trace("seed(5)\na = randn(4)") == d5
    # seed restarts the generator where it stands
    d = trace("a = randn(2)\nseed(0)\nb = randn(2)\na + b")
    assert by_label(d)["a"]["value"] == by_label(d)["b"]["value"]


def test_unicode_identifiers() -> None:
    d = trace("损失 = x*y", {"x": 2, "y": 5})
    out = output(d)
    assert out["name"] == "损失" and out["label"] == "损失" and out["value"] == 10.0
    x = by_label(d)["x"]
    assert x["span"] == {"line": 1, "column": 6, "end_line": 1, "end_column": 7}
    assert out["span"] == {"line": 1, "column": 6, "end_line": 1, "end_column": 9}  # x*y
    d = trace("权重 = 3\n损失 = 权重 * 权重")
    assert d["grads"] == {"权重": 6.0}


def test_look_alike_letters_fold_to_the_name_python_uses() -> None:
    d = trace("𝐱 = 2\nx*3")  # U+1D431 MATHEMATICAL BOLD SMALL X is NFKC-folded to x
    assert d["grads"] == {"x": 3.0}
    assert [n["label"] for n in d["nodes"]] == ["x", "3", "out"]


def test_columns_count_code_points_after_cjk_and_astral_characters() -> None:
    e = refused("损失 = x*log(0)")
    assert (e.line, e.column) == (1, 8)
    e = refused("a = 1\n损失 = 损失2.foo")
    assert (e.line, e.column) == (2, 6)
    e = refused("𝛽𝛽 = 2; y = log(0)")  # astral: 2 UTF-16 units, 4 UTF-8 bytes each
    assert (e.line, e.column) == (1, 13)
    e = refused("# 注释 😀\n损失 = (x *")
    assert (e.line, e.column) == (2, 6)


def test_methods() -> None:
    W = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]])
    src = f"W = {W.tolist()}\n"
    assert trace(src + "W.sum(axis=1)")["value"] == W.sum(axis=1).tolist()
    assert trace(src + "W.T")["value"] == W.T.tolist()
    assert trace(src + "W.T")["nodes"][1]["op"] == "transpose"
    assert trace(src + "W.tanh()")["value"] == np.tanh(W).tolist()
    assert trace(src + "W.exp().mean()")["value"] == pytest.approx(np.exp(W).mean(), rel=1e-12)
    assert trace(src + "W.reshape(3, 2)")["shape"] == [3, 2]
    assert trace(src + "W.transpose()")["value"] == W.T.tolist()
    e = np.exp(W - W.max(axis=0))
    got = np.array(trace(src + "W.softmax(axis=0)")["value"])
    assert np.allclose(got, e / e.sum(axis=0), rtol=1e-12)
    got = np.array(trace(src + "W.log_softmax()")["value"])
    assert np.allclose(got, W - np.log(np.exp(W).sum(axis=-1, keepdims=True)), rtol=1e-12)
    d = trace(src + "W.T.tanh().sum(axis=0, keepdims=True)")
    assert d["shape"] == [1, 2]
    assert [n["op"] for n in d["nodes"]] == [None, "transpose", "tanh", "sum"]


def test_keywords_axis_keepdims_axes() -> None:
    src = "T = arange(24).reshape(2, 3, 4)\n"
    assert trace(src + "sum(T, axis=0, keepdims=True)")["shape"] == [1, 3, 4]
    assert (
        trace(src + "T.sum(axis=(0, 2))")["value"]
        == np.arange(24.0).reshape(2, 3, 4).sum(axis=(0, 2)).tolist()
    )
    assert trace(src + "mean(T, axis=-1)")["shape"] == [2, 3]
    assert trace(src + "sum(T, 1)")["shape"] == [2, 4]  # axis positionally
    assert trace(src + "transpose(T, axes=(2, 0, 1))")["shape"] == [4, 2, 3]
    assert trace(src + "softmax(T, axis=1)")["shape"] == [2, 3, 4]
    assert trace(src + "T.mean(axis=None)")["shape"] == []


def test_list_literals_are_leaves_with_their_shape() -> None:
    d = trace("W = [[1, 2], [3, -4.5]]\nv = [-1, 0.5]\nL = (W @ v).sum()")
    nodes = by_label(d)
    assert nodes["W"]["kind"] == "leaf" and nodes["W"]["shape"] == [2, 2]
    assert nodes["W"]["value"] == [[1.0, 2.0], [3.0, -4.5]]
    assert nodes["v"]["value"] == [-1.0, 0.5]
    assert d["value"] == (1 * -1 + 2 * 0.5) + (3 * -1 + -4.5 * 0.5)
    assert d["grads"]["W"] == [[-1.0, 0.5], [-1.0, 0.5]]
    assert d["grads"]["v"] == [4.0, -2.5]


def test_a_list_inside_an_expression_is_a_constant() -> None:
    d = trace("x = 2\ny = (x * [1, 2]).sum()")
    const = [n for n in d["nodes"] if n["kind"] == "const"]
    assert [c["value"] for c in const] == [[1.0, 2.0]] and const[0]["grad"] is None
    assert d["grads"] == {"x": 3.0}


def test_constructors_are_leaves_when_bound_and_constants_inside_expressions() -> None:
    d = trace(
        "W = zeros(2, 3)\nb = ones(3)\nc = full((2, 3), 0.5)\na = arange(3)\n"
        "L = (W + b + c + a + ones(2, 3) + randn(3)).sum()"
    )
    nodes = by_label(d)
    for name, value in [
        ("W", np.zeros((2, 3))),
        ("b", np.ones(3)),
        ("c", np.full((2, 3), 0.5)),
        ("a", np.arange(3.0)),
    ]:
        assert nodes[name]["kind"] == "leaf" and nodes[name]["value"] == value.tolist()
    assert set(d["grads"]) == {"W", "b", "c", "a"}
    assert d["grads"]["b"] == [2.0, 2.0, 2.0]
    inside = [n for n in d["nodes"] if n["kind"] == "const"]
    assert [n["label"] for n in inside] == ["ones(2, 3)", "randn(3)"]
    assert all(n["grad"] is None for n in inside)


def test_const_and_detach_cut_the_graph() -> None:
    d = trace("x = 2\ny = const(x*3) * x")
    assert [(n["label"], n["kind"], n["grad"]) for n in d["nodes"]] == [
        ("x", "leaf", 6.0),
        ("3", "const", None),
        ("x*3", "op", None),
        ("const(x*3)", "const", None),
        ("y", "op", 1.0),
    ]
    assert d["value"] == 12.0 and d["grads"] == {"x": 6.0}  # torch: (x*3).detach()*x → 6
    for src in ("x = 2\ny = detach(x) * x", "x = 2\ny = x.detach() * x"):
        d = trace(src)
        assert d["grads"] == {"x": 2.0}
        assert [n["grad"] for n in d["nodes"] if n["kind"] == "const"] == [None]
    # the cut node is not in topo and gets no step
    d = trace("x = 2\ny = const(x*3) * x")
    assert "n2" not in d["topo"] and all(s["node"] != "n2" for s in d["steps"])


@pytest.mark.parametrize(
    "src",
    [
        "z = [1.0, 2.0, 3.0]\nL = cross_entropy(z, 2)",
        "z = [1.0, 2.0, 3.0]\nt = 2\nL = cross_entropy(z, t)",
    ],
)
def test_cross_entropy_labels_inline_or_named_are_not_leaves(src: str) -> None:
    d = trace(src)
    z = np.array([1.0, 2.0, 3.0])
    p = np.exp(z) / np.exp(z).sum()
    assert d["value"] == pytest.approx(-np.log(p[2]), rel=1e-12)
    assert set(d["grads"]) == {"z"}
    assert np.allclose(d["grads"]["z"], p - [0, 0, 1], rtol=1e-12)
    assert [n["label"] for n in d["nodes"]] == ["z", "L"]


def test_cross_entropy_batched_labels_by_name_and_as_a_free_name() -> None:
    z = [[1.0, 2.0], [3.0, 4.0]]
    named = trace(f"z = {z}\nt = [0, 1]\ncross_entropy(z, t)")
    inline = trace(f"z = {z}\ncross_entropy(z, [0, 1])")
    free = trace(f"z = {z}\ncross_entropy(z, t)", {"t": [0, 1]})
    for d in (named, inline, free):
        assert set(d["grads"]) == {"z"} and len(d["nodes"]) == 2
        assert d["value"] == pytest.approx(inline["value"], rel=1e-15)
        assert d["grads"] == inline["grads"]
    assert [f for f in free["free"] if f["name"] == "t"][0]["given"] is True


def test_labels_given_as_json_floats_are_whole_numbers() -> None:
    # JSON numbers arrive as floats through the API
    d = trace("z = [1.0, 2.0]\ncross_entropy(z, t)", {"t": 1.0})
    assert d["value"] == pytest.approx(np.log1p(np.exp(-1.0)), rel=1e-12)
    e = refused("z = [1.0, 2.0]\ncross_entropy(z, t)", {"t": 0.5})
    assert e.code == "labels" and "'t'" in e.message
    e = refused("z = [[1.0, 2.0]]\ncross_entropy(z, t)", {"t": [[1]]})
    assert e.code == "labels"


def test_free_names_default_to_one_and_take_given_values() -> None:
    d = trace("x*y + x")
    assert d["value"] == 2.0 and d["grads"] == {"x": 2.0, "y": 1.0}
    assert d["free"] == [
        {"name": "x", "value": 1.0, "given": False},
        {"name": "y", "value": 1.0, "given": False},
    ]
    d = trace("x*y + x", {"y": 4})
    assert d["value"] == 5.0
    assert d["free"][1] == {"name": "y", "value": 4.0, "given": True}
    d = trace("(W @ v).sum()", {"W": [[1, 2], [3, 4]], "v": [1, -1]})
    assert d["value"] == -2.0 and d["grads"] == {"W": [[1.0, -1.0], [1.0, -1.0]], "v": [4.0, 6.0]}


def test_values_that_name_no_free_name_are_an_error() -> None:
    e = refused("x*y", {"x": 1, "xx": 2})
    assert e.code == "unknown_value"
    assert "'xx'" in e.message and "did you mean 'x'" in e.message
    assert (e.line, e.column) == (None, None)
    e = refused("x = 2\nx*3", {"x": 5})  # x is assigned, so it is not free
    assert e.code == "unknown_value" and "'x'" in e.message


def test_bad_values_are_errors() -> None:
    assert refused("x*2", {"x": [[1, 2], [3]]}).code == "bad_value"
    assert refused("x*2", {"x": float("nan")}).code == "bad_value"
    assert refused("x*2", {"x": float("inf")}).code == "bad_value"


@pytest.mark.parametrize(
    "src",
    [
        "x*y + x",
        "x = 1\nx = x*2\nx = x*3",
        "w = 2\nh = 0\nfor i in range(3):\n    h = tanh(h*w + i)\nh",
        "W = randn(2, 3)\nb = zeros(3)\nx = [1, 2]\nL = ((x @ W) + b).relu().sum()",
        "z = [[1.0, 2.0], [3.0, 4.0]]\nL = cross_entropy(z, [0, 1]) + mse(z, ones(2, 2))",
    ],
)
def test_node_ids_are_contiguous_in_creation_order_and_topo_is_valid(src: str) -> None:
    d = trace(src)
    assert_ids_contiguous(d)
    pos = {nid: i for i, nid in enumerate(d["topo"])}
    for n in d["nodes"]:
        if n["id"] in pos:
            assert all(pos[x] < pos[n["id"]] for x in n["inputs"])
    assert d["topo"][-1] == d["output"]


def test_labels_out_for_a_bare_last_expression_only() -> None:
    assert output(trace("x = 2\nx*3"))["label"] == "out"
    assert output(trace("x = 2\nx"))["label"] == "x"  # a bare name is that node itself
    assert output(trace("x = 2\ny = x*3"))["label"] == "y"
    d = trace("x = 2\n(x*3) + 1")
    assert [n["label"] for n in d["nodes"]] == ["x", "3", "x*3", "1", "out"]


def test_a_tensor_output_is_seeded_with_ones() -> None:
    d = trace("W = [[1, 2], [3, 4]]\nW * 2")
    assert d["seeded_with_ones"] is True
    assert d["steps"][0]["grads"] == {d["output"]: [[1.0, 1.0], [1.0, 1.0]]}
    assert d["grads"]["W"] == [[2.0, 2.0], [2.0, 2.0]]


def test_indexing_and_slicing_with_constants() -> None:
    d = trace("W = [[1, 2, 3], [4, 5, 6]]\nL = W[:, 1].sum() + W[1, -1] + W[0][0:2].sum()")
    assert d["value"] == (2 + 5) + 6 + (1 + 2)
    assert d["grads"]["W"] == [[1.0, 2.0, 0.0], [0.0, 1.0, 1.0]]
    d = trace("x = [1, 2, 3, 4]\ni = 0\nfor k in range(2):\n    i = i + x[k*2 + 1]\ni")
    assert d["value"] == 6.0


# --- refused constructs: exact position and a message that says what is wrong ---------------

REFUSED: list[tuple[str, str, int, int, str, str]] = [
    # (id, source, line, column, code, words the message must contain)
    ("syntax-unclosed", "x = (1", 1, 5, "syntax", "'(' was never closed"),
    ("syntax-operator", "x = 1 +* 2", 1, 8, "syntax", "syntax error"),
    ("syntax-missing-value", "y = 2\nx =", 2, 4, "syntax", "syntax error"),
    ("syntax-html", "x = <b>", 1, 5, "syntax", "syntax error"),
    ("syntax-cjk-line3", "a = 1\nb = 2\n损失 = (x *", 3, 6, "syntax", "never closed"),
    (
        "unknown-function",
        "x = 2\nL = tanhh(x)",
        2,
        5,
        "unknown_function",
        "unknown function 'tanhh' — did you mean 'tanh'?",
    ),
    (
        "unknown-function-no-hint",
        "y = eval(x)",
        1,
        5,
        "unknown_function",
        "unknown function 'eval'",
    ),
    ("print-as-a-value", "y = print(x)", 1, 5, "no_output", "the output is None"),
    (
        "unknown-method",
        "y = 2\nL = y.sigmod()",
        2,
        5,
        "unknown_method",
        "unknown method .sigmod() — did you mean 'sigmoid'?",
    ),
    ("function-as-value", "y = exp + 1", 1, 5, "invalid", "'exp' is a function"),
    ("value-as-function", "x = 1\ny = x(2)", 2, 5, "invalid", "'x' is a value, not a function"),
    (
        "used-before-assigned",
        "y = x + 1\nx = 2",
        1,
        5,
        "unbound",
        "'x' is used before it is assigned",
    ),
    ("self-before-assigned", "x = x + 1", 1, 5, "unbound", "'x' is used before it is assigned"),
    ("attribute-dunder", "x.__class__", 1, 1, "attribute", "attribute access (.__class__)"),
    ("attribute-foo", "x = 2\ny = x.foo", 2, 5, "attribute", "attribute access (.foo)"),
    ("method-not-called", "x = 2\ny = x.sum", 2, 5, "unsupported", ".sum is a method"),
    # imports: an allow-list of modules (torch, numpy, math, jax), and only their functions
    # that the language has (engine/language/modules.py)
    ("import", "import os", 1, 1, "import", "importing os is not supported; gradtrace understands"),
    ("from-import", "x = 1\nfrom os import path", 2, 1, "import", "importing os is not supported"),
    (
        "import-submodule",
        "import torch.fft",
        1,
        1,
        "import",
        "importing torch.fft is not supported",
    ),
    (
        "from-import-module",
        "from torch import fft\nfft(2)",
        1,
        1,
        "import",
        "torch.fft is not supported",
    ),
    ("import-star", "from math import *", 1, 1, "invalid", "import * is not supported"),
    (
        "missing-function-of-a-module",
        "import math\ny = math.gamma(2)",
        2,
        5,
        "unknown_function",
        "math.gamma is not supported; the functions of math that work are: cos, exp",
    ),
    (
        "missing-submodule-of-a-module",
        "import numpy as np\ny = np.fft.fft(x)",
        2,
        5,
        "unknown_function",
        "numpy.fft is not supported; the functions of numpy that work are",
    ),
    (
        "module-constant",
        "import math\ny = math.tau",
        2,
        5,
        "attribute",
        "math.tau is not supported",
    ),
    (
        "not-imported",
        "y = np.exp(2)",
        1,
        5,
        "import",
        "'np' is not imported: add `import numpy as np` at the top of the program",
    ),
    ("lambda-as-a-value", "y = (lambda t: t) + 1", 1, 5, "invalid", "is a function: call it"),
    (
        "function-in-arithmetic",
        "f = lambda: 1.0\ny = f\nz = y + 1",
        3,
        5,
        "invalid",
        "'f' is a function: call it, as in f(…), or pass it to grad",
    ),
    (
        "list-as-the-output",
        "[x * i for i in range(3)]",
        1,
        1,
        "list",
        "the output is a list of 3 values, not one value (a tensor): use stack(…)",
    ),
    ("set-comprehension", "y = {i for i in range(3)}", 1, 5, "unsupported", "a set comprehension"),
    (
        "dict-comprehension",
        "y = {i: i for i in range(3)}",
        1,
        5,
        "unsupported",
        "a dict comprehension",
    ),
    (
        "while-else",
        "while x < 2:\n    x = x + 1\nelse:\n    y = 2",
        1,
        1,
        "unsupported",
        "a while loop cannot have an else block",
    ),
    ("class", "x = 1\nclass A:\n    pass", 2, 1, "unsupported", "class is not part"),
    (
        "condition-on-several-values",
        "x = [1.0, 2.0]\nif x > 1:\n    y = 1",
        2,
        4,
        "shape",
        "a condition needs one number, but this is a tensor of shape (2,)",
    ),
    ("comparison", "y = x < 2", 1, 5, "no_output", "not a value to differentiate"),
    ("comparison-in", "y = x in [1.0]", 1, 5, "no_output", "the output is True or False"),
    ("dict", "y = {(1,): 2}", 1, 6, "unsupported", "keys here are strings or numbers"),
    ("string", "x = 'abc'", 1, 5, "no_output", "the output is a string"),
    ("f-string", "y = f'{x}'", 1, 5, "no_output", "the output is a string"),
    ("bytes", "y = b'x'", 1, 5, "unsupported", "a bytes literal is not part of the language"),
    ("true", "y = True", 1, 5, "no_output", "the output is True or False"),
    ("complex", "y = 2j", 1, 5, "unsupported", "complex numbers"),
    ("modulo", "y = x % 2", 1, 5, "unsupported", "the operator % works on numbers here"),
    ("floor-division", "y = x // 2", 1, 5, "unsupported", "the operator //"),
    ("bitwise-not", "y = ~x", 1, 5, "unsupported", "the operator ~ is not part"),
    ("walrus", "y = (z := 2)", 1, 6, "unsupported", "the := operator"),
    ("starred", "y = max(*x)", 1, 9, "shape", "cannot be looped over"),
    ("kwargs", "y = sum(x, **k)", 1, 14, "unsupported", "**unpacking"),
    ("annotated", "y: int = 2", 1, 1, "unsupported", "an annotated assignment"),
    (
        "unpacking-too-many",
        "a, b = 1.0, 2.0, 3.0",
        1,
        1,
        "arguments",
        "3 values cannot be unpacked into 2 names",
    ),
    ("for-over-a-number", "for v in 3.0:\n    y = v", 1, 10, "shape", "cannot be looped over"),
    ("for-else", "for i in range(2):\n    y = 1\nelse:\n    y = 2", 1, 1, "unsupported", "else"),
    ("del", "x = 1\ndel x", 2, 1, "unsupported", "del is not part of the language"),
    ("with", "with x:\n    y = 1", 1, 1, "unsupported", "only `with torch.no_grad():`"),
    ("try", "try:\n    y = 1\nexcept E:\n    y = 2", 1, 1, "unsupported", "try is not part"),
    ("global", "global x", 1, 1, "unsupported", "global is not part"),
    ("nonlocal", "x = 1\nnonlocal x", 2, 1, "unsupported", "nonlocal is not part"),
    ("return", "return 1", 1, 1, "unsupported", "return can only stand inside a def"),
    ("break-outside-a-loop", "x = 1\nif x > 0:\n    break", 3, 5, "unsupported", "break can only"),
    (
        "yield",
        "def f(x):\n    y = yield x\n    return y\nz = f(1.0)",
        2,
        9,
        "unsupported",
        "yield is not part of the language",
    ),
    (
        "recursion",
        "def f(x):\n    return f(x)\ny = f(1.0)",
        2,
        12,
        "recursion",
        "f calls itself; recursion is not supported",
    ),
    ("decorator", "@dec\ndef f(t):\n    return t", 1, 2, "unsupported", "decorators are not"),
    (
        "star-args",
        "def f(*ts):\n    return 1.0",
        1,
        1,
        "unsupported",
        "a function's arguments must be plain names",
    ),
    (
        "too-many-arguments",
        "def f(t):\n    return t\ny = f(1.0, 2.0)",
        3,
        5,
        "arguments",
        "f() takes 1 argument but 2 were given",
    ),
    (
        "no-such-argument",
        "def f(t):\n    return t\ny = f(s=2.0)",
        3,
        5,
        "arguments",
        "f() has no argument 's'",
    ),
    ("grad-of-a-number", "y = grad(2.0)(x)", 1, 10, "arguments", "grad(f) takes a function"),
    (
        "backward-as-a-value",
        "L = x * 2\nz = L.backward() + 1",
        2,
        5,
        "invalid",
        "+ is not defined between None",
    ),
    (
        "assign-to-an-index",
        "x = [1.0, 2.0]\nx[0] = 3.0",
        2,
        1,
        "unsupported",
        "assigning to an index (x[i] = …) is not part of the language",
    ),
    ("call-of-call", "y = x[0](1)", 1, 5, "index", "too many indices"),
    (
        "index-with-a-value",
        "xs = [1, 2]\ni = xs[0] * 2\nxs[i]",
        3,
        4,
        "index",
        "'i' is not whole numbers, so it cannot index",
    ),
    ("index-with-a-fraction", "xs = [1, 2]\nxs[0.5]", 2, 4, "static", "not a fraction"),
    ("index-with-an-empty-list", "xs = [1, 2]\nxs[[]]", 2, 4, "index", "an empty list of indices"),
    ("index-with-none", "xs = [1, 2]\nxs[None]", 2, 4, "unsupported", "None (a new axis)"),
    (
        "keyword-out",
        "x = [1, 2]\nx.sum(axis=0, out=2)",
        2,
        15,
        "keyword",
        "sum() has no keyword 'out'; sum takes axis, keepdims",
    ),
    (
        "keyword-dims",
        "z = [1, 2]\nsoftmax(z, dims=0)",
        2,
        12,
        "keyword",
        "softmax() has no keyword 'dims'; softmax takes axis",
    ),
    ("keyword-on-unary", "y = exp(x, axis=0)", 1, 12, "keyword", "exp() has no keyword 'axis'"),
    ("keepdims-not-bool", "y = sum(x, keepdims=1)", 1, 21, "keyword", "keepdims is True or False"),
    (
        "broadcast",
        "a = zeros(2, 3)\nb = zeros(4)\nc = a + b",
        3,
        5,
        "shape",
        "shapes (2, 3) and (4,) do not broadcast",
    ),
    (
        "matmul",
        "a = zeros(2, 3)\nb = zeros(2, 3)\nc = a @ b",
        3,
        5,
        "shape",
        "shapes (2, 3) and (2, 3) cannot be multiplied with @",
    ),
    ("matmul-scalar", "x = 2\ny = x @ x", 2, 5, "shape", "@ needs tensors, not scalars"),
    ("log0", "log(0)", 1, 1, "non_finite", "log(0) gives an infinite value"),
    ("exp1000", "y = exp(1000)", 1, 5, "non_finite", "exp(1000) gives an infinite value"),
    ("div0", "x = 1\ny = x + 1/0", 2, 9, "non_finite", "1/0 gives an infinite value"),
    ("0div0", "y = 0/0", 1, 5, "non_finite", "0/0 gives NaN"),
    ("sqrt-1", "y = sqrt(-1)", 1, 5, "non_finite", "sqrt(-1) gives NaN"),
    ("cube-root-negative", "y = (-8)**(1/3)", 1, 5, "non_finite", "(-8)**(1/3) gives NaN"),
    ("log-of-a-leaf", "x = 0\nL = 2 * log(x)", 2, 9, "non_finite", "log(x) gives"),
    ("overflow", "x = 1e308\ny = x * 10", 2, 5, "non_finite", "x * 10 gives an infinite value"),
    ("huge-literal", "x = 1e400", 1, 5, "non_finite", "too large for a float64"),
    ("augmented-matmul", "x = 1\nx @= 2", 2, 1, "unsupported", "only x += e, x -= e, x *= e"),
    ("augmented-index", "x = [1.0]\nx[0] += 1", 2, 1, "unsupported", "on a name"),
    ("lone-surrogate", "x = 1\ny = \ud800", 2, 5, "bad_character", "unpaired surrogate"),
    ("nul", "x = 1\x00", 1, 6, "bad_character", "control character (U+0000)"),
    ("zero-width-space", "x = \u200bx", 1, 5, "syntax", "U+200B"),
    ("empty", "   \n  ", 1, 1, "empty", "the program is empty"),
    ("only-comments", "# nothing\n# here", 1, 1, "empty", "no statements"),
    ("seed-negative", "seed(-1)\nx = randn(2)", 1, 6, "static", "seed takes a whole number"),
    ("seed-not-a-number", "seed(x)", 1, 6, "static", "a whole number is needed here"),
    ("zero-step", "for i in range(0, 4, 0):\n    y = 1", 1, 10, "invalid", "step cannot be 0"),
    ("slice-zero-step", "x = [1, 2]\nx[::0]", 2, 1, "index", "a slice step cannot be 0"),
    ("index-out-of-range", "x = [1, 2]\ny = x[2]", 2, 5, "index", "index 2 is out of range"),
    ("empty-list", "x = []", 1, 5, "bad_list", "an empty list"),
    ("ragged-list", "x = [[1, 2], [3]]", 1, 5, "bad_list", "different lengths"),
    (
        "list-of-names-as-a-value",
        "xs = [x, 2.0]\nL = xs * 2",
        2,
        5,
        "list",
        "the output is a list of 4 values, not one value (a tensor)",
    ),
    (
        "labels-not-int",
        "z = [1.0, 2.0]\ncross_entropy(z, 0.5)",
        2,
        18,
        "labels",
        "class labels are whole numbers",
    ),
    (
        "label-out-of-range",
        "z = [1.0, 2.0]\ncross_entropy(z, 2)",
        2,
        1,
        "labels",
        "label 2 is not a class of 2",
    ),
    (
        "labels-used-as-value",
        "t = 1\nz = [1.0, 2.0]\ny = cross_entropy(z, t) + t",
        3,
        27,
        "labels",
        "class labels for cross_entropy",
    ),
    ("negative-shape", "x = zeros(-1)", 1, 5, "shape", "negative sizes"),
    ("reshape-size", "x = zeros(4).reshape(3, 2)", 1, 5, "shape", "cannot reshape (4,)"),
    (
        "axis-out-of-range",
        "x = zeros(2, 2)\ny = x.sum(axis=5)",
        2,
        5,
        "axis",
        "axis 5 is out of range",
    ),
    ("wrong-arity", "y = exp(x, x)", 1, 5, "arguments", "exp takes one value"),
]


@pytest.mark.parametrize(
    ("src", "line", "column", "code", "words"),
    [c[1:] for c in REFUSED],
    ids=[c[0] for c in REFUSED],
)
def test_refused_with_position_and_message(
    src: str, line: int, column: int, code: str, words: str
) -> None:
    e = refused(src)
    assert (e.line, e.column, e.code) == (line, column, code), e.message
    assert words in e.message
    assert e.limit is None and e.status == 400
    d = e.to_dict()["error"]
    assert (d["line"], d["column"]) == (line, column) and d["message"] == e.message
    assert "Traceback" not in e.message and "ast." not in e.message


# Refused before code as students already write it (issue 14), and now run: an int name as an
# index, index lists (their gradient added back at each index), PyTorch's dim=, imports, and
# def, lambda, comprehensions, while, if, unpacking, loops over lists, pass, += and *=,
# backward() and print. Each is Python as written, so PyTorch runs the same text (torch_run)
# and must give the same value and gradient of x.
# (id, source, values, the output's value, grads)
NOW_RUN: list[tuple[str, str, dict[str, Any], float, dict[str, Any]]] = [
    (
        "index-with-an-int-name",
        "xs = [1.0, 2.0]\ni = 1\nL = xs[i] * 3",
        {},
        6.0,
        {"xs": [0.0, 3.0]},
    ),
    ("index-with-a-list", "xs = [1.0, 2.0]\nL = sum(xs[[0, 1, 1]])", {}, 5.0, {"xs": [1.0, 2.0]}),
    (
        "keyword-dim",
        "z = [1.0, 1.0]\nL = softmax(z, dim=0)[0]",
        {},
        0.5,
        {"z": [0.25, -0.25]},
    ),
    (
        "import-torch",
        "import torch\nx = torch.tensor(2.0, requires_grad=True)\nL = x * x",
        {},
        4.0,
        {"x": 4.0},
    ),
    # f(x) = x² + 1: L = f(x)·f(2) = 5x² + 5, dL/dx = 10x
    ("lambda", "f = lambda t: t * t + 1\nL = f(x) * f(2.0)", {"x": 1.5}, 16.25, {"x": 15.0}),
    # L = 3x + (x² + x) = x² + 4x
    (
        "def-with-a-default-and-a-keyword",
        "def f(a, b=2.0):\n    c = a * b\n    return c + a\nL = f(x) + f(x, b=x)",
        {"x": 1.5},
        8.25,
        {"x": 7.0},
    ),
    ("list-comprehension", "L = sum([x * i for i in range(4)])", {"x": 1.5}, 9.0, {"x": 6.0}),
    ("generator", "L = sum(x ** i for i in range(3))", {"x": 1.5}, 4.75, {"x": 4.0}),
    # 1.5, 3, 6, 12: three doublings, dL/dx = 8
    ("while", "y = x\nwhile y < 10:\n    y = y * 2\nL = y", {"x": 1.5}, 12.0, {"x": 8.0}),
    (
        "while-true-with-break",
        "y = x\nwhile True:\n    y = y * 2\n    if y > 5:\n        break\nL = y",
        {"x": 1.5},
        6.0,
        {"x": 4.0},
    ),
    (
        "if-else",
        "if x > 1:\n    y = x * x\nelse:\n    y = -x\nL = y",
        {"x": 1.5},
        2.25,
        {"x": 3.0},
    ),
    (
        "if-else-other-branch",
        "if x > 1:\n    y = x * x\nelse:\n    y = -x\nL = y",
        {"x": 0.5},
        -0.5,
        {"x": -1.0},
    ),
    ("if-expression", "L = x * 3 if x > 2 else x * x", {"x": 1.5}, 2.25, {"x": 3.0}),
    ("tuple-target", "a, b = x, x * 2\nL = a * b", {"x": 1.5}, 4.5, {"x": 6.0}),
    (
        "for-over-list",
        "L = x * 0\nfor w in [1.0, 2.0, 3.0]:\n    L = L + w * x",
        {"x": 1.5},
        9.0,
        {"x": 6.0},
    ),
    (
        "zip-and-enumerate",
        "L = x * 0\nfor i, (w, v) in enumerate(zip([1.0, 2.0], [x, x * x])):\n"
        "    L = L + i * w * v",
        {"x": 1.5},
        4.5,
        {"x": 6.0},
    ),
    ("pass", "y = x * 2\nif y > 0:\n    pass\nL = y", {"x": 1.5}, 3.0, {"x": 2.0}),
    ("augmented", "L = x * 1.0\nL += x * x", {"x": 1.5}, 3.75, {"x": 4.0}),
    ("augmented-mul", "L = x + 1\nL *= x", {"x": 1.5}, 3.75, {"x": 4.0}),
    ("list-of-names", "xs = [x, 2.0]\nL = sum(xs) * x", {"x": 1.5}, 5.25, {"x": 5.0}),
    (
        "backward-and-print",
        "import torch\nx = torch.tensor(1.5, requires_grad=True)\nL = x * x\nL.backward()\n"
        "print(x.grad)",
        {},
        2.25,
        {"x": 3.0},
    ),
]

# The rows PyTorch can run as they are written (the others use gradtrace's own names).
TORCH_TOO = {c[0] for c in NOW_RUN[4:]}


def torch_run(src: str, values: dict[str, float]) -> tuple[float, float]:
    """L and dL/dx when PyTorch runs the same text (x a float64 leaf, or the program's own)."""
    env: dict[str, Any] = {
        k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in values.items()
    }
    exec(src, env)  # the reference: PyTorch running the same text  # noqa: S102
    L, x = env["L"], env["x"]
    if x.grad is None:
        L.backward()
    return float(L), float(x.grad)


@pytest.mark.parametrize(
    ("name", "src", "values", "value", "grads"), NOW_RUN, ids=[c[0] for c in NOW_RUN]
)
def test_what_the_language_once_refused_now_runs(
    name: str, src: str, values: dict[str, Any], value: float, grads: dict[str, Any]
) -> None:
    d = run(src, values).to_dict()
    assert output(d)["value"] == pytest.approx(value, rel=1e-12)
    assert output(d)["name"] == "L"
    for leaf, g in grads.items():
        assert d["grads"][leaf] == pytest.approx(g, rel=1e-12)
    if name in TORCH_TOO:
        assert torch_run(src, values) == pytest.approx((value, grads["x"]), rel=1e-12)


def test_backward_and_print_show_what_pytorch_prints() -> None:
    from engine.program import run_program

    printed = run_program(NOW_RUN[-1][1]).printed
    assert [(p["line"], p["text"]) for p in printed] == [(5, "tensor(3.)")]


@pytest.mark.parametrize(
    "src",
    ["while True:\n    y = 1", "y = x\nwhile y > 0:\n    z = 1"],
    ids=["while-true", "while-a-free-name"],
)
def test_a_loop_that_never_ends_stops_at_the_loop_limit(src: str) -> None:
    start = time.perf_counter()
    e = refused(src)
    assert time.perf_counter() - start < 3.0  # far within a request's deadline
    assert (e.code, e.limit, e.status) == ("too_large", "max_loop_iterations", 413), e.message
    assert (e.line, e.column) == (src.count("\n"), 1)
    assert "10,000 iterations" in e.message and "(max_loop_iterations)" in e.message


def test_positions_point_inside_the_source() -> None:
    for _, src, *_ in REFUSED:
        e = refused(src)
        lines = re.split(r"\r\n|\r|\n", src)
        assert e.line is not None and 1 <= e.line <= len(lines)
        assert e.column is not None and 1 <= e.column <= len(lines[e.line - 1]) + 1
        if e.end_line is not None:
            assert (e.end_line, e.end_column) >= (e.line, e.column)


BIDI = [
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
]


@pytest.mark.parametrize("ch", BIDI, ids=[f"U+{ord(c):04X}" for c in BIDI])
def test_bidi_controls_are_refused_where_they_stand(ch: str) -> None:
    # in code, and even in a comment (Trojan Source hides code in comments)
    e = refused(f"x = 1\n损失 = x{ch} * 2")
    assert (e.line, e.column, e.code) == (2, 7, "bidi_control")
    assert f"U+{ord(ch):04X}" in e.message
    e = refused(f"x = 1  # {ch}comment\ny = x")
    assert (e.line, e.column, e.code) == (1, 10, "bidi_control")


def test_positions_follow_python_line_breaks() -> None:
    # \r\n and a lone \r end lines for Python; U+2028 in a comment does not
    assert (refused("x = 1\r\ny = log(0)").line, refused("x = 1\r\ny = log(0)").column) == (2, 5)
    e = refused("x = 1\ry = \u202e")
    assert (e.line, e.column) == (2, 5)
    e = refused("# a\u2028b\ny = log(0)")
    assert (e.line, e.column) == (2, 5) and e.message.startswith("log(0) gives")


def test_error_messages_name_the_operation_text() -> None:
    # the message starts with the source text of the operation that went wrong
    e = refused("x = 0\ny = 3\nz = y * log(x) + 1")
    assert e.message.startswith("log(x) gives an infinite value")
    assert (e.line, e.column, e.end_line, e.end_column) == (3, 9, 3, 15)


def test_too_many_digits_says_so() -> None:
    e = refused("x = " + "1" * 5000)
    assert e.code == "syntax" and "too many digits" in e.message
    assert "sys." not in e.message
