"""Bounded layouts (engine/drawing/render.py `to_svg`, graphviz.py, budget.py): a layout has a
budget of its own (max_layout_seconds) of CPU time and is stopped past it; the verdict is
remembered by the graph's shape, so a replay is refused without Graphviz; a layout held up by a
busy machine (wall time passing, not CPU time) is not judged by it; small pictures have their
own lane and never queue behind large layouts.

The bomb is a DAG whose every value adds the ones 1, 10, 30 and 50 steps back: 121 nodes that
take `dot` some 20 s on this kind of machine, far past any budget used here."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from engine import drawing as draw
from engine import run
from engine.drawing import budget as layout_budget
from engine.drawing import graphviz, render
from engine.limits import Limits, deadline

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")


def bomb(n: int = 70, seed: float = 1.0) -> str:
    """h_i = h_{i-1} + h_{i-10} + h_{i-30} + h_{i-50}, unrolled by hand (the language has no
    lists of values)."""
    lines = [f"h0 = {seed}"]
    for i in range(1, n):
        lines.append(f"h{i} = " + " + ".join(f"h{i - k}" for k in (1, 10, 30, 50) if i >= k))
    lines.append(f"L = h{n - 1}")
    return "\n".join(lines)


def trace_of(source: str) -> dict[str, Any]:
    return run(source).to_dict()


class Counted:
    """graphviz.run_dot, counting its calls and the ones running now."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.calls = 0
        self.running = 0
        self.lock = threading.Lock()

    def __call__(self, dot: bytes, timeout: float, wall: float | None = None) -> Any:
        with self.lock:
            self.calls += 1
            self.running += 1
        try:
            return self.real(dot, timeout, wall)
        finally:
            with self.lock:
                self.running -= 1


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counted]:
    """A fresh start (no layouts cached, no verdicts remembered) with run_dot counted. The wall
    ceiling is raised (10 budgets, not 4): these tests are about CPU time, and must give the
    same verdicts on a CI machine however loaded; the ceiling's own tests set it back."""
    monkeypatch.setattr(layout_budget, "WALL_CEILING_BUDGETS", 10.0)
    draw.to_svg.cache_clear()
    render.forget_layout_timeouts()
    spy = Counted(graphviz.run_dot)
    monkeypatch.setattr(graphviz, "run_dot", spy)
    yield spy
    draw.to_svg.cache_clear()
    render.forget_layout_timeouts()


def refused(trace: dict[str, Any], **options: Any) -> draw.DrawError:
    with pytest.raises(draw.DrawError) as err:
        draw.render_svg(trace, None, **options)
    return err.value


def test_a_layout_past_its_budget_is_refused_and_names_the_setting(counted: Counted) -> None:
    start = time.monotonic()
    err = refused(trace_of(bomb()), timeout=0.3)
    took = time.monotonic() - start
    assert err.code == "layout_timeout" and err.limit == "max_layout_seconds"
    assert err.message == (
        "Laying out this graph takes longer than 0.3 s (max_layout_seconds); it is too large "
        "to draw."
    )
    # At least 0.3 s: its CPU time cannot pass faster than wall time. At most the 3.25 s wall
    # ceiling (counted's), and far less unless the machine gives it under a tenth of a CPU.
    assert 0.3 <= took < 3.5 and counted.calls == 1


def test_a_replay_of_a_shape_that_ran_out_is_refused_at_once_without_graphviz(
    counted: Counted,
) -> None:
    refused(trace_of(bomb()), timeout=0.3)
    assert counted.calls == 1
    other_numbers = trace_of(bomb(seed=2.5))  # the same shape: the same layout
    err = refused(other_numbers, timeout=0.3)
    assert counted.calls == 1 and err.code == "layout_timeout"
    lay = draw.build(other_numbers, None)  # what render_svg hands to_svg, timed alone
    start = time.monotonic()
    with pytest.raises(draw.DrawError):
        draw.to_svg(lay.geometry or lay.dot, timeout=0.3)
    # A hash looked up; a layout would take 0.3 s at least (CPU time cannot pass faster).
    assert time.monotonic() - start < 0.3 and counted.calls == 1
    # A larger budget is a new question: that one runs.
    refused(other_numbers, timeout=0.5)
    assert counted.calls == 2


