"""Distinct nodes get distinct labels (issue 16): a repeated expression is numbered with a
subscript (`sin(h)₁`, `sin(h)₂`), `L = h` labels the output L, and every label the trace holds
is unique — in the gallery, in random programs, and as the drawing cuts them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from engine.autograd.value import Value
from engine.drawing.style import LABEL_CHARS as DRAWN_CHARS
from engine.program import run
from engine.tracing.labels import LABEL_CHARS, assign_labels, bracketed, shown
from engine.tracing.record import trace
from tests.strategies import bounded, build_engine, get_run, programs, to_source
from tests.test_trace_properties import all_nodes

GALLERY = tomllib.loads(
    (Path(__file__).resolve().parents[1] / "app" / "examples.toml").read_text("utf-8")
)["example"]
DIAMONDS = "x = 0.5\nh = x\nfor i in range(12):\n    h = sin(h) + cos(h)\nL = h"


def labels(source: str, values: dict[str, Any] | None = None) -> list[str]:
    return [n["label"] for n in run(source, values).to_dict()["nodes"]]


def assert_unique(found: list[str]) -> None:
    assert len(set(found)) == len(found), sorted(x for x in found if found.count(x) > 1)
    cut = [shown(x) for x in found]  # and as the drawing shows them
    assert len(set(cut)) == len(cut), sorted(x for x in cut if cut.count(x) > 1)


# --- the three cases of the issue --------------------------------------------------------------


def test_a_twelve_step_chain_numbers_each_sin_and_cos_by_its_iteration() -> None:
    found = labels(DIAMONDS)
    assert found[:7] == ["x", "sin(h)₁", "cos(h)₁", "h", "sin(h)₂", "cos(h)₂", "h_2"]
    assert [x for x in found if x.startswith("sin")] == [f"sin(h){s}" for s in SUBS]
    assert found[-3:] == ["sin(h)₁₂", "cos(h)₁₂", "L"]
    assert_unique(found)


SUBS = ["₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉", "₁₀", "₁₁", "₁₂"]


def test_the_max_example_tells_its_two_products_apart_with_brackets() -> None:
    d = run("(x*y)*max(x*y, z)", {"x": 2, "y": 3, "z": 4}).to_dict()
    assert [n["label"] for n in d["nodes"]] == [
        "x", "y", "(x*y)₁", "(x*y)₂", "z", "max(x*y, z)", "out",
    ]  # fmt: skip
    assert [n["text"] for n in d["nodes"] if n["op"] == "mul"][:2] == ["x*y", "x*y"]
    rules = {t["rule"] for st in d["steps"] for t in st["terms"]}
    assert {"ū·(x*y)₁", "ū·[(x*y)₂ ≥ z]"} <= rules, rules  # never `((x*y)₁)`
    assert not any("((" in r for r in rules), rules


def test_the_output_of_L_equals_h_is_labelled_L_and_keeps_its_id() -> None:
    before = run(DIAMONDS.rsplit("\n", 1)[0] + "\nh").to_dict()  # the same graph, output h
    d = run(DIAMONDS).to_dict()
    assert d["output"] == before["output"] == f"n{len(d['nodes']) - 1}"
    assert [n["id"] for n in d["nodes"]] == [n["id"] for n in before["nodes"]]
    out = d["nodes"][-1]
    assert (out["label"], out["name"]) == ("L", "L")
    assert before["nodes"][-1]["label"] == "h_12"
    assert d["steps"][0]["node"] == out["id"]


def test_an_alias_of_a_leaf_or_of_a_middle_value_keeps_the_first_name() -> None:
    d = run("x = 2\nL = x").to_dict()
    assert [(n["label"], n["kind"]) for n in d["nodes"]] == [("x", "leaf")]
    assert d["grads"] == {"x": 1.0}  # the leaf's grad stays under its own name
    assert labels("x = 2\na = x*3\nb = a\nL = b*b") == ["x", "3", "a", "L"]
    assert labels("x = 2\na = x*3\nL = a\nL + 1") == ["x", "3", "a", "1", "out"]


# --- the rule behind the labels ------------------------------------------------------------------


def test_only_repeated_texts_are_numbered_and_names_keep_x_2() -> None:
    assert labels("x = 1\nx = x*2\nx = x*3") == ["x", "2", "x_2", "3", "x_3"]
    assert labels("sin(x) + cos(x)", {"x": 1}) == ["x", "sin(x)", "cos(x)", "out"]
    assert labels("x**2 + y**2", {"x": 1, "y": 2}) == [
        "x", "2₁", "x**2", "y", "2₂", "y**2", "out",
    ]  # fmt: skip


def test_a_subscript_follows_a_bracket_or_a_name_never_half_an_expression() -> None:
    assert [bracketed(t) for t in ["sin(h)", "xs[t]", "2", "x.sum()", "[1, 2]"]] == [
        "sin(h)", "xs[t]", "2", "x.sum()", "[1, 2]",
    ]  # fmt: skip
    assert [bracketed(t) for t in ["x*y", "-x", "sin(h) + cos(h)", "(a)*(b)"]] == [
        "(x*y)", "(-x)", "(sin(h) + cos(h))", "((a)*(b))",
    ]  # fmt: skip


def test_long_texts_the_drawing_would_cut_alike_are_numbered_within_its_width() -> None:
    assert LABEL_CHARS == DRAWN_CHARS
    x = Value(np.float64(1.0), name="x")
    nodes = [x, x * 2, x * 3, x * 4]
    for node, end in zip(nodes[1:], "abb", strict=True):
        node.text = "sigmoid(w1*x + w2*x + w3*x + " + end + ")"  # alike for 28 characters
    assign_labels(nodes)
    found = [n.label or "" for n in nodes]
    assert found == [
        "x",
        "sigmoid(w1*x + w2*x + …₁",
        "sigmoid(w1*x + w2*x + …₂",
        "sigmoid(w1*x + w2*x + …₃",
    ]
    assert all(len(x) <= LABEL_CHARS for x in found)
    assert_unique(found)


def test_the_python_api_numbers_repeated_ops() -> None:
    a = Value(np.float64(2.0), name="a")
    b = a * a * a
    t = trace(b)
    assert [n.label for n in t.nodes] == ["a", "mul₁", "mul₂"]


def test_a_name_that_reads_like_a_numbered_label_is_never_shared() -> None:
    a = Value(np.float64(2.0), name="mul₁")
    nodes = [a, a * 3, a * 4]
    assign_labels(nodes)
    assert [n.label for n in nodes] == ["mul₁", "mul₂", "mul₃"]


# --- every trace ---------------------------------------------------------------------------------


def test_every_gallery_example_labels_each_node_once() -> None:
    for example in GALLERY:
        found = labels(example["source"], example.get("values") or None)
        assert_unique(found)


LOOP = st.tuples(
    st.sampled_from(["sin(h)", "cos(h)", "h*w", "h*2", "tanh(h)", "h + 1", "i*h"]),
    st.sampled_from(["sin(h)", "h*w", "exp(-h)", "h*2", "w"]),
    st.integers(1, 6),
    st.booleans(),
)


@bounded(60)
@given(LOOP)
def test_labels_are_unique_in_loops_with_repeated_expressions(case: tuple[Any, ...]) -> None:
    a, b, n, alias = case
    source = f"w = 0.5\nh = w\nfor i in range({n}):\n    h = {a} + {b}\n" + (
        "L = h" if alias else "h"
    )
    found = labels(source)
    assert_unique(found)
    assert found[-1] == ("L" if alias else "h" if n == 1 else f"h_{n}")


@bounded(60)
@given(st.one_of(programs(tensors=False, max_ops=10), programs(tensors=True, max_ops=6)))
def test_labels_are_unique_in_random_programs(prog: Any) -> None:
    _, out, made = build_engine(prog)
    assert_unique([n["label"] for n in trace(out, nodes=all_nodes(made)).to_dict()["nodes"]])
    source, values = to_source(prog)
    assert_unique([n["label"] for n in get_run()(source, values=values).to_dict()["nodes"]])
