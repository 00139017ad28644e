"""The training lesson (engine/lessons/training.py): a loop of passes run again without its
zeroing lines, at lr/10 and 10·lr, and its loss over a grid around the descent path. Every
number is checked against real torch 2.13 in float64 running the same program text (the same
edit made), to 1e-9."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from engine.lessons import run_lessons
from engine.lessons.rerun import learning_rate, spliced, without_zeroing, zeroing_statements
from engine.lessons.training import training
from engine.limits import deadline
from engine.program import run_program
from engine.tracing.trace_json import trace_dict

torch = pytest.importorskip("torch")

LINEAR = """import torch
x = torch.linspace(0, 1, 20)
y = 2 * x + 1 + 0.1 * torch.sin(7 * x)
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.5)
for epoch in range({n}):
    loss = ((w * x + b - y) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
"""

MANUAL = """import torch
lr = 0.1
x = torch.tensor([1.0, 2.0, 3.0])
y = torch.tensor([2.0, 4.1, 5.9])
w = torch.tensor(0.5, requires_grad=True)
for i in range(12):
    loss = ((w * x - y) ** 2).sum()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
    w.grad.zero_()
"""

NONE = """import torch
w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
for i in range(6):
    loss = (w ** 2).sum() + w[0] * w[1]
    loss.backward()
    with torch.no_grad():
        w.sub_(0.2 * w.grad)
    w.grad = None
"""

LOGISTIC = """import torch
x = torch.tensor([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 0.3, -0.2])
t = torch.tensor([0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0])
w = torch.tensor(0.0, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=1.0)
for step in range(30):
    p = torch.sigmoid(w * x + b)
    loss = -(t * torch.log(p) + (1 - t) * torch.log(1 - p)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@dataclass
class TorchPasses:
    loss: list[float] = field(default_factory=list)
    before: list[dict[str, np.ndarray]] = field(default_factory=list)
    grads: list[dict[str, np.ndarray | None]] = field(default_factory=list)
    names: dict[str, Any] = field(default_factory=dict)


@contextlib.contextmanager
def recorded(out: TorchPasses, leaves: list[str]) -> Iterator[None]:
    """Real torch in float64, each backward() recording the loss, the named leaves' values
    before it and their .grad after it."""
    backward = torch.Tensor.backward
    dtype = torch.get_default_dtype()

    def values() -> dict[str, np.ndarray]:
        return {k: out.names[k].detach().numpy().copy() for k in leaves}

    def traced(self: Any, *args: Any, **kwargs: Any) -> None:
        out.loss.append(float(self.detach().sum()))
        out.before.append(values())
        backward(self, *args, **kwargs)
        out.grads.append({k: None if out.names[k].grad is None
                          else out.names[k].grad.numpy().copy() for k in leaves})  # fmt: skip

    torch.set_default_dtype(torch.float64)
    torch.Tensor.backward = traced
    try:
        yield
    finally:
        torch.Tensor.backward = backward
        torch.set_default_dtype(dtype)


def run_torch(source: str, leaves: list[str]) -> TorchPasses:
    out = TorchPasses()
    with recorded(out, leaves):
        exec(compile(source, "<program>", "exec"), out.names)  # torch's run of the program
    return out


def lesson(source: str) -> dict[str, Any]:
    d = run_lessons(run_program(source), ["training"])["training"]
    return json.loads(json.dumps(d, allow_nan=False))  # what the answer sends


def flat(t: TorchPasses, leaves: list[str], k: int, what: str) -> list[float | None]:
    row = (t.grads if what == "grads" else t.before)[k]
    out: list[float | None] = []
    for name in leaves:
        v = row[name]
        out.extend([None] if v is None else np.asarray(v, float).reshape(-1).tolist())
    return out


def assert_close(a: list[Any], b: list[Any]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            assert x is None and y is None
        else:
            assert x == pytest.approx(y, rel=1e-9, abs=1e-12)


def assert_series_as_torch(got: dict[str, Any], t: TorchPasses, leaves: list[str]) -> None:
    n = len(t.loss)
    assert_close(got["loss"][:n], t.loss)
    for k in range(n):
        assert_close(got["values"][k], flat(t, leaves, k, "before"))
        assert_close(got["grads"][k], flat(t, leaves, k, "grads"))


def test_without_zero_grad_the_grads_and_losses_are_torch_s_without_it() -> None:
    source = LINEAR.format(n=12)
    d = lesson(source)
    leaves = ["w", "b"]
    assert d["training"] and d["passes"] == 12 and [c["label"] for c in d["coords"]] == leaves
    assert_series_as_torch(d, run_torch(source, leaves), leaves)
    z = d["zero_grad"]
    assert z["available"] and [ln["line"] for ln in z["lines"]] == [11]
    assert z["lines"][0]["text"] == "opt.zero_grad()"
    missing = source.replace("    opt.zero_grad()\n", "    pass\n")
    t = run_torch(missing, leaves)
    assert_series_as_torch(z["without"], t, leaves)
    # passes 1..3: w.grad grows, each the sum of every pass's grad so far (torch's own)
    assert [g[0] for g in z["without"]["grads"][:3]] == pytest.approx(
        [float(t.grads[k]["w"]) for k in range(3)], rel=1e-9
    )
    # pass 1 agrees; pass 2's grads differ (they hold pass 1's too), then pass 3's loss
    assert (z["first_grad_pass"], z["first_loss_pass"]) == (1, 2)
    trace = run_program(source).trace.to_dict()
    assert z["first_step"] == trace["passes"][1]["first_step"]
    leaf_step = trace["steps"][z["first_leaf_step"]]
    ids = {c["id"] for c in d["coords"]}
    assert leaf_step["pass"] == 1 and ids & set(leaf_step["grads"])
    between = trace["steps"][z["first_step"] + 1 : z["first_leaf_step"]]
    assert not any(ids & set(s["grads"]) for s in between)


@pytest.mark.parametrize("source, leaves", [(MANUAL, ["w"]), (NONE, ["w"]), (LOGISTIC, ["w", "b"])])
def test_each_way_of_zeroing_is_found_and_taken_out_as_torch_runs_it(
    source: str, leaves: list[str]
) -> None:
    d = lesson(source)
    assert_series_as_torch(d, run_torch(source, leaves), leaves)
    z = d["zero_grad"]
    assert z["available"] and len(z["lines"]) == 1
    line = z["lines"][0]["line"]
    lines = source.split("\n")
    missing = "\n".join(lines[: line - 1] + [lines[line - 1].split("w.")[0].split("opt.")[0]
                                            + "pass"] + lines[line:])  # fmt: skip
    if z["without"]["error"] is None:
        assert_series_as_torch(z["without"], run_torch(missing, leaves), leaves)
    assert z["first_grad_pass"] == 1


def test_the_learning_rates_run_as_torch_runs_them_at_lr_over_10_and_10_lr() -> None:
    source = LINEAR.format(n=15)
    r = lesson(source)["rates"]
    assert r["available"] and r["lr"] == 0.5 and r["how"] == "optimizer" and r["line"] == 6
    assert [x["lr"] for x in r["runs"]] == pytest.approx([0.05, 0.5, 5.0])
    for run in r["runs"]:
        t = run_torch(source.replace("lr=0.5", f"lr={run['lr']!r}"), ["w", "b"])
        assert_close(run["loss"], t.loss)
        for k in range(len(t.loss)):
            assert_close(run["values"][k], flat(t, ["w", "b"], k, "before"))
    assert [x["diverged"] for x in r["runs"]] == [False, False, True]


def test_the_learning_rate_is_found_behind_a_name_and_in_an_update() -> None:
    import ast

    rate = learning_rate(ast.parse(MANUAL))
    assert rate is not None and (rate.value, rate.how, rate.node.lineno) == (0.1, "update", 2)
    rate = learning_rate(ast.parse(NONE))
    assert rate is not None and (rate.value, rate.node.lineno) == (0.2, 7)
    assert learning_rate(ast.parse("import torch\nw = torch.tensor(1.0)\nL = w * 2")) is None


def test_the_contours_are_pass_1_s_loss_at_each_grid_point_as_torch_computes_it() -> None:
    source = LINEAR.format(n=20)
    p = lesson(source)["path"]
    g = p["grid"]
    assert p["dims"] == 2 and p["lr"] == 0.5
    assert len(g["x"]) == len(g["y"]) == 25 and len(g["loss"]) == 25
    torch.set_default_dtype(torch.float64)
    try:
        x = torch.linspace(0, 1, 20)
        y = 2 * x + 1 + 0.1 * torch.sin(7 * x)
        for i, j in [(0, 0), (7, 23), (15, 15), (24, 24), (24, 0)]:
            w, b = g["x"][j], g["y"][i]
            want = float(((w * x + b - y) ** 2).mean())
            assert g["loss"][i][j] == pytest.approx(want, rel=1e-9)
    finally:
        torch.set_default_dtype(torch.float32)
    # the grid holds the whole path
    d = lesson(source)
    ws, bs = [v[0] for v in d["values"]], [v[1] for v in d["values"]]
    assert g["x"][0] < min(ws) <= max(ws) < g["x"][-1]
    assert g["y"][0] < min(bs) <= max(bs) < g["y"][-1]


def test_one_parameter_gets_a_loss_curve_three_get_none() -> None:
    p = lesson(MANUAL)["path"]
    assert p["dims"] == 1 and len(p["grid"]["x"]) == 121 and p["grid"]["y"] is None
    w = p["grid"]["x"][40]
    want = sum((w * a - b) ** 2 for a, b in [(1.0, 2.0), (2.0, 4.1), (3.0, 5.9)])
    assert p["grid"]["loss"][40] == pytest.approx(want, rel=1e-9)
    d = lesson(NONE)
    assert d["path"]["dims"] == 3 and d["path"]["grid"] is None
    assert [c["label"] for c in d["coords"]] == ["w[0]", "w[1]", "w[2]"]


def test_a_program_of_one_pass_or_without_zeroing_says_so() -> None:
    assert lesson("x*y + x".replace("x", "2.0").replace("y", "3.0"))["training"] is False
    d = lesson("import torch\nw = torch.tensor(1.0, requires_grad=True)\n"
               "for i in range(3):\n    (w * 3).backward()\n")  # fmt: skip
    assert d["training"] and d["zero_grad"] == {"available": False}


def test_the_lesson_leaves_the_run_as_it_found_it() -> None:
    run = run_program(LINEAR.format(n=10))
    before = json.dumps(trace_dict(run.trace))
    training(run)
    assert json.dumps(trace_dict(run.trace)) == before


def test_a_zeroing_statement_over_two_lines_keeps_the_line_numbers() -> None:
    import ast

    source = "for i in range(2):\n    w.grad = (\n        None)  # gone\n    y = 1\n"
    tree = ast.parse(source)
    text = spliced(source, without_zeroing(zeroing_statements(tree)))
    assert text.count("\n") == source.count("\n")
    after = ast.parse(text)
    assert [type(s).__name__ for s in after.body[0].body] == ["Pass", "Assign"]  # type: ignore[attr-defined]
    assert after.body[0].body[1].lineno == 4  # type: ignore[attr-defined]


def test_a_run_that_overflows_without_zero_grad_keeps_its_passes_and_its_error() -> None:
    source = LINEAR.format(n=100)
    z = lesson(source)["zero_grad"]
    w = z["without"]
    assert w["passes"] == len(w["loss"]) <= 100
    if w["error"] is not None:
        assert w["error"]["en"] and w["error"]["zh"]


def test_a_100_epoch_loop_s_lesson_is_quick_and_small() -> None:
    run = run_program(LINEAR.format(n=100))
    start = time.perf_counter()
    with deadline(10):
        d = training(run)
    took = time.perf_counter() - start
    size = len(json.dumps(d))
    assert took < 1.0 and size < 200_000, (took, size)


GALLERY = ["linear-regression", "logistic-regression", "lr-diverges"]


@pytest.mark.parametrize("name", GALLERY)
def test_the_gallery_s_training_loops_run_within_the_default_limits_as_torch(name: str) -> None:
    from app.examples import EXAMPLES

    ex = next(e for e in EXAMPLES if e["id"] == name)
    assert ex["lesson"] == "training"
    d = lesson(ex["source"])
    leaves = [c["label"] for c in d["coords"]]
    assert_series_as_torch(d, run_torch(ex["source"], leaves), leaves)
    assert d["zero_grad"]["available"] and d["rates"]["available"]
    assert d["path"]["grid"] is not None and d["path"]["dims"] == len(leaves) <= 2
    for run in d["rates"]["runs"]:  # each rate's loop, as torch runs it with that rate
        lines = ex["source"].split("\n")  # the rate's literal, on its line and in the updates
        for i, line in enumerate(lines):
            if i + 1 == d["rates"]["line"] or ".grad" in line:
                lines[i] = line.replace(repr(d["rates"]["lr"]), repr(run["lr"]))
        t = run_torch("\n".join(lines), leaves)
        assert_close(run["loss"], t.loss)
    if name == "lr-diverges":
        assert [r["diverged"] for r in d["rates"]["runs"]] == [False, True, True]


def test_the_same_rate_written_at_each_update_is_changed_at_each() -> None:
    import ast

    from app.examples import EXAMPLES

    source = next(e for e in EXAMPLES if e["id"] == "logistic-regression")["source"]
    rate = learning_rate(ast.parse(source))
    assert rate is not None and rate.value == 0.8 and len(rate.others) == 1


def test_the_misconceptions_lesson_names_the_loop_s_own_zeroing_line() -> None:
    loop = run_lessons(run_program(MANUAL), ["mistakes"])["mistakes"]["zero_grad"]["loop"]
    assert loop == {"lines": [{"line": 11, "text": "w.grad.zero_()"}]}
    one = run_lessons(run_program("x = 2.0\nL = x * x"), ["mistakes"])["mistakes"]["zero_grad"]
    assert one["loop"] is None


def test_three_parameters_get_contours_over_the_two_chosen_the_others_held() -> None:
    run = run_program(NONE)
    p = run_lessons(run, ["training"], options={"training": {"pair": [0, 2]}})["training"]["path"]
    g = p["grid"]
    assert p["pair"] == [0, 2] and len(g["x"]) == len(g["y"]) == 25
    torch.set_default_dtype(torch.float64)
    try:
        for i, j in [(0, 0), (12, 3), (24, 24)]:
            w = torch.tensor([g["x"][j], -2.0, g["y"][i]])  # w[1] as before pass 1
            want = float((w**2).sum() + w[0] * w[1])
            assert g["loss"][i][j] == pytest.approx(want, rel=1e-9)
    finally:
        torch.set_default_dtype(torch.float32)
    for bad in ([0, 0], [0, 9], [True, 1], "01"):
        d = training(run, pair=bad)  # type: ignore[arg-type]
        assert d["path"]["grid"] is None and "pair" not in d["path"]


def test_the_reruns_stop_at_the_request_s_deadline() -> None:
    from engine.errors import ProgramError

    run = run_program(LINEAR.format(n=1000))
    start = time.perf_counter()
    with pytest.raises(ProgramError) as err, deadline(0.05):
        training(run)
    assert err.value.code == "timeout" and time.perf_counter() - start < 1.0