def test_a_layout_cut_short_by_the_request_deadline_is_not_remembered(counted: Counted) -> None:
    trace = trace_of(bomb())
    with deadline(0.3):
        err = refused(trace, timeout=5.0)
    assert err.code == "timeout" and err.limit == "max_request_seconds"
    assert "(max_request_seconds)" in err.message
    # Its shape was not judged: with no deadline the layout runs again, on its own budget.
    err = refused(trace, timeout=0.3)
    assert err.code == "layout_timeout" and counted.calls == 2


def test_a_layout_past_its_budget_is_stopped_and_the_next_one_works(
    monkeypatch: pytest.MonkeyPatch, counted: Counted
) -> None:
    helpers: list[graphviz._Helper] = []
    real_take = graphviz._take

    def take() -> graphviz._Helper | None:
        helper = real_take()
        if helper is not None:
            helpers.append(helper)
        return helper

    monkeypatch.setattr(graphviz, "_take", take)
    refused(trace_of(bomb()), timeout=0.3)
    if not helpers:
        pytest.skip("no Graphviz helper here (libgvc missing): `dot` runs under a timeout")
    stopped = helpers[-1].proc
    assert stopped.poll() is not None  # killed and reaped: its CPU is free
    assert draw.render_svg(trace_of("a = 2.0\nL = a*a + a"), None).startswith("<svg")
    assert helpers[-1].proc.pid != stopped.pid  # a new helper took its place


def test_a_small_picture_is_not_queued_behind_two_large_layouts(counted: Counted) -> None:
    bombs = [trace_of(bomb(69)), trace_of(bomb(71))]  # two shapes: neither can be refused early
    verdicts: list[str] = []

    def draw_bomb(trace: dict[str, Any]) -> None:
        verdicts.append(refused(trace, timeout=1.2).code)

    threads = [threading.Thread(target=draw_bomb, args=(b,)) for b in bombs]
    for thread in threads:
        thread.start()
    until = time.monotonic() + 2.0
    while counted.running < 2 and time.monotonic() < until:
        time.sleep(0.01)
    assert counted.running == 2  # both large layouts are in Graphviz now
    start = time.monotonic()
    svg = draw.render_svg(trace_of("x = 3.0\ny = 2.0\nL = x*y + x"), None, legend=True)
    took = time.monotonic() - start
    assert counted.running == 2  # ...and still are: the small one did not wait for them
    for thread in threads:
        thread.join(25)
    assert svg.startswith("<svg") and counted.calls == 3
    assert took < 1.5, f"a 4-node picture took {took:.2f} s behind two large layouts"
    assert verdicts == ["layout_timeout", "layout_timeout"]


def test_a_large_layout_waits_for_a_slot_a_bounded_time_then_is_busy(counted: Counted) -> None:
    bombs = [trace_of(bomb(69)), trace_of(bomb(71))]
    threads = [threading.Thread(target=refused, args=(b,), kwargs={"timeout": 1.0}) for b in bombs]
    for thread in threads:
        thread.start()
    until = time.monotonic() + 2.0
    while counted.running < 2 and time.monotonic() < until:
        time.sleep(0.01)
    assert counted.running == 2
    start = time.monotonic()
    err = refused(trace_of(bomb(72)), timeout=0.2)
    took = time.monotonic() - start
    for thread in threads:
        thread.join(10)
    assert err.code == "busy" and counted.calls == 2  # never reached Graphviz
    assert render.SLOT_WAIT_BUDGETS * 0.2 <= took < 1.0


def test_the_small_lane_is_chosen_by_the_number_of_statements() -> None:
    assert render.is_small_layout(draw.to_dot(trace_of("x*y + x"), None, legend=True))
    assert not render.is_small_layout(draw.to_dot(trace_of(bomb()), None))
    one_line = "digraph { " + " ".join(f"n{i} -> n{i + 1};" for i in range(1_000)) + " }"
    assert not render.is_small_layout(one_line)


