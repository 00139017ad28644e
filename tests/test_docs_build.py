"""The course-notes examples in docs/examples/ build: MkDocs and Sphinx each run
`gradtrace render` at build time, and the built pages hold the generated diagrams."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
SVG = "{http://www.w3.org/2000/svg}"


def build_env() -> dict[str, str]:
    """The examples call `gradtrace` by name, as an author's build would: put ours on PATH."""
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}


def grads_in(svg: str) -> dict[str, str]:
    root = ET.fromstring(svg)
    return {
        t.get("id", ""): "".join(t.itertext())
        for t in root.iter(SVG + "text")
        if (t.get("id") or "").endswith("-grad")
    }


def the_cli(*args: str) -> bytes:
    done = subprocess.run(
        [sys.executable, "-m", "gradtrace.cli", "render", *args],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return done.stdout


def test_the_mkdocs_example_builds_with_its_diagrams(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    site = tmp_path / "mkdocs"
    shutil.copytree(EXAMPLES / "mkdocs", site)
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", "site"],
        cwd=site,
        env=build_env(),
        check=True,
        timeout=120,
    )
    html = (site / "site" / "index.html").read_text("utf-8")
    for k in range(3):
        assert f'src="diagrams/lesson-step-0{k}.svg"' in html
    program = EXAMPLES / "mkdocs" / "programs" / "lesson.txt"
    built = (site / "site" / "diagrams" / "lesson-step-02.svg").read_bytes()
    assert built == the_cli(f"@{program}", "--step", "2")  # what the CLI makes, byte for byte
    assert grads_in(built.decode())["n0-grad"] == "grad 4"
    # The table went into the page, and the stepper is published beside it.
    assert "<code>x*y.grad</code>" in html and "<strong>4</strong>" in html
    assert 'src="diagrams/lesson.html"' in html
    stepper = (site / "site" / "diagrams" / "lesson.html").read_text("utf-8")
    assert 'id="grad-table"' in stepper and "<script>" in stepper


def test_the_sphinx_example_builds_with_its_diagrams_inline(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    src = tmp_path / "sphinx"
    shutil.copytree(EXAMPLES / "sphinx", src)
    out = tmp_path / "html"
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", str(src), str(out)],
        env=build_env(),
        check=True,
        timeout=120,
    )
    html = (out / "index.html").read_text("utf-8")
    # `.. raw:: html :file:` puts the generated SVG itself into the page.
    start = html.index("<svg")
    inline = html[start : html.index("</svg>", start) + len("</svg>")]
    assert grads_in(inline) == {
        "n0-grad": "grad 4",
        "n1-grad": "grad 2",
        "n2-grad": "grad 1",
        "n3-grad": "grad 1",
    }
    program = EXAMPLES / "sphinx" / "programs" / "lesson.txt"
    expected = the_cli(f"@{program}", "--step", "2").decode().split("\n", 1)[1].strip()
    assert inline == expected
    # `.. image::` copies the step-1 SVG; the grad table and the stepper are there too.
    assert 'src="_images/lesson-step-01.svg"' in html
    assert grads_in((out / "_images" / "lesson-step-01.svg").read_text())["n0-grad"] == "grad 1"
    assert 'class="gradtrace-table"' in html and 'src="lesson.html"' in html
    assert 'id="grad-table"' in (out / "lesson.html").read_text("utf-8")
