"""The terminal grad table reproduces the lesson's Figure 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.errors import ProgramError
from engine.inputs.valuespec import parse_values
from gradtrace.cli import main


def test_trace_prints_the_lessons_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "x*y + x", "--values", "x=2,y=3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["step", "ran", "x.grad", "y.grad", "x*y.grad", "out.grad"]
    assert lines[2].split() == ["0", "out", "(seed)", "0", "0", "0", "1*"]
    assert lines[3].split() == ["1", "out", "(add)", "1*", "0", "1*", "1"]
    assert lines[4].split() == ["2", "x*y", "(mul)", "4*", "2*", "1", "1"]
    assert lines[-1] == "output = 8; x.grad = 4, y.grad = 2"


def test_assign_shows_the_overwritten_grad(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "x*y + x", "--values", "x:2,y:3", "--accumulate", "assign"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "output = 8; x.grad = 3, y.grad = 2"


def test_a_bad_program_exits_2_with_its_position(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "tanhh(x)"]) == 2
    assert "line 1, column 1: unknown function 'tanhh' — did you mean 'tanh'?" in (
        capsys.readouterr().err
    )


def test_console_script_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gradtrace.cli", "trace", "x*x", "--values", "x=3"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "x.grad = 6" in done.stdout


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x=2,y=3", {"x": 2.0, "y": 3.0}),
        ("x:2, y:-1.5", {"x": 2.0, "y": -1.5}),
        ('{"W": [[1, 2], [3, 4]]}', {"W": [[1, 2], [3, 4]]}),
        ("", {}),
    ],
)
def test_values_text(text: str, expected: dict[str, object]) -> None:
    assert parse_values(text) == expected


@pytest.mark.parametrize("text", ["x", "x=abc", "{not json", "[1, 2]"])
def test_bad_values_text_is_a_program_error(text: str) -> None:
    with pytest.raises(ProgramError):
        parse_values(text)


def test_render_draws_the_pass_asked_for(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "loop.py"
    program.write_text(
        "import torch\nw = torch.tensor(1.0, requires_grad=True)\nfor i in range(3):\n"
        "    loss = (w*2 - 1)**2\n    loss.backward()\n"
    )
    out = {}
    for which in ("first", "1", "last"):
        assert main(["render", f"@{program}", "--pass", which, "-o", str(tmp_path / "p.svg")]) == 0
        out[which] = (tmp_path / "p.svg").read_text()
    assert ">grad 4<" in out["first"] and ">grad 8<" in out["1"] and ">grad 12<" in out["last"]
    assert main(["render", f"@{program}", "--pass", "x"]) == 2
    assert "--pass" in capsys.readouterr().err
