"""Figures sized for where they go (issue 22): the directive's and MkDocs' SVGs and `gradtrace
reveal` lay a graph out both ways and keep the direction that is larger in their box, an option
naming a direction overrides, the Sphinx stepper carries both drawings for the page to choose
from; error pictures wrap their words inside their width; edges of a top-to-bottom drawing
point up; the landing opens at the seed."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from app.main import app
from engine import drawing as draw
from gradtrace.direction import DOCS_COLUMN, Box, larger, rankdir_option, scale_in
from gradtrace.figure import FigureError, build, parse_options
from gradtrace.files import Program, step_svg
from gradtrace.reveal.slides import SLIDE_BOX, SlideOptions, figure_html, plugin_js
from gradtrace.standalone import standalone_html

NEURON = (
    "x1 = 2\nx2 = 0\nw1 = -3\nw2 = 1\nb = 6.8813735870195432\nn = x1*w1 + x2*w2 + b\no = tanh(n)"
)
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def neuron() -> dict:
    return Program(NEURON).trace()


def rankdir_of(svg: str) -> str:
    return "TB" if 'class="graph gradtrace tb"' in svg else "LR"


def test_the_direction_chosen_is_the_one_larger_in_its_box(neuron) -> None:
    draws = {r: step_svg(neuron, 0, rankdir=r) for r in ("LR", "TB")}
    for box in (DOCS_COLUMN, SLIDE_BOX, Box(2000, 300), Box(300, 2000)):
        rankdir, svg = larger(lambda r: draws[r], box)
        other = "TB" if rankdir == "LR" else "LR"
        assert rankdir_of(svg) == rankdir
        assert scale_in(draws[rankdir], box) >= scale_in(draws[other], box) / 1.02, box
    # A wide short box keeps a bushy graph left to right; a tall narrow one turns it.
    assert larger(lambda r: draws[r], Box(2000, 300))[0] == "LR"
    assert larger(lambda r: draws[r], Box(300, 2000))[0] == "TB"
    assert larger(lambda r: draws[r], Box(300, 2000), "LR")[0] == "LR"  # asked: that one


def test_a_docs_column_turns_the_neuron_and_the_option_overrides(
    neuron,
) -> None:
    def svg_of(source: str, **options: str) -> str:
        (fig,) = build(parse_options(source, {"step": "0", **options}))
        return fig.data.decode("utf-8")

    turned = svg_of(NEURON)
    assert rankdir_of(turned) == "TB"
    flat = step_svg(neuron, 0, rankdir="LR")
    assert scale_in(turned, DOCS_COLUMN) > scale_in(flat, DOCS_COLUMN) * 1.3  # it was 5.9 px
    assert rankdir_of(svg_of(NEURON, layout="lr")) == "LR"
    assert rankdir_of(svg_of("x*y")) == "LR"  # both at their own size: the usual one
    assert rankdir_of(svg_of("x*y", layout="tb")) == "TB"
    with pytest.raises(FigureError, match="layout is auto, lr or tb"):
        parse_options(NEURON, {"layout": "sideways"})
    assert rankdir_option("Top-Bottom") == "TB" and rankdir_option(" auto ") is None


def test_the_sphinx_stepper_carries_both_directions_and_fills_its_frame(neuron) -> None:
    (fig,) = build(parse_options(NEURON, {"mode": "stepper", "step": "0"}))
    page = fig.data.decode("utf-8")
    state = json.loads(
        re.search(r'<script type="application/json" id="state">(.*?)</script>', page, re.S).group(1)
    )
    assert state["fit"] == "frame" and 'class="standalone compact fit-frame"' in page
    assert rankdir_of(state["drawings"]["tb"]) == "TB"
    assert state["query"]["layout"] is None  # the page chooses (static/js/layout.js)
    (forced,) = build(parse_options(NEURON, {"mode": "stepper", "layout": "tb"}))
    forced_state = forced.data.decode("utf-8")
    assert '"layout":"tb"' in forced_state and '"drawings":{}' in forced_state
    notebook = standalone_html(neuron, compact=True)  # a notebook's: as tall as its drawing
    assert '"fit":"content"' in notebook and 'class="standalone compact"' in notebook


def test_reveal_draws_the_direction_larger_on_a_slide_unless_told(neuron) -> None:
    chosen = figure_html(neuron, SlideOptions(step=0))
    assert rankdir_of(chosen) == "TB"
    assert rankdir_of(figure_html(neuron, SlideOptions(step=0, rankdir="LR"))) == "LR"
    stepped = figure_html(neuron, SlideOptions())  # one fragment a step, the same direction
    assert rankdir_of(stepped) == "TB"
    # The box compared in is the one the plugin gives the drawing.
    assert f"max-height: {SLIDE_BOX.height}px" in plugin_js()


def test_cli_reveal_takes_auto_and_a_direction(tmp_path) -> None:
    from gradtrace.cli import main

    out = tmp_path / "s.html"
    assert main(["reveal", NEURON, "--step", "0", "-o", str(out)]) == 0
    assert rankdir_of(out.read_text("utf-8")) == "TB"
    assert main(["reveal", NEURON, "--step", "0", "--rankdir", "LR", "-o", str(out)]) == 0
    assert rankdir_of(out.read_text("utf-8")) == "LR"


# ---- error pictures ----------------------------------------------------------------------------


def texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter(SVG + "text")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_broken_image_wraps_its_whole_message_inside_its_width(lang) -> None:
    client = TestClient(app)
    r = client.get(f"/api/svg?source=x*y+x&lang={lang}")  # a bare + : the fix is in the picture
    assert r.status_code == 400
    root = ET.fromstring(r.content)
    width = float(root.get("width"))
    lines = texts(r.text)
    hint = "%2B"
    assert any(hint in line for line in lines), lines  # the fix is there, not cut off
    for line in lines:
        assert (
            draw.svg.text_width(line, draw.svg.MESSAGE_FONT)
            <= width - 2 * draw.svg.MESSAGE_MARGIN + 0.01
        )
    assert float(root.get("height")) >= 24 + 20 * len(lines)


def test_a_long_word_is_broken_where_it_reaches_the_edge() -> None:
    svg = draw.message_svg("gradtrace: " + "x" * 300, ["看" * 100])
    lines = texts(svg)
    assert "".join(lines) == "gradtrace:" + "x" * 300 + "看" * 100  # every character, in order
    assert all(draw.svg.text_width(line, 13) <= 640 - 32 + 0.01 for line in lines)


# ---- the drawing's arrows, the landing --------------------------------------------------------


def test_a_top_to_bottom_drawing_sends_its_gradients_up(neuron) -> None:
    tb = draw.to_dot(neuron, 2, rankdir="TB")
    lr = draw.to_dot(neuron, 2, rankdir="LR")
    assert "↑ 0.5" in tb and "← 0.5" not in tb
    assert "← 0.5" in lr and "↑" not in lr


def test_the_landing_opens_at_the_seed_and_a_program_at_its_last_step() -> None:
    client = TestClient(app)
    landing = client.get("/").text
    assert "Step 0 of 2" in landing and 'id="step-cue"' in landing
    assert "Step 2 of 2" in client.get("/?source=" + quote("x*y + x")).text
    assert "Step 1 of 2" in client.get("/?step=1").text  # a step asked for is kept
    assert "Step 2 of 2" in client.get("/embed").text  # the embed is a view, not a landing
