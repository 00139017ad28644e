"""The benchmark still runs (`python -m bench --tiny`): it is not part of what the tests assert
about speed, only a guard against it rotting."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_the_bench_runs_in_its_tiny_mode_and_prints_its_table() -> None:
    pytest.importorskip("micrograd")
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--tiny"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,  # a hang bound, not a speed target (it takes a few seconds)
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    table = done.stdout
    assert table.startswith("| what | target | measured |")
    for row in (
        "first picture",
        "same program again",
        "bytes per node",
        "engine alone",
        "recording",
    ):
        assert row in table, row