def test_the_default_budget_is_the_setting_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, counted: Counted
) -> None:
    assert render.default_layout_seconds() == Limits().max_layout_seconds == 2.0
    monkeypatch.setenv("GRADTRACE_MAX_LAYOUT_SECONDS", "0.25")
    render.default_layout_seconds.cache_clear()
    try:
        assert render.default_layout_seconds() == 0.25
        err = refused(trace_of(bomb()))
        assert "longer than 0.25 s (max_layout_seconds)" in err.message
    finally:
        monkeypatch.delenv("GRADTRACE_MAX_LAYOUT_SECONDS")
        render.default_layout_seconds.cache_clear()
    assert render.default_layout_seconds() == 2.0


def test_dot_without_a_helper_is_bounded_by_the_budget_too(
    monkeypatch: pytest.MonkeyPatch, counted: Counted
) -> None:
    """GRADTRACE_LAYOUT=dot (or no libgvc): `dot` itself, killed past the budget."""
    monkeypatch.setattr(graphviz, "_take", lambda: None)
    start = time.monotonic()
    err = refused(trace_of(bomb()), timeout=0.3)
    assert err.code == "layout_timeout" and time.monotonic() - start < 3.5
    dot = draw.to_dot(trace_of(bomb(71)), None).encode()
    with pytest.raises(layout_budget.CpuTimeExpired):  # `dot`'s own CPU time, read by its pid
        graphviz.run_dot(dot, timeout=0.2)
    # A `dot` that gets no CPU time (as on a machine too busy) stops at the wall bound instead.
    monkeypatch.setattr(layout_budget, "cpu_seconds", lambda pid: 1.0)
    start = time.monotonic()
    with pytest.raises(layout_budget.WallTimeExpired):
        graphviz.run_dot(dot, timeout=0.2, wall=0.4)
    assert 0.4 <= time.monotonic() - start < 5.0  # stopped: this graph takes `dot` some 20 s
    # ...and a small graph goes through `dot` whole: stdin written, stdout and stderr read.
    done = graphviz.run_dot(b"digraph { a -> b }", timeout=5)
    assert done.returncode == 0 and done.stdout.rstrip().endswith(b"</svg>")
    done = graphviz.run_dot(b"digraph { a -> }", timeout=5)
    assert done.returncode != 0 and b"syntax error" in done.stderr


RNN = (
    "Wh = randn(3, 3)\nWx = randn(3, 2)\nxs = randn(6, 2)\nh = zeros(3)\n"
    "for t in range(6):\n    h = tanh(Wh @ h + Wx @ xs[t])\nL = h.sum()"
)


