"""The own-engine page's Python, without a browser: the recorder (static/js/own/recorder.py, the
file Pyodide runs) in CPython on micrograd's engine.py as published and on every example, and
engine/own's findings, reference and end-to-end check on what it records. The browser tests
(tests/test_browser_own.py) run the same recorder in Pyodide."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

import pytest

import engine
from engine.own import OwnError, OwnLimits, report, validate

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "static" / "js" / "own"

# micrograd's README example, after `from micrograd.engine import Value` (here the class is
# pasted above it, as a student pastes engine.py into the page).
README = """
a = Value(-4.0)
b = Value(2.0)
c = a + b
d = a * b + b**3
c += c + 1
c += 1 + c + (-a)
d += d * 2 + (b + a).relu()
d += 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g += 10.0 / f
print(f'{g.data:.4f}')
g.backward()
print(f'{a.grad:.4f}')
print(f'{b.grad:.4f}')
"""
# The same expression in gradtrace's own language, run by gradtrace's own engine.
README_GRADTRACE = """a = -4.0
b = 2.0
c = a + b
d = a * b + b**3
c += c + 1
c += 1 + c + (-a)
d += d * 2 + (b + a).relu()
d += 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g += 10.0 / f
g"""

# Each planted bug: the finding's code and the label of the node it must point at.
PLANTED = {
    "recursive": ("order", "e"),
    "exp": ("local", "e"),
    "upstream": ("upstream", "o"),
    "twice": ("not_zeroed", "x1"),
}


def load_recorder() -> Any:
    spec = importlib.util.spec_from_file_location("own_recorder", OWN / "recorder.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["own_recorder"] = module
    spec.loader.exec_module(module)
    return module


recorder = load_recorder()


def micrograd_source() -> str:
    mg = pytest.importorskip("micrograd.engine")
    return inspect.getsource(mg)


def example(name: str) -> str:
    return (OWN / "examples" / f"{name}.py").read_text("utf-8")


def run(source: str, lang: str = "en") -> tuple[dict[str, Any], dict[str, Any]]:
    got = recorder.record(source)
    assert "error" not in got, got
    return got, report(got["trace"], OwnLimits(), lang)


def labels(answer: dict[str, Any]) -> dict[str, str]:
    return {n["id"]: n["label"] for n in answer["trace"]["nodes"]}


def test_micrograd_as_published_agrees_with_gradtraces_engine_on_the_readme_example() -> None:
    got, answer = run(micrograd_source() + README)
    assert got["printed"] == ["24.7041", "138.8338", "645.5773"]  # the README's own numbers
    ours = engine.run(README_GRADTRACE).to_dict()["grads"]
    by_label = {n["label"]: n for n in answer["trace"]["nodes"]}
    assert by_label["a"]["grad"] == pytest.approx(ours["a"], rel=1e-12)
    assert by_label["b"]["grad"] == pytest.approx(ours["b"], rel=1e-12)
    assert answer["findings"] == []
    assert all(row["ok"] for row in answer["end_to_end"])
    ref = answer["reference"]
    assert ref["agree"] and ref["parted"] is None
    assert ref["measured"] == []  # every op re-run by gradtrace's own op of the same name
    for n in answer["trace"]["nodes"]:
        assert ref["grads"][n["id"]] == pytest.approx(n["grad"], rel=1e-9, abs=1e-12)


def test_each_step_is_one_local_backward_with_its_grads_before_and_after() -> None:
    _, answer = run(example("micrograd"))
    trace = answer["trace"]
    assert trace["steps"][0]["kind"] == "seed" and trace["steps"][0]["grads"] == {
        trace["output"]: 1.0
    }
    for st in trace["steps"][1:]:
        for term in st["terms"]:
            assert term["contribution"] == pytest.approx(term["after"] - term["before"])
    # The running merge of the steps ends at every node's final grad (docs/trace-format.md).
    running = {n["id"]: 0.0 for n in trace["nodes"]}
    for st in trace["steps"]:
        running.update(st["grads"])
    assert running == {n["id"]: n["grad"] for n in trace["nodes"]}
    assert trace["topo"] == sorted(trace["topo"], key=lambda i: int(i[1:]))


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_each_planted_bug_is_pointed_at_its_node_with_its_name(name: str) -> None:
    code, node = PLANTED[name]
    _, answer = run(example(name))
    first = answer["findings"][0]
    assert (first["code"], labels(answer)[first["node"]]) == (code, node), answer["findings"]
    assert not answer["reference"]["agree"]
    assert any(not row["ok"] for row in answer["end_to_end"])


def test_the_overwrite_is_pointed_at_the_consumer_that_ran_second() -> None:
    """`=` where `+=` belongs: a and b feed both d and e; whichever of the two runs second
    (micrograd's set of children orders them by id) overwrites what the first sent."""
    _, answer = run(example("assign"))
    names = labels(answer)
    trace = answer["trace"]
    ran = [names[s["node"]] for s in trace["steps"][1:]]
    second = max(("d", "e"), key=ran.index)
    codes = {(f["code"], names[f["node"]], names[f["input"]]) for f in answer["findings"]}
    assert codes == {("overwrite", second, "a"), ("overwrite", second, "b")}
    assert "+=" in answer["findings"][0]["message"]


def test_the_exp_bug_is_said_as_the_slope_it_should_have() -> None:
    _, answer = run(example("exp"))
    message = answer["findings"][0]["message"]
    assert message.startswith("exp node e: your backward gave 1.763, the slope is 5.828")


def test_a_minitorch_style_scalar_function_engine_records_and_checks() -> None:
    got, answer = run(example("minitorch"))
    assert answer["findings"] == []
    assert all(row["ok"] for row in answer["end_to_end"])
    assert answer["reference"]["agree"]
    # apply() is no method of gradtrace's Value: its ops are run by their measured slopes
    assert len(answer["reference"]["measured"]) == 5 and answer["reference"]["exact"] == []
    names = {n["label"] for n in answer["trace"]["nodes"]}
    assert {"x", "w", "b", "z", "p", "loss"} <= names
    w = next(n for n in answer["trace"]["nodes"] if n["label"] == "w")
    assert w["grad"] == pytest.approx(float(got["printed"][0].split()[0]))


def test_findings_are_worded_in_chinese_too() -> None:
    _, answer = run(example("upstream"), lang="zh")
    assert answer["findings"][0]["name"] == "漏乘上游梯度"
    assert "没有乘上" in answer["findings"][0]["message"]
    assert answer["trace"]["steps"][1]["words"].endswith("。")


def test_the_students_own_errors_come_back_with_their_line() -> None:
    got = recorder.record("class Value:\n    pass\n\nx = 1/0\n")
    assert got["error"]["line"] == 4 and "ZeroDivisionError" in got["error"]["message"]
    assert recorder.record("x = (\n")["error"]["message"].startswith("SyntaxError")
    assert recorder.record(example("micrograd").replace("o.backward()", ""))["error"]["code"] == (
        "no_backward"
    )


def test_the_recorder_stops_at_its_node_limit_even_if_the_code_catches_it() -> None:
    source = example("micrograd").split("# A neuron")[0] + (
        "try:\n    xs = [Value(float(i)) for i in range(50)]\nexcept Exception:\n    pass\n"
    )
    got = recorder.record(source, {"max_own_nodes": 10})
    assert "max_own_nodes" in got["error"]["message"]


def test_a_recording_over_a_limit_is_refused_naming_it() -> None:
    got, _ = run(example("micrograd"))
    with pytest.raises(OwnError) as err:
        validate(got["trace"], OwnLimits(max_own_nodes=3))
    assert err.value.status == 413 and err.value.limit == "max_own_nodes"
    assert "max_own_nodes" in err.value.message()


def test_the_usual_renamings_are_found_as_nodes() -> None:
    """`value` for data, `_children` for _prev: the same engine under other names."""
    renamed = (
        example("micrograd")
        .replace(".data", ".value")
        .replace("self.data = data", "self.value = data")
        .replace("_prev", "_children_set")
        .replace("self._children_set = set(_children)", "self._children = tuple(_children)")
        .replace("v._children_set", "v._children")
    )
    assert "_children_set" not in renamed and ".data" not in renamed
    _, answer = run(renamed)
    assert answer["findings"] == [] and answer["reference"]["agree"]
    assert {"x1", "w1", "n", "o"} <= {n["label"] for n in answer["trace"]["nodes"]}


def test_a_backward_never_assigned_and_one_never_run_are_named() -> None:
    forgot = example("micrograd").replace(
        "            self.grad += (1 - t**2) * out.grad\n\n        out._backward = _backward",
        "            self.grad += (1 - t**2) * out.grad\n",
    )
    _, answer = run(forgot)
    assert [(f["code"], labels(answer)[f["node"]]) for f in answer["findings"]] == [("noop", "o")]
    skipped = example("micrograd").replace(
        "            node._backward()",
        '            if node._op != "tanh":\n                node._backward()',
    )
    _, answer = run(skipped)
    found = [(f["code"], labels(answer)[f["node"]], f["step"]) for f in answer["findings"]]
    assert found == [("never_ran", "o", None)]
    assert "never ran" in answer["findings"][0]["message"]
