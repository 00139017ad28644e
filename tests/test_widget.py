"""The live notebook widget (gradtrace.widget): executed by nbclient in a real IPython kernel,
its outputs and its synced state; and the same widget made in this process, for what the
kernel does when the program, the values or the step change."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("anywidget")

from gradtrace import widget  # noqa: E402
from gradtrace import widget_frames as wf  # noqa: E402
from tests.notebook_kit import ROOT, execute  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
CELLS = [
    'import gradtrace\nw = gradtrace.widget("x*y + x", values={"x": 1, "y": 1})\nw',
    "w.step = 1\nprint(w.step, w.current_frame()['label'])",
    'w.values = {"x": 2, "y": 3}\n'
    'print(json.dumps({"step": w.step, "grads": w.trace["grads"], "n": w.n_steps}))',
    'bad = gradtrace.widget("x = 2\\ny = x *")\nprint(json.dumps(bad.error))\nbad',
    "w.step = -1\nw",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The notebook after a run: its cells with their outputs, and its metadata."""
    tmp = tmp_path_factory.mktemp("widget-nb")
    return execute(["import json", *CELLS], tmp, "widget.ipynb")


def outputs(cell: Any) -> tuple[dict[str, Any] | None, str]:
    """(the cell's display data or None, its printed text); a cell that raised fails here."""
    errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
    assert not errors, errors
    results = [o for o in cell["outputs"] if o["output_type"] == "execute_result"]
    text = "".join(o["text"] for o in cell["outputs"] if o["output_type"] == "stream")
    return (results[0]["data"] if results else None), text


def svg_text(svg: str) -> str:
    root = ET.fromstring(svg)
    return " ".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))


def test_the_widget_shows_as_a_widget_view_with_the_static_step_beside_it(executed: Any) -> None:
    data, _ = outputs(executed.cells[1])
    assert data is not None
    assert set(data) >= {WIDGET_VIEW, "text/html", "image/svg+xml", "text/plain"}
    assert data[WIDGET_VIEW]["model_id"]
    assert data["text/plain"] == "<gradtrace widget, step 2 of 2; x.grad = 2, y.grad = 1>"
    text = svg_text(data["image/svg+xml"])
    assert "Step 2 of 2" in text and "grad 2" in text
    html = data["text/html"]
    assert "<script" not in html and html.count("<svg") == 1
    assert "<td><b>2</b></td><td><b>1</b></td>" in html  # x.grad and y.grad, both changed
    assert "x*y sends ū·y = 1·1 = 1 to x; x.grad: 1 → 2" in html


def test_python_sets_the_step_and_new_values_run_again_in_the_kernel(executed: Any) -> None:
    _, text = outputs(executed.cells[2])
    assert text == "1 Step 1 of 2\n"
    _, text = outputs(executed.cells[3])
    assert json.loads(text) == {"step": 1, "grads": {"x": 4.0, "y": 2.0}, "n": 3}


def test_a_program_that_cannot_run_gives_the_error_trait_with_its_position(
    executed: Any,
) -> None:
    data, text = outputs(executed.cells[4])
    error = json.loads(text)
    assert (error["line"], error["column"], error["code"]) == (2, 8, "syntax")
    assert error["text"] == "Line 2, column 8: syntax error: invalid syntax"
    assert data is not None and WIDGET_VIEW in data and "image/svg+xml" not in data
    assert "Line 2, column 8: syntax error: invalid syntax" in data["text/html"]


def test_the_saved_widget_state_is_what_the_kernel_last_sent(executed: Any) -> None:
    """The state nbclient kept for each model: what a front end would draw from."""
    data, _ = outputs(executed.cells[5])
    assert data is not None and "Step 2 of 2" in svg_text(data["image/svg+xml"])
    states = executed.metadata["widgets"][WIDGET_STATE]["state"]
    first = states[data[WIDGET_VIEW]["model_id"]]["state"]
    assert first["step"] == 2 and first["n_steps"] == 3
    assert first["trace"]["grads"] == {"x": 4.0, "y": 2.0}
    assert first["values"] == {"x": 2, "y": 3}
    assert [f["label"] for f in first["frames"]] == ["Step 0 of 2", "Step 1 of 2", "Step 2 of 2"]
    assert first["frames"][2]["cells"] == [["4", True], ["2", True], ["1", False], ["1", False]]
    bad = states[outputs(executed.cells[4])[0][WIDGET_VIEW]["model_id"]]["state"]  # type: ignore[index]
    assert bad["error"]["line"] == 2 and bad["trace"] is None and bad["frames"] == []