@pytest.mark.parametrize("code", ["layout_timeout", "timeout"])
def test_a_loop_whose_full_layout_runs_out_of_budget_is_drawn_collapsed(
    monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    """As a loop with too many nodes is: out of its budget, the full drawing gives way to the
    collapsed one. Out of the request's time (code "timeout"), nothing more is tried."""
    real = draw.to_svg

    def full_ones_run_out(dot: str, timeout: float | None = None) -> str:
        if draw.LOOP_BOX not in dot:
            raise draw.DrawError("limit_max_layout_seconds", code, "max_layout_seconds", max=2.0)
        return real(dot, timeout)

    monkeypatch.setattr(render, "to_svg", full_ones_run_out)
    trace = trace_of(RNN)
    plan = draw.collapse_plan(trace)
    assert plan is not None
    if code == "timeout":
        with pytest.raises(draw.DrawError):
            draw.render_folded(trace, None, plan, collapse=False)
        return
    svg, folded = draw.render_folded(trace, None, plan, collapse=False)
    assert folded == plan and f'id="{draw.LOOP_BOX}"' in svg


# --- CPU time, not wall time ------------------------------------------------------------------


class FakeClocks:
    """A wall clock and a CPU clock per process, moved by hand; counts the CPU time reads."""

    def __init__(self) -> None:
        self.now = 100.0
        self.cpu: dict[int, float | None] = {}
        self.reads = 0

    def clock(self) -> float:
        return self.now

    def reader(self, pid: int) -> float | None:
        self.reads += 1
        return self.cpu.get(pid)

    def budget(self, cpu: float = 1.0, wall: float | None = None) -> layout_budget.Budget:
        return layout_budget.Budget(
            cpu, layout_budget.wall_ceiling(cpu) if wall is None else wall, self.reader, self.clock
        )


def test_wall_time_passing_without_cpu_time_does_not_run_out_the_budget() -> None:
    """What a loaded machine does to a layout: 3 s go by and it gets 0.5 s of CPU."""
    t = FakeClocks()
    t.cpu[7] = 40.0  # a warm helper: CPU time of its earlier layouts
    budget = t.budget(1.0)
    budget.watch(7)
    t.now += 3.0
    t.cpu[7] = 40.5
    assert budget.check() > 0  # no verdict: 3 s of wall time is not 1 s of CPU time
    budget.finish()  # and an answer now is an answer
    assert budget.spent() == pytest.approx(0.5)
    t.now += 1.3  # past the ceiling, 4 × 1 s + 0.25 s, with still 0.5 s of CPU: busy
    with pytest.raises(layout_budget.WallTimeExpired) as err:
        budget.check()
    assert not isinstance(err.value, layout_budget.CpuTimeExpired)
    assert err.value.timeout == layout_budget.wall_ceiling(1.0) == 4.25


def test_cpu_time_past_the_budget_runs_it_out_while_waiting_or_at_the_answer() -> None:
    t = FakeClocks()
    t.cpu[7] = 40.0
    budget = t.budget(1.0)
    budget.watch(7)
    t.now, t.cpu[7] = t.now + 1.05, 41.02
    with pytest.raises(layout_budget.CpuTimeExpired) as err:
        budget.check()
    assert err.value.timeout == 1.0
    # A layout whose answer comes between two checks is judged by its cost all the same.
    t.cpu[8] = 3.0
    done = t.budget(1.0)
    done.watch(8)
    t.now, t.cpu[8] = t.now + 1.2, 4.1
    with pytest.raises(layout_budget.CpuTimeExpired):
        done.finish()


def test_the_cpu_time_is_not_read_before_the_budget_could_have_run_out() -> None:
    """So a small layout (done in a few ms) costs one read of /proc, when it starts."""
    t = FakeClocks()
    t.cpu[7] = 0.0
    budget = t.budget(1.0)
    budget.watch(7)
    assert t.reads == 1
    t.now += 0.6
    assert budget.check() == pytest.approx(0.4)  # cannot run out sooner than in 0.4 s
    budget.finish()
    assert t.reads == 1
    t.now += 0.5
    t.cpu[7] = 0.3  # a quarter of a CPU
    assert budget.check() == pytest.approx(0.7)  # 0.7 s of CPU time left
    t.cpu[7] = 0.995
    t.now += 0.7
    assert budget.check() == layout_budget.POLL  # almost out: checked every POLL seconds
    assert t.reads == 3


def test_the_cpu_time_of_every_process_a_layout_runs_in_counts() -> None:
    """A helper that dies is replaced by `dot` for the same layout: the budget goes on."""
    t = FakeClocks()
    t.cpu[7], t.cpu[8] = 10.0, 0.0
    budget = t.budget(1.0)
    budget.watch(7)
    t.now, t.cpu[7] = t.now + 0.6, 10.6
    assert budget.spent() == pytest.approx(0.6)  # read as it dies (before it is reaped)
    t.cpu.pop(7)  # gone: what it had used was read last
    budget.watch(8)
    t.now, t.cpu[8] = t.now + 0.5, 0.5
    with pytest.raises(layout_budget.CpuTimeExpired):
        budget.check()
    assert budget.spent() == pytest.approx(1.1)


def test_without_proc_wall_time_stands_in_for_cpu_time() -> None:
    t = FakeClocks()  # knows no process: as where /proc cannot be read
    budget = t.budget(1.0)
    budget.watch(7)
    t.now += 0.9
    assert budget.check() == pytest.approx(0.1)
    t.now += 0.2
    with pytest.raises(layout_budget.CpuTimeExpired):
        budget.check()


def test_proc_cpu_seconds_reads_a_process_cpu_time() -> None:
    before = layout_budget.proc_cpu_seconds(os.getpid())
    if before is None:
        pytest.skip("no /proc here: wall time stands in (see the test above)")
    spin = time.process_time()
    while time.process_time() - spin < 0.05:
        pass
    after = layout_budget.proc_cpu_seconds(os.getpid())
    assert after is not None and 0.04 <= after - before < 1.0
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert layout_budget.proc_cpu_seconds(gone.pid) is None  # reaped: nothing to read


def test_a_layout_that_gets_no_cpu_time_is_busy_and_not_remembered(
    monkeypatch: pytest.MonkeyPatch, counted: Counted
) -> None:
    """The whole way through a real helper, with its CPU clock frozen: the layout gets no CPU
    time (a machine too busy), so the wall ceiling stops it: "busy", a 503 in the app, and its
    shape is not judged."""
    monkeypatch.setattr(layout_budget, "WALL_CEILING_BUDGETS", 4.0)
    monkeypatch.setattr(layout_budget, "cpu_seconds", lambda pid: 1.0)
    trace = trace_of(bomb())
    start = time.monotonic()
    err = refused(trace, timeout=0.2)
    took = time.monotonic() - start
    assert err.code == "busy" and err.limit == "max_layout_seconds"
    assert err.message == (
        "The server is too busy to lay out this graph now: in 1.05 s it got less than the 0.2 s "
        "of computing time a layout may use. Try again in a moment."
    )
    # Its DOT built, a helper started, 1.05 s waited (4 × 0.2 s + 0.25 s), and stopped: the graph
    # would take some 20 s.
    assert 1.05 <= took < 5.0
    monkeypatch.setattr(layout_budget, "cpu_seconds", layout_budget.proc_cpu_seconds)
    err = refused(trace, timeout=0.2)  # not refused at once: it runs, and runs out of CPU time
    assert err.code == "layout_timeout" and counted.calls == 2


def _cpu_of(pid: int) -> float:
    return layout_budget.proc_cpu_seconds(pid) or 0.0


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_a_layout_sharing_its_cpu_with_three_busy_loops_is_drawn_and_not_judged(
    monkeypatch: pytest.MonkeyPatch, counted: Counted
) -> None:
    """Real contention: the helper and three busy loops pinned to one CPU, so the layout gets
    about a quarter of it and takes some 4 times its CPU time in wall time. Its budget is 2.5
    times the CPU time the same layout took alone, measured first in the same helper (a fixed
    budget passed or failed with the machine's speed): more than the layout uses, less than
    the wall time it takes. Measured in wall time it was refused and its shape remembered."""
    if layout_budget.proc_cpu_seconds(os.getpid()) is None:
        pytest.skip("no /proc here: wall time stands in for CPU time")
    dot = draw.to_dot(trace_of(bomb(46)), None)
    cpu = max(os.sched_getaffinity(0))
    helper = graphviz._Helper()
    monkeypatch.setattr(graphviz, "_take", lambda: helper)
    loops: list[subprocess.Popen[bytes]] = []
    try:
        os.sched_setaffinity(helper.proc.pid, {cpu})
        alone = layout_budget.Budget(math.inf, 60.0)
        assert helper.layout(dot.encode(), alone) is not None
        budget = max(0.05, 2.5 * alone.spent())
        for _ in range(3):
            loops.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
            os.sched_setaffinity(loops[-1].pid, {cpu})
        until = time.monotonic() + 5.0  # until all three spin (past the interpreter's start)
        while time.monotonic() < until and any(_cpu_of(p.pid) < 0.05 for p in loops):
            time.sleep(0.02)
        start = time.monotonic()
        svg = draw.to_svg(dot, timeout=budget)
        took = time.monotonic() - start
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
        helper.close()
    assert took > budget, (
        f"no contention after all ({took:.2f} s, budget {budget:.2f} s): the test shows nothing"
    )
    assert svg.rstrip().endswith("</svg>")
    assert not render._ran_out(render._shape_key(dot), budget)
    assert math.isfinite(took) and counted.calls == 1
