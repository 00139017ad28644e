"""A program runs the way PyTorch runs it (spec/language.md): every backward() a pass where it
stands, grads that accumulate across passes, and a trace that holds every pass — the steps of
each kept pass in order, a summary of each one, and a running merge of the steps' grads that
ends at each node's final grad. Checked here on the trace's JSON itself; against real torch in
tests/test_differential_torch.py."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from engine import ProgramError, run_program
from engine.limits import Limits


def trace(source: str, **kw: Any) -> dict[str, Any]:
    return run_program(source, **kw).trace.to_dict()


def merged(d: dict[str, Any]) -> dict[str, Any]:
    """The grad table's last row: the running merge of every step's deltas."""
    running: dict[str, Any] = {}
    for step in d["steps"]:
        running.update(step["grads"])
    return running


def zero(v: Any) -> Any:
    return [zero(x) for x in v] if isinstance(v, list) else 0.0


def assert_merge_ends_at_the_final_grads(d: dict[str, Any]) -> None:
    running = merged(d)
    for node in d["nodes"]:
        if node["grad"] is None:
            continue
        assert running.get(node["id"], zero(node["grad"])) == pytest.approx(node["grad"]), node


LOOP = """import torch
w = torch.tensor(1.0, requires_grad=True)
for i in range(3):
    loss = (w * 2 - 1) ** 2
    loss.backward()
    print(w.grad)"""

TRAIN = """import torch
X = torch.linspace(0, 1, 20)
y = 3 * X + 2
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
for epoch in range({n}):
    loss = ((w * X + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.5 * w.grad
        b -= 0.5 * b.grad
    w.grad.zero_()
    b.grad.zero_()
print(w, b)"""


def test_a_loop_of_backward_calls_accumulates_as_pytorch_does() -> None:
    ran = run_program(LOOP)
    assert [p["text"] for p in ran.printed] == ["tensor(4.)", "tensor(8.)", "tensor(12.)"]
    assert [p["pass"] for p in ran.printed] == [0, 1, 2]  # each line after its pass
    d = ran.trace.to_dict()
    assert [p["grads_before"] for p in d["passes"]] == [{"w": None}, {"w": 4.0}, {"w": 8.0}]
    assert [p["grads_after"] for p in d["passes"]] == [{"w": 4.0}, {"w": 8.0}, {"w": 12.0}]
    assert d["grads"] == {"w": 12.0} and all(p["kept"] for p in d["passes"])
    assert_merge_ends_at_the_final_grads(d)


def test_each_pass_s_steps_start_with_its_seed_and_carry_its_number() -> None:
    d = trace(LOOP)
    for k, p in enumerate(d["passes"]):
        first, last = d["steps"][p["first_step"]], d["steps"][p["last_step"]]
        assert first["kind"] == "seed" and first["node"] == p["output"]
        assert {s["pass"] for s in d["steps"][p["first_step"] : p["last_step"] + 1]} == {k}
        assert last["pass"] == k and p["line"] == 5 and p["value"] == 1.0
    # a leaf's column carries on from its grad before the pass: w's += shows 4 + 4 = 8
    second = d["steps"][d["passes"][1]["first_step"] :]
    w_terms = [t for s in second for t in s["terms"] if t["input"] == "n0"]
    assert (w_terms[0]["before"], w_terms[0]["after"]) == (4.0, 8.0)


def test_zeroing_between_passes_is_in_the_next_seed_step() -> None:
    src = LOOP.replace("    print(w.grad)", "    print(w.grad)\n    w.grad.zero_()")
    ran = run_program(src)
    assert [p["text"] for p in ran.printed] == ["tensor(4.)"] * 3
    d = ran.trace.to_dict()
    seeds = [d["steps"][p["first_step"]] for p in d["passes"]]
    assert [s["grads"].get("n0") for s in seeds] == [None, 0.0, 0.0]  # the zeroed leaf: shown
    assert_merge_ends_at_the_final_grads(d)


def test_a_second_backward_through_a_freed_graph_is_pytorch_s_error() -> None:
    src = "import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x * x\ny.backward()\n"
    with pytest.raises(ProgramError) as info:
        run_program(src + "y.backward()")
    e = info.value
    assert (e.code, e.line) == ("backward", 5) and "second time" in e.message
    d = trace(src + "z = x * 3\nz.backward()")  # a new graph: fine
    assert d["grads"] == {"x": 7.0}
    d = trace(src.replace("y.backward()", "y.backward(retain_graph=True)") + "y.backward()")
    assert d["grads"] == {"x": 8.0}
    # an op that keeps no tensor (add, sum) can be gone through again, as in PyTorch
    d = trace("import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x + 1\ny.backward()\n"
              "y.backward()")  # fmt: skip
    assert d["grads"] == {"x": 2.0}


def test_torch_autograd_grad_returns_a_tuple_and_leaves_grads_alone() -> None:
    ran = run_program(
        "import torch\nx = torch.tensor(3.0, requires_grad=True)\ny = x ** 2\n"
        "g = torch.autograd.grad(y, x)\nprint(g)\nprint(g[0], x.grad)"
    )
    assert [p["text"] for p in ran.printed] == ["(tensor(6.),)", "tensor(6.) None"]


def test_an_optimizer_steps_as_pytorch_s_sgd_with_momentum() -> None:
    ran = run_program(
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)\nfor i in range(3):\n"
        "    opt.zero_grad()\n    loss = (w ** 2).sum()\n    loss.backward()\n    opt.step()\n"
        "print(w)"
    )
    assert [p["text"] for p in ran.printed] == ["tensor([0.0620, 0.1240], requires_grad=True)"]


def test_a_100_epoch_training_loop_runs_within_the_default_limits() -> None:
    ran = run_program(TRAIN.format(n=100))
    d = ran.trace.to_dict()
    assert len(d["passes"]) == 100 and all(p["kept"] for p in d["passes"])
    assert ran.printed[0]["text"] == (
        "tensor(2.9992, requires_grad=True) tensor(2.0004, requires_grad=True)"
    )
    values = [p["value"] for p in d["passes"]]
    assert values[0] == pytest.approx(((3 * 0.5 + 2) ** 2 + 2 * (3**2 / 12)), rel=0.05)
    assert values == sorted(values, reverse=True)  # the loss falls every epoch
    assert_merge_ends_at_the_final_grads(d)


def test_a_1000_epoch_loop_keeps_the_first_and_last_passes_and_summarises_the_rest() -> None:
    start = time.perf_counter()
    ran = run_program(TRAIN.format(n=1000))
    assert time.perf_counter() - start < 10.0  # a hang would blow this; the bench times it
    d = ran.trace.to_dict()
    passes = d["passes"]
    assert len(passes) == 1000 and passes[0]["kept"] and passes[-1]["kept"]
    assert not all(p["kept"] for p in passes)
    summarised = [p for p in passes if not p["kept"]]
    assert all(p["first_step"] is None and p["output"] is None for p in summarised)
    assert all(isinstance(p["value"], float) and p["grads_after"] for p in summarised)
    ids = [n["id"] for n in d["nodes"]]
    assert ids == [f"n{i}" for i in range(len(ids))]  # contiguous, though passes were dropped
    kept = {p["output"] for p in passes if p["kept"]}
    assert kept <= set(ids)
    assert_merge_ends_at_the_final_grads(d)
    assert len(json.dumps(d)) < 20_000_000


def test_a_loop_of_backward_calls_on_a_large_graph_is_refused_by_its_cost() -> None:
    src = "x = 0.5\nh = x\nfor i in range(999):\n    h = h * 1.0001\n"
    src += "for i in range(1000):\n    h.backward(retain_graph=True)"
    start = time.perf_counter()
    with pytest.raises(ProgramError) as info:
        run_program(src)
    assert time.perf_counter() - start < 5.0
    assert info.value.limit in ("max_ops", "max_trace_numbers") and info.value.line == 6


def test_passes_that_do_not_fit_the_trace_are_summarised_not_refused() -> None:
    d = trace(TRAIN.format(n=30), limits=Limits(max_trace_numbers=3_000))
    kept = [p["kept"] for p in d["passes"]]
    assert kept[0] and kept[-1] and not all(kept)
    assert_merge_ends_at_the_final_grads(d)


# --- what reads a trace works across passes ----------------------------------------------------


def test_the_drawing_shows_the_pass_on_show_with_its_leaves_values() -> None:
    from engine import drawing as draw
    from engine.drawing.passes import pass_step, pass_view

    d = trace(TRAIN.format(n=3))
    first = d["passes"][0]
    view, local = pass_view(d, first["last_step"])
    assert local == first["last_step"] - first["first_step"]
    assert all(n.get("pass") in (0, None) for n in view["nodes"])
    w = next(n for n in view["nodes"] if n["label"] == "w")
    assert w["value"] == 0.0  # w as pass 0 saw it, not its final value
    later, _ = pass_view(d, d["passes"][2]["first_step"])
    seed = later["steps"][0]["grads"]
    assert seed[w["id"]] == 0.0 and "passes" not in later  # zeroed before pass 2
    assert (
        pass_step(d, "first") == first["last_step"] and pass_step(d, "last") == len(d["steps"]) - 1
    )
    for k in (0, first["last_step"], d["passes"][1]["first_step"], None):
        svg, _ = draw.render_folded(d, k, draw.collapse_plan(d), lang="en", rankdir="LR")
        ids = {n["id"] for n in pass_view(d, k)[0]["nodes"]}
        assert all(f'id="{i}"' in svg for i in ids)


def test_the_image_and_the_page_take_pass_and_step_across_passes() -> None:
    from urllib.parse import quote

    from fastapi.testclient import TestClient

    from app.main import app

    client = TestClient(app)
    d = trace(LOOP)
    q = "source=" + quote(LOOP)
    first = client.get(f"/api/svg?{q}&pass=first")
    step = client.get(f"/api/svg?{q}&step={d['passes'][0]['last_step']}")
    assert first.status_code == 200 and first.content == step.content
    last = client.get(f"/api/svg?{q}&pass=last")
    assert last.content == client.get(f"/api/svg?{q}").content
    assert client.get(f"/?{q}&pass=1").status_code == 200
