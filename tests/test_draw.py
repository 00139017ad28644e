"""The drawing (engine/drawing/): the DOT text (ids, classes, marks, escaping) and the SVG from
real `dot`."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from engine import drawing as draw
from engine import run
from engine.drawing.collapse import loop_iterations
from engine.drawing.geometry import PLACEHOLDER, without_texts
from engine.drawing.graphviz import graphviz_env
from engine.drawing.style import EMPTY, HEAT_COLS, STYLE
from engine.drawing.svg import SVG_NS
from engine.drawing.tensors import heat_grid
from engine.drawing.text import escape_dot, escape_html, shorten

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")

# The lesson's example, exactly as docs/trace-format.md shows it (with n1 and n3 filled in).
LESSON: dict[str, Any] = {
    "version": 1,
    "output": "n3",
    "value": 8.0,
    "shape": [],
    "seeded_with_ones": False,
    "options": {"accumulate": "add", "order": "dfs"},
    "free": [
        {"name": "x", "value": 2.0, "given": True},
        {"name": "y", "value": 3.0, "given": True},
    ],
    "nodes": [
        {
            "id": "n0",
            "name": "x",
            "label": "x",
            "kind": "leaf",
            "op": None,
            "inputs": [],
            "shape": [],
            "value": 2.0,
            "grad": 4.0,
            "span": None,
            "text": "x",
        },
        {
            "id": "n1",
            "name": "y",
            "label": "y",
            "kind": "leaf",
            "op": None,
            "inputs": [],
            "shape": [],
            "value": 3.0,
            "grad": 2.0,
            "span": None,
            "text": "y",
        },
        {
            "id": "n2",
            "name": "u",
            "label": "u",
            "kind": "op",
            "op": "mul",
            "symbol": "*",
            "inputs": ["n0", "n1"],
            "shape": [],
            "value": 6.0,
            "grad": 1.0,
            "span": None,
            "text": "x*y",
        },
        {
            "id": "n3",
            "name": "L",
            "label": "L",
            "kind": "op",
            "op": "add",
            "symbol": "+",
            "inputs": ["n2", "n0"],
            "shape": [],
            "value": 8.0,
            "grad": 1.0,
            "span": None,
            "text": "u + x",
        },
    ],
    "topo": ["n0", "n1", "n2", "n3"],
    "steps": [
        {"node": "n3", "kind": "seed", "grads": {"n3": 1.0}, "terms": []},
        {
            "node": "n3",
            "kind": "backward",
            "op": "add",
            "upstream": 1.0,
            "grads": {"n2": 1.0, "n0": 1.0},
            "terms": [
                {
                    "input": "n2",
                    "arg": 0,
                    "rule": "ū",
                    "local": 1.0,
                    "contribution": 1.0,
                    "before": 0.0,
                    "after": 1.0,
                },
                {
                    "input": "n0",
                    "arg": 1,
                    "rule": "ū",
                    "local": 1.0,
                    "contribution": 1.0,
                    "before": 0.0,
                    "after": 1.0,
                },
            ],
        },
        {
            "node": "n2",
            "kind": "backward",
            "op": "mul",
            "upstream": 1.0,
            "grads": {"n0": 4.0, "n1": 2.0},
            "terms": [
                {
                    "input": "n0",
                    "arg": 0,
                    "rule": "ū·y",
                    "local": 3.0,
                    "contribution": 3.0,
                    "before": 1.0,
                    "after": 4.0,
                },
                {
                    "input": "n1",
                    "arg": 1,
                    "rule": "ū·x",
                    "local": 2.0,
                    "contribution": 2.0,
                    "before": 0.0,
                    "after": 2.0,
                },
            ],
        },
    ],
    "grads": {"x": 4.0, "y": 2.0},
}

HOSTILE = [
    'a"]; x [label=<<b>',
    "</text><script>alert(1)</script>",
    "&amp; &#60; <!-- -->",
    "\\N \\G \\L back\\slash",
    "名字\u0000\u0007\n\ttab",
    "]]> <![CDATA[",
]


def dot_node_line(dot: str, nid: str) -> str:
    return next(line for line in dot.splitlines() if line.strip().startswith(f"{nid} ["))


def attrs_of(dot_line: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="([^"]*)"', dot_line.split("label=")[0]))


# ---- numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (4.0, "4"),
        (-10.0, "-10"),
        (0.5, "0.5"),
        (1 / 3, "0.3333"),
        (2 / 3, "0.6667"),
        (123456.0, "1.235e5"),
        (999999.0, "1e6"),
        (1e-5, "1e-5"),
        (1234.0, "1234"),
        (9999.6, "1e4"),
        (0.0001234, "0.0001234"),
        (1.0625, "1.063"),
        (-1.0625, "-1.063"),
        (12345.0, "1.235e4"),
        (6.8813735870195432, "6.881"),
        (float("inf"), "inf"),
        (None, "—"),
    ],
)
def test_fmt_uses_four_significant_digits_and_rounds_ties_like_javascript(x, text):
    assert draw.fmt(x) == text


# ---- escaping --------------------------------------------------------------------------------


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_html_leaves_no_markup_or_quotes(text):
    out = escape_html(text)
    assert not set(out) & set("<>\"'")
    assert "\n" not in out and "\x00" not in out
    # Every & starts an entity we wrote.
    assert re.fullmatch(r"([^&]|&(amp|lt|gt|quot|#39);)*", out)


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_dot_cannot_end_the_string_or_fire_graphviz_escapes(text):
    out = escape_dot(text)
    # No unescaped quote; every backslash is doubled.
    assert not re.search(r'(?<!\\)"', out.replace("\\\\", ""))
    assert re.fullmatch(r'([^\\"]|\\\\|\\")*', out)


def hostile_trace(label: str) -> dict[str, Any]:
    tr = copy.deepcopy(LESSON)
    for node in tr["nodes"]:
        node["label"] = label + node["id"]
        node["symbol"] = label
        node["text"] = label
    return tr


@pytest.mark.parametrize("label", HOSTILE)
def test_hostile_labels_cannot_break_out_of_the_dot_text(label):
    dot = draw.to_dot(hostile_trace(label), 1, legend=True)
    # Each node is still one statement with our own id and class, and no raw markup survives.
    for nid in ("n0", "n1", "n2", "n3"):
        line = dot_node_line(dot, nid)
        assert attrs_of(line)["id"] == nid
    assert "<script" not in dot and "<b>" not in dot and "<!--" not in dot


@needs_dot
@pytest.mark.parametrize("label", HOSTILE[:3])
def test_hostile_labels_come_out_of_graphviz_as_plain_text(label):
    svg = draw.render_svg(hostile_trace(label), 2, legend=True)
    root = ET.fromstring(svg)
    assert not list(root.iter(SVG + "script"))
    texts = " ".join(t.text or "" for t in root.iter(SVG + "text"))
    assert shorten(label.replace("\n", " ") + "n2").split("…")[0][:5] in texts


# ---- DOT structure ---------------------------------------------------------------------------


def test_every_trace_node_is_one_dot_node_with_its_trace_id_and_kind_class():
    dot = draw.to_dot(LESSON)
    for node in LESSON["nodes"]:
        attrs = attrs_of(dot_node_line(dot, node["id"]))
        assert attrs["id"] == node["id"]
        assert node["kind"] in attrs["class"].split()


def test_every_use_is_its_own_edge_with_consumer_and_argument_in_the_id():
    dot = draw.to_dot(LESSON)
    edges = re.findall(r'"(n\d+)" -> "(n\d+)" \[id="(e-n\d+-\d+)" class="([^"]*)"', dot)
    assert {(a, b, e) for a, b, e, _ in edges} == {
        ("n0", "n2", "e-n2-0"),
        ("n1", "n2", "e-n2-1"),
        ("n2", "n3", "e-n3-0"),
        ("n0", "n3", "e-n3-1"),
    }
    classes = {e: c.split() for _, _, e, c in edges}
    assert {"from-n0", "to-n3", "arg-1", "step-1"} <= set(classes["e-n3-1"])


def test_x_times_x_draws_two_edges_into_the_mul_and_both_carry_gradient():
    trace = run("x*x", {"x": 3}).to_dict()
    dot = draw.to_dot(trace, 1)
    assert dot.count('"n0" -> "n1"') == 2
    assert 'id="e-n1-0"' in dot and 'id="e-n1-1"' in dot
    assert len(re.findall(r'class="[^"]*\bactive\b', dot)) == 2
    assert dot.count("← 3") == 2


def test_a_step_marks_the_current_node_the_active_edges_and_the_changed_grads():
    dot = draw.to_dot(LESSON, 2)
    cls = {
        nid: attrs_of(dot_node_line(dot, nid))["class"].split() for nid in ("n0", "n1", "n2", "n3")
    }
    assert "current" in cls["n2"] and "current" not in cls["n3"]
    assert "changed" in cls["n0"] and "changed" in cls["n1"] and "changed" not in cls["n3"]
    assert "▶ u = 6" in dot_node_line(dot, "n2")  # a symbol, not only a colour
    assert "grad 4" in dot_node_line(dot, "n0")  # the grad after step 2
    edge_cls = dict(re.findall(r'id="(e-n\d+-\d+)" class="([^"]*)"', dot))
    assert "active" in edge_cls["e-n2-0"] and "active" in edge_cls["e-n2-1"]
    assert "sent" in edge_cls["e-n3-0"] and "sent" in edge_cls["e-n3-1"]
    assert re.search(r'id="e-n2-0"[^\n]*penwidth=3', dot)  # thicker pen, not only colour


def test_step_zero_seeds_the_output_and_no_edge_is_active_yet():
    dot = draw.to_dot(LESSON, 0)
    assert "current" in attrs_of(dot_node_line(dot, "n3"))["class"].split()
    assert "grad 0" in dot_node_line(dot, "n0")
    assert " active" not in dot
    assert dot.count(" future") == 4


def test_out_of_range_steps_clamp():
    assert draw.to_dot(LESSON, 99) == draw.to_dot(LESSON, 2)
    assert draw.to_dot(LESSON, -5) == draw.to_dot(LESSON, 0)
    assert draw.clamp_step(LESSON, None) == 2


def test_cells_are_as_wide_as_the_widest_number_they_will_show():
    # x.grad goes 0 → 1 → 4; the cell width is fixed by the widest, so nothing jumps.
    widths = {draw.to_dot(LESSON, k).split('id="n0"')[1].split("WIDTH=")[2][:5] for k in range(3)}
    assert len(widths) == 1


def test_constants_are_small_dashed_nodes_and_their_edges_carry_no_gradient():
    trace = run("2*x + 1", {"x": 5}).to_dict()
    dot = draw.to_dot(trace)
    consts = [n["id"] for n in trace["nodes"] if n["kind"] == "const"]
    assert len(consts) == 2
    for nid in consts:
        line = dot_node_line(dot, nid)
        assert "const" in attrs_of(line)["class"].split() and "dashed" in line
    assert len(re.findall(r'class="[^"]*nograd', dot)) == 2


def test_tensors_show_a_shape_badge_small_ones_a_matrix_large_ones_a_heat_map():
    trace = run("W = randn(2, 3)\nV = randn(8, 9)\nL = (W.sum() * V).sum()").to_dict()
    lay = draw.build(trace, None)
    w = next(n for n in trace["nodes"] if n["label"] == "W")
    v = next(n for n in trace["nodes"] if n["label"] == "V")
    assert "[2×3]" in dot_node_line(lay.dot, w["id"])
    assert [r for r in lay.roles[w["id"]] if r.startswith("v-")] == [f"v-{i}" for i in range(6)]
    assert "[8×9]" in dot_node_line(lay.dot, v["id"])
    assert [k for k, _ in lay.heat[v["id"]]] == ["v", "g"]


def test_a_graph_over_the_drawing_limit_is_refused_with_a_message():
    big = copy.deepcopy(LESSON)
    big["nodes"] = [
        {
            "id": f"n{i}",
            "name": None,
            "label": f"c{i}",
            "kind": "const",
            "op": None,
            "inputs": [],
            "shape": [],
            "value": 1.0,
            "grad": None,
        }
        for i in range(draw.MAX_DRAWN_NODES + 1)
    ]
    with pytest.raises(draw.DrawError) as err:
        draw.to_dot(big)
    assert err.value.code == "too_large" and str(draw.MAX_DRAWN_NODES) in err.value.message
    with pytest.raises(draw.DrawError):
        draw.to_dot(LESSON, max_nodes=3)


def test_a_heavily_shared_value_is_drawn_once_plus_a_small_copy_per_use():
    src = "w = 0.9\nh = 1.0\nfor i in range(20):\n    h = h*w\nL = h"
    trace = run(src).to_dict()
    dot = draw.to_dot(trace)
    w = next(n for n in trace["nodes"] if n["label"] == "w")
    assert len(re.findall(rf'class="copy copy-of-{w["id"]}"', dot)) == 20
    assert dot.count(f'{w["id"]} [id="{w["id"]}"') == 1


# ---- SVG from Graphviz -----------------------------------------------------------------------


@needs_dot
@pytest.mark.parametrize("step", [None, 0, 1, 2])
def test_svg_parses_and_has_one_g_node_per_trace_node_and_nothing_active(step):
    svg = draw.render_svg(LESSON, step, legend=step is not None)
    root = ET.fromstring(svg)
    nodes = [g for g in root.iter(SVG + "g") if "node" in (g.get("class") or "").split()]
    assert sorted(g.get("id") for g in nodes) == ["n0", "n1", "n2", "n3"]
    assert not list(root.iter(SVG + "script"))
    for el in root.iter():
        assert not any(a.endswith("href") or a.lower().startswith("on") for a in el.attrib)
    # The texts the page rewrites per step are tagged.
    ids = {el.get("id") for el in root.iter()}
    assert {"n0-head", "n0-grad", "n2-op", "n2-grad", "n0-gcell"} <= ids


@needs_dot
def test_future_edge_labels_are_hidden_in_a_still_image():
    root = ET.fromstring(draw.render_svg(LESSON, 1))
    labels = {t.get("id"): t for t in root.iter(SVG + "text") if t.get("class") == "elabel"}
    assert labels["e-n2-0-label"].get("visibility") == "hidden"
    assert labels["e-n3-0-label"].get("visibility") is None


@needs_dot
def test_heat_maps_are_drawn_into_their_cells():
    trace = run("V = randn(8, 9)\nL = (V*V).sum()").to_dict()
    root = ET.fromstring(draw.render_svg(trace, 1))
    v = next(n for n in trace["nodes"] if n["label"] == "V")
    rects = [r for r in root.iter(SVG + "rect") if (r.get("id") or "").startswith(v["id"] + "-gh-")]
    assert len(rects) == 8 * 9


@needs_dot
def test_layout_is_bounded_in_time():
    """A layout past its own budget is refused with the code the app caches by shape
    ("layout_timeout"; "timeout" is kept for the request's deadline), naming the setting."""
    with pytest.raises(draw.DrawError) as err:
        draw.to_svg("digraph { a -> b }\n# unique " + str(time.time()), timeout=1e-6)
    assert err.value.code == "layout_timeout"
    assert err.value.limit == "max_layout_seconds" and "(max_layout_seconds)" in err.value.message


EMPTY_AND_HIGH_RANK = [
    (0,),
    (2, 0),
    (0, 3),
    (2, 0, 3),
    (1, 1, 0),
    (0, 0, 0),
    (0, 2, 3, 4),
    (2, 3, 0, 5, 1),
    (2, 3, 4, 5),
    (2, 3, 4, 5, 6),
    (1,) * 8,
    (2,) * 10,
]


@needs_dot
@pytest.mark.parametrize("shape", EMPTY_AND_HIGH_RANK, ids=str)
def test_a_tensor_of_any_rank_or_with_a_zero_length_axis_is_drawn(shape: tuple[int, ...]):
    """Once a 500: zeros(2, 0, 3) reaches the drawing as [[], []] (JSON cannot tell the 3),
    and a zero-length vector or matrix made a table without cells, which Graphviz refuses
    (the node was drawn as its bare id). Every step draws, Graphviz's own `dot` takes the DOT,
    and the node shows its whole shape and, if empty, EMPTY for its numbers and its grad."""
    dims = ", ".join(map(str, shape))
    trace = run(f"A = zeros({dims})\nL = A.sum()").to_dict()
    node = next(n for n in trace["nodes"] if n["label"] == "A")
    empty = 0 in shape
    for step in [None, *range(len(trace["steps"]))]:
        svg = draw.render_svg(trace, step, legend=step is not None)
        root = ET.fromstring(svg)
        group = root.find(f".//{SVG}g[@id='{node['id']}']")
        assert group is not None
        head = group.find(f".//{SVG}text[@id='{node['id']}-head']")
        assert head is not None and head.text is not None
        assert head.text.replace("\xa0", " ").removeprefix("▶ ") == "A  " + draw.shape_text(shape)
        texts = [t.text for t in group.iter(SVG + "text")]
        assert texts.count(EMPTY) == (2 if empty else 0)
        if not empty and len(shape) > 2:  # a heat map for the value and one for the grad
            assert group.find(f".//{SVG}g[@id='{node['id']}-vheat']") is not None
            assert group.find(f".//{SVG}g[@id='{node['id']}-gheat']") is not None
    edge = draw.to_dot(trace, 0)
    assert f"← {draw.shape_text(shape)}<" in edge  # the gradient's shape, all of it
    done = subprocess.run(
        ["dot", "-Tsvg"], input=edge.encode(), capture_output=True, env=graphviz_env()
    )
    assert done.returncode == 0 and not done.stderr


def test_heat_grid_of_an_empty_tensor_has_no_blocks():
    assert heat_grid([[], []]).shape == (0, 0)
    assert heat_grid([]).shape == (0, 0)
    assert heat_grid(list(range(40))).shape == (1, HEAT_COLS)


@needs_dot
@pytest.mark.slow
def test_an_rnn_weight_shared_by_128_steps_lays_out_quickly():
    src = "w = 0.99\nh = 1.0\nfor i in range(128):\n    h = h*w\nL = h"
    trace = run(src).to_dict()
    start = time.perf_counter()
    svg = draw.render_svg(trace, None)
    assert time.perf_counter() - start < 5
    assert svg.count('class="node copy') == 128


def test_message_svg_is_valid_xml_and_escapes_the_message():
    svg = draw.message_svg("bad <b>&", ["line 1 </text><script>"])
    root = ET.fromstring(svg)
    assert not list(root.iter(SVG + "script"))
    assert "bad <b>&" in "".join(root.itertext())


RNN = (
    "Wh = randn(3, 3)\nWx = randn(3, 2)\nxs = randn(6, 2)\nh = zeros(3)\n"
    "for t in range(6):\n    h = tanh(Wh @ h + Wx @ xs[t])\nL = h.sum()"
)


def test_an_unrolled_loop_is_found_by_its_repeated_spans():
    trace = run(RNN).to_dict()
    its = loop_iterations(trace)
    assert len(its) == 6 and all(len(it) == len(its[0]) == 5 for it in its)
    plan = draw.collapse_plan(trace)
    assert plan and plan["collapsed"] == 4 and len(plan["members"]) == 20
    assert draw.collapse_plan(run("x*y + x").to_dict()) is None


def test_collapsing_draws_first_and_last_iteration_and_one_box():
    trace = run(RNN).to_dict()
    plan = draw.collapse_plan(trace)
    assert plan
    members = set(plan["members"])
    dot = draw.to_dot(trace, 10, collapse=True)
    drawn = set(re.findall(r"^  (n\d+) \[id=", dot, re.M))
    assert drawn == {n["id"] for n in trace["nodes"]} - members
    assert dot.count(f'"{draw.LOOP_BOX}" [id="{draw.LOOP_BOX}"') == 1
    assert "4 iterations collapsed (20 nodes)" in dot
    # Edges run into and out of the box, never between two hidden nodes.
    for tail, head in re.findall(r'^  "([\w-]+)" -> "([\w-]+)"', dot, re.M):
        assert tail not in members and head not in members
    # Step 10's node is inside the box: the box is marked as running.
    current = trace["steps"][10]["node"]
    if current in members:
        assert re.search(rf'"{draw.LOOP_BOX}" \[id="{draw.LOOP_BOX}" class="collapsed current', dot)


@needs_dot
def test_matrix_numbers_are_anchored_at_their_right_edge():
    trace = run("W = [[1, -22.5], [3, 4]]\nL = (W*W).sum()").to_dict()
    root = ET.fromstring(draw.render_svg(trace, None))
    cells = [t for t in root.iter(SVG + "text") if t.get("class") in ("v", "g")]
    assert len(cells) == 16  # W and W*W: 4 values and 4 grads each
    assert all(t.get("text-anchor") == "end" for t in cells)
    # A column's numbers share their right edge.
    w = next(n for n in trace["nodes"] if n["label"] == "W")
    col0 = [root.find(f".//*[@id='{w['id']}-v-{i}']") for i in (0, 2)]
    assert col0[0].get("x") == col0[1].get("x")


def test_a_new_number_in_the_same_program_keeps_the_layout_and_costs_no_graphviz_run() -> None:
    """Boxes are sized by the drawing, in steps of whole characters, never by Graphviz's
    reading of their text; so a student who changes a number sees the same picture with the
    new numbers, and the layout is reused (draw.to_svg's cache is keyed by the geometry)."""
    before = draw.render_svg(run("x = 5.0\ny = 3.0\nL = x*y + x").to_dict(), None)
    hits = draw.to_svg.cache_info().hits
    after = draw.render_svg(run("x = 6.0\ny = 3.0\nL = x*y + x").to_dict(), None)
    assert draw.to_svg.cache_info().hits == hits + 1

    def geometry(svg: str) -> list[str]:
        return [
            re.sub(r">[^<]*</(text|title)>", "", line)
            for line in svg.splitlines()
            if not line.startswith(("<title", "value", "grad"))
        ]

    assert geometry(before) == geometry(after)
    texts = " | ".join(ET.fromstring(after).itertext())
    assert "x = 6" in texts and "x*y = 18" in texts and "L = 24" in texts
    assert "x = 5" not in texts


def test_text_only_labels_sit_in_the_middle_of_their_boxes() -> None:
    svg = draw.render_svg(run("a = 2.0\nL = a*3.0 - 1.5").to_dict(), None)
    root = ET.fromstring(svg)
    for g in root.iter(f"{{{SVG_NS}}}g"):
        if "const" not in (g.get("class") or "").split():
            continue
        text = next(g.iter(f"{{{SVG_NS}}}text"))
        shape = [el for el in g if el.tag.endswith(("path", "polygon"))][-1]
        coords = shape.get("d") or shape.get("points") or ""
        xs = [float(x) for x in re.findall(r"(-?[0-9.]+),-?[0-9.]+", coords)]
        assert text.get("text-anchor") == "middle"
        assert abs(float(text.get("x") or 0) - (min(xs) + max(xs)) / 2) < 0.01


def test_a_drawing_whose_texts_do_not_come_back_is_laid_out_with_them(monkeypatch) -> None:
    """Should Graphviz ever draw other texts than the placeholders it was given, the drawing
    is made again from the DOT with the real texts, never shown with a placeholder."""
    real = without_texts

    def one_text_short(dot: str) -> tuple[str, dict[str, list[str]]]:
        geometry, texts = real(dot)
        texts["n0"] = texts["n0"][:-1]
        return geometry, texts

    monkeypatch.setattr("engine.drawing.dot.without_texts", one_text_short)
    draw.to_svg.cache_clear()
    svg = draw.render_svg(run("x = 7.0\nL = x*x").to_dict(), None)
    texts = " | ".join(ET.fromstring(svg).itertext())
    assert "x = 7" in texts and "L = 49" in texts
    assert f">{PLACEHOLDER}<" not in svg


def test_every_step_of_a_program_is_drawn_with_the_same_layout() -> None:
    """Slides of every step (`gradtrace render --all-steps`) must not jiggle: a step's marks
    are strokes and colours, never a box of another size."""
    trace = run("x = 2.0\ny = 3.0\nL = x*y + x").to_dict()
    placements = set()
    for k in range(len(trace["steps"])):
        root = ET.fromstring(draw.render_svg(trace, k, legend=True))
        boxes = []
        for g in root.iter(f"{{{SVG_NS}}}g"):
            if "node" not in (g.get("class") or "").split():
                continue
            outline = next(el for el in g if el.get("class") == "outline")
            boxes.append((g.get("id"), outline.get("points") or outline.get("d")))
            if "current" in g.get("class", "").split():
                assert outline.get("stroke-width") == "3"
            cell = g.find(f"{{{SVG_NS}}}polygon[@class='gcell']")
            if cell is not None and "changed" in g.get("class", "").split():
                assert cell.get("stroke") == STYLE["ink"] and cell.get("stroke-width") == "2"
        placements.add((root.get("width"), root.get("height"), tuple(sorted(boxes))))
    assert len(placements) == 1