# --------------------------------------------------------------------------------------------
# The same widget in this process (ipywidgets without a kernel: the traits and observers run).


def test_setting_program_and_values_together_runs_once() -> None:
    w = widget("x*y + x", values={"x": 2, "y": 3})
    rev = w.rev
    with w.hold_trait_notifications():
        w.program = "a*b"
        w.values = {"a": 2, "b": 5}
    assert w.error is None and w.trace is not None
    assert w.trace["grads"] == {"a": 5.0, "b": 2.0}
    assert w.rev == rev + 1


def test_the_step_clamps_and_counts_from_the_end() -> None:
    w = widget("x*y + x", values={"x": 2, "y": 3}, step=0)
    assert w.step == 0
    w.step = 99
    assert w.step == 2
    w.step = -2
    assert w.step == 1
    w.program = "x*y"  # fewer steps: the step clamps to the new range
    assert (w.n_steps, w.step) == (2, 1)


def test_options_and_language_redraw_without_a_new_run() -> None:
    w = widget("x*y + x", values={"x": 2, "y": 3})
    w.accumulate = "assign"
    assert w.trace is not None and w.trace["grads"]["x"] == 3.0
    assert "(with =, the old value 1 is overwritten)" in w.frames[2]["sentence"]
    w.lang = "zh"
    assert w.frames[2]["label"] == "第 2 步,共 2 步" and w.words["next"] == "下一步"
    w.program = "x*"
    assert w.error is not None and w.error["text"].startswith("第 1 行")


def test_values_from_numpy_become_json_and_others_are_refused_by_name() -> None:
    np = pytest.importorskip("numpy")
    w = widget("x*y + x", values={"x": np.float64(2), "y": np.array([1.0, 3.0])})
    assert w.values == {"x": 2.0, "y": [1.0, 3.0]}
    assert w.trace is not None and w.trace["grads"]["x"] == 6.0  # 1 + y, summed
    traitlets = pytest.importorskip("traitlets")
    with pytest.raises(traitlets.TraitError, match="the value for 'x' must be a number"):
        w.values = {"x": object()}
    w.values = {"x": "two"}  # JSON, but not a value: the engine's error, shown, not raised
    assert w.error is not None and w.error["code"] == "bad_value" and w.trace is None


def test_a_large_trace_sends_the_step_on_show_only() -> None:
    rnn = "h = 0.5\nw = 0.9\nfor i in range(12):\n    h = tanh(w*h + 0.1)\nh"
    w = widget(rnn)
    assert w.n_steps == 37 and w.frames == []
    assert w.frame["step"] == 36 and w.frame["rev"] == w.rev
    size = len(json.dumps(w.frame))
    assert size < wf.EAGER_BYTES / 5, size
    w.step = 3
    assert w.frame["step"] == 3 and "Step 3 of 36" in svg_text(w.frame["svg"])
    assert size * w.n_steps > wf.EAGER_BYTES  # why: every frame at once would pass it
    small = widget("x*y + x").trace
    assert small is not None
    options = {"lang": "en", "legend": True, "collapse": False}
    assert wf.frames(small, budget=1_000, **options) is None
    assert len(wf.frames(small, budget=100_000, **options) or []) == 3


def test_importing_gradtrace_does_not_import_anywidget() -> None:
    code = (
        "import sys, gradtrace\n"
        "assert 'anywidget' not in sys.modules and 'ipywidgets' not in sys.modules\n"
        "sys.modules['anywidget'] = None\n"
        "try:\n"
        "    gradtrace.widget('x')\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "pip install 'gradtrace[notebook]'" in out.stdout
