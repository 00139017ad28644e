"""Graphviz in a warm helper process (engine/drawing/graphviz.py) draws exactly what
`dot -Tsvg` draws, says why a graph is refused in `dot`'s own words, and stays bounded in time;
and the engine's scalar fast path (engine/autograd/ops/) computes what the array path
computes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from engine import drawing as draw
from engine import run
from engine.autograd import ops
from engine.autograd.value import leaf
from engine.drawing import budget as layout_budget
from engine.drawing import cells, graphviz
from engine.drawing.style import PAD
from engine.drawing.text import text_width

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")


@needs_dot
@pytest.mark.parametrize(
    "source",
    [
        "x*y + x",
        "W = randn(3, 4)\nx = randn(4)\nL = cross_entropy(W @ x, 2)",
        "w = 0.9\nh = 1.0\nfor i in range(12):\n    h = h*w\nL = h",
        # Graphviz's library draws a label it cannot parse as the node's id, where `dot`
        # fails: an empty tensor's label must parse (it once was a table without cells).
        "A = zeros(2, 0, 3)\nB = zeros(0)\nL = A.sum() + B.sum()",
    ],
)
def test_the_helper_draws_exactly_what_dot_draws(source: str) -> None:
    dot = draw.to_dot(run(source).to_dict(), None).encode()
    by_dot = subprocess.run(
        ["dot", "-Tsvg"], input=dot, capture_output=True, check=True, env=graphviz.graphviz_env()
    ).stdout
    by_helper = graphviz.run_dot(dot, timeout=30)
    assert by_helper.returncode == 0
    assert by_helper.stdout == by_dot


@needs_dot
def test_graphviz_runs_with_only_the_svg_renderer_and_the_dot_layout() -> None:
    """No Pango: the boxes are as wide as engine/drawing/cells.py says (our font's advance), not as
    Graphviz would measure the text."""
    env = graphviz.graphviz_env()
    plugins = sorted(os.listdir(env["GVBINDIR"]))
    assert [p.split(".")[0] for p in plugins if p.startswith("lib")] == [
        "libgvplugin_core",
        "libgvplugin_dot_layout",
    ]
    label = "W" * 20  # Graphviz's own metrics make a Times 'W' half as wide again as ours
    svg = draw.render_svg(run(f"{label} = 2.0\nL = {label}*{label}").to_dict(), None)
    grad_cell = re.search(r'id="n0-gcell"[^>]*points="([^"]*)"', svg)
    assert grad_cell is not None
    xs = [float(p.split(",")[0]) for p in grad_cell.group(1).split()]
    width = max(xs) - min(xs)
    room = cells.room_for("2")  # the room a number gets
    assert width == cells.room(text_width(f"▶ {label} = {room}") + 2 * PAD + 2)


@needs_dot
def test_a_refused_graph_gets_dots_own_error() -> None:
    done = graphviz.run_dot(b"digraph { a -> }", timeout=30)
    assert done.returncode != 0 and b"syntax error" in done.stderr
    assert graphviz.run_dot(b"digraph { a -> b }", timeout=30).returncode == 0  # still working


@needs_dot
def test_a_layout_past_its_time_is_stopped_and_the_next_one_works() -> None:
    big = "digraph { " + " ".join(f"n{i} -> n{(i * 7919) % 3000};" for i in range(3000)) + " }"
    with pytest.raises(layout_budget.CpuTimeExpired):  # its CPU time ran out (a TimeoutExpired)
        graphviz.run_dot(big.encode(), timeout=0.05)
    assert graphviz.run_dot(b"digraph { a -> b }", timeout=30).returncode == 0


@needs_dot
def test_a_helper_whose_pipes_are_past_descriptor_1024_still_answers() -> None:
    """A busy server holds many sockets: select() cannot wait on a descriptor past 1,024 (the
    helper would look broken, and every layout fall back to `dot`); poll() can."""
    graphviz.close_all()
    spare: list[int] = []
    try:
        while not spare or spare[-1] < 1_100:
            spare.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        for fd in spare:
            os.close(fd)
        pytest.skip("cannot open 1,100 descriptors here")
    try:
        helper = graphviz._take()
        assert helper is not None and helper.proc.stdout is not None
        assert helper.proc.stdout.fileno() > 1_024
        graphviz._give_back(helper)
        done = graphviz.run_dot(b"digraph { a -> b }", timeout=30)
        assert done.returncode == 0 and b"<svg" in done.stdout
        assert helper in graphviz._idle  # the helper answered: it is back, warm
    finally:
        graphviz.close_all()
        for fd in spare:
            os.close(fd)


def test_quiet_switches_numpy_warnings_off_once_and_restores_them() -> None:
    before = np.geterr()
    with ops.quiet():
        assert np.geterr()["over"] == "ignore"
        with ops.quiet():  # re-entrant
            pass
        assert np.geterr()["over"] == "ignore"
    assert np.geterr() == before


def test_an_overflow_outside_quiet_is_an_op_error_and_no_warning() -> None:
    x = leaf(1e308, "x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ops.OpError):
            x * 10.0
        with pytest.raises(ops.OpError):
            x * leaf(10.0)


def test_scalar_ops_keep_float64_values_and_agree_with_the_array_path() -> None:
    x, y = leaf(0.3, "x"), leaf(-1.7, "y")
    out = ((x * y).tanh() + x.exp() / y) ** 2
    assert out.data.shape == () and out.data.dtype == np.float64
    out.backward()
    vx, vy = np.array([0.3]), np.array([-1.7])
    X, Y = leaf(vx), leaf(vy)
    ref = ((X * Y).tanh() + X.exp() / Y) ** 2
    ref.backward()
    assert float(out.data) == pytest.approx(float(ref.data[0]), rel=1e-15)
    assert float(x.grad) == pytest.approx(float(X.grad[0]), rel=1e-14)
    assert float(y.grad) == pytest.approx(float(Y.grad[0]), rel=1e-14)
