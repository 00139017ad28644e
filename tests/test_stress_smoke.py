"""`python -m bench.stress --quick` runs against a real server (loopback, one worker) and prints
its table: a row per case of the quick set (one per hostile class) and the summary line. Nothing
here is about speed or memory: those are what the script reports, not what it must achieve."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import stress, stress_programs

ROOT = Path(__file__).resolve().parent.parent
RUN_SECONDS = 90  # the quick run takes about 30 s; past this the script hangs, a failure


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_quick_run_prints_a_row_per_case_and_the_count_of_targets() -> None:
    cases = [c for c in stress.all_cases(stress.make_config(quick=True)) if c.quick]
    assert [c.cls for c in cases] == list(stress.CLASSES)  # one case of each class, in order

    done = subprocess.run(
        [sys.executable, "-m", "bench.stress", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    table = [line.split("|")[1:-1] for line in lines if line.startswith("|")]
    assert table[0][0].strip() == "class" and set(table[1][0]) == {"-"}  # header, rule
    rows = table[2:]
    assert [(r[0].strip(), r[1].strip()) for r in rows] == [(c.cls, c.name) for c in cases]
    for r in rows:
        assert len(r) == 7, r
        # Every case ran: the server started, no case raised (a 5xx or a big RSS is a finding,
        # not a failure of the script).
        assert not r[2].strip().startswith(("not run", "failed")), r
    summary = re.fullmatch(r"targets: (\d+) met, (\d+) missed", lines[-1])
    assert summary, lines[-1]
    # Each row is held to at least three targets: answered, peak RSS, settled RSS.
    assert int(summary[1]) + int(summary[2]) >= 3 * len(cases)


def test_the_stalled_uploads_promise_a_whole_request_and_send_half() -> None:
    whole = stress.padded_body(1000)
    assert len(whole) == 1000 and json.loads(whole)["source"].strip() == "x*y + x"
    head = stress.upload_head("/api/trace", 1000)
    assert head.startswith(b"POST /api/trace HTTP/1.1\r\n")
    assert head.endswith(b"Content-Length: 1000\r\n\r\n")


def test_the_skip_dag_uses_the_earlier_values_that_exist() -> None:
    lines = stress_programs.skip_dag(90).splitlines()
    assert lines[1] == "h0 = x" and lines[2] == "h1 = h0" and len(lines) == 91
    assert "h60 = h59 + h50 + h30 + h10" in lines
    assert "h5 = h4 + x" in stress_programs.skip_dag(20, pad=True).splitlines()


def test_an_answer_is_labelled_with_the_setting_that_stopped_it() -> None:
    svg = b"<svg><text>takes longer than 1 s (max_layout_seconds); it is too</text></svg>"
    assert stress._label(413, svg, render=False) == "413 max_layout_seconds"
    inner = json.dumps({"error": {"message": "…", "limit": "max_nodes"}, "status": 413})
    assert stress._label(200, inner.encode(), render=True) == "200/413 max_nodes"
    assert stress._label(200, b'{"trace": {}}', render=True) == "200"


def test_two_answers_are_told_apart_by_where_they_differ() -> None:
    a = json.dumps({"svg": "<svg/>", "trace": {"nodes": [1], "steps": [2]}}).encode()
    b = json.dumps({"svg": "<svg/>", "trace": {"nodes": [1], "steps": [3]}}).encode()
    assert stress.differs_in(a, b) == ["trace.steps"]
    assert stress.differs_in(a, a) == []
    assert stress.differs_in(a, b"<svg/>") == ["body"]
