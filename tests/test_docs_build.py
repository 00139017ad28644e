"""The authors' integrations build for real: `sphinx-build` on docs/examples/sphinx/ (a
reStructuredText page and a MyST Markdown page, both with the gradtrace directive) and
`mkdocs build` on docs/examples/mkdocs/ (the default theme) and docs/examples/mkdocs-material/
(Material, with superfences, admonitions and content tabs). Every example is built twice, each
time in a fresh folder, and every figure compared byte for byte."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from bench.chromium import have_chromium
from gradtrace.version import stamp
from tests.browser_kit import wait_js, watched_page

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")
pytest.importorskip("mkdocs")
pytest.importorskip("material")

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
SHOTS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
SVG = "{http://www.w3.org/2000/svg}"
# Where each example's figures land in its built site.
FIGURES = {"sphinx": "_images", "mkdocs": "assets/gradtrace", "mkdocs-material": "assets/gradtrace"}
QUIET = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build_command(example: str) -> list[str]:
    """Warnings are errors: the examples must build clean."""
    if example == "sphinx":
        return [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", ".", "_build/html"]
    return [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", "site"]


def site_of(folder: Path, example: str) -> Path:
    return folder / ("_build/html" if example == "sphinx" else "site")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """{example: [first site, second site]}, each built in a fresh copy of the example (in
    folders of different names, so no path can leak into a figure). All six builds run at once."""
    runs = []
    for example in FIGURES:
        for n in ("first", "second"):
            folder = tmp_path_factory.mktemp(f"{example}-{n}")
            shutil.copytree(EXAMPLES / example, folder, dirs_exist_ok=True)
            proc = subprocess.Popen(
                build_command(example), cwd=folder, env=QUIET, stderr=subprocess.PIPE, text=True
            )
            runs.append((example, folder, proc))
    sites: dict[str, list[Path]] = {}
    for example, folder, proc in runs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, f"{example} did not build:\n{err}"
        sites.setdefault(example, []).append(site_of(folder, example))
    return sites


def grads_in(svg: bytes) -> dict[str, str]:
    """`{"n0-grad": "grad 4", …}`: each node's grad as the picture prints it."""
    root = ET.fromstring(svg)
    return {
        t.get("id", ""): "".join(t.itertext())
        for t in root.iter(SVG + "text")
        if (t.get("id") or "").endswith("-grad")
    }


def figures_in(html: str) -> list[tuple[str, str]]:
    """Each figure of a page in order: (its tag, img or iframe; the file it shows)."""
    return re.findall(r'<(img|iframe) class="gradtrace-(?:figure|stepper)" src="([^"]+)"', html)


def test_sphinx_draws_each_directive_into_images_with_its_caption(built) -> None:
    site = built["sphinx"][0]
    html = (site / "index.html").read_text("utf-8")
    shown = figures_in(html)
    assert [tag for tag, _ in shown] == ["img"] * 4 + ["iframe"]
    assert all(src.startswith("_images/gradtrace-") for _, src in shown)
    steps = [(site / src).read_bytes() for _, src in shown[:3]]  # step: all, one per step
    assert [grads_in(s)["n0-grad"] for s in steps] == ["grad 0", "grad 1", "grad 4"]
    assert grads_in(steps[2])["n1-grad"] == "grad 2"  # y.grad = x
    assert grads_in((site / shown[3][1]).read_bytes())["n0-grad"] == "grad 3"  # the = bug
    assert html.count('<figure class="gradtrace') == 5
    assert "with x = 2, y = 3 (Step 2 of 2)</span>" in html
    assert "The <code" in html and "bug: x.grad = 3</span>" in html  # the caption's markup
    stepper = (site / shown[4][1]).read_text("utf-8")
    assert 'id="grad-table"' in stepper and 'height="560"' in html


def test_a_myst_page_writes_the_same_directive_as_a_fence(built) -> None:
    site = built["sphinx"][0]
    html = (site / "myst.html").read_text("utf-8")
    shown = figures_in(html)
    assert [tag for tag, _ in shown] == ["img", "iframe"]
    # The same program and options as index.rst's last step: the same file, drawn once.
    assert shown[0][1] == figures_in((site / "index.html").read_text("utf-8"))[2][1]
    assert "After the last step, x.grad = 4" in html
    neuron = (site / shown[1][1]).read_text("utf-8")
    assert '"source":"h = tanh(w*x + b)"' in neuron and '"step":1,' in neuron


def test_mkdocs_draws_each_fence_and_leaves_longer_fences_as_code(built) -> None:
    site = built["mkdocs"][0]
    html = (site / "index.html").read_text("utf-8")
    shown = figures_in(html)
    assert [tag for tag, _ in shown] == ["img"] * 4 + ["iframe"]
    assert all(src.startswith("assets/gradtrace/gradtrace-") for _, src in shown)
    assert grads_in((site / shown[2][1]).read_bytes())["n0-grad"] == "grad 4"
    assert grads_in((site / shown[3][1]).read_bytes())["n0-grad"] == "grad 3"
    assert "<figcaption>L = x*y + x with x = 2, y = 3 (Step 1 of 2)</figcaption>" in html
    # The page that shows the syntax keeps it: inside a longer fence it is code.
    assert '<code class="language-markdown">```gradtrace values=&quot;x=2,y=3&quot;' in html
    assert "gradtracefigure" not in html


def test_material_with_superfences_draws_fences_in_admonitions_and_tabs(built) -> None:
    site = built["mkdocs-material"][0]
    html = (site / "index.html").read_text("utf-8")
    assert [tag for tag, _ in figures_in(html)] == ["iframe"] + ["img"] * 6
    admonition = html[html.index('<div class="admonition note">') :]
    assert admonition.index('class="gradtrace-figure"') < admonition.index("</div>")
    tabs = html[html.index('<div class="tabbed-set') :]
    assert tabs.count('<div class="tabbed-block">\n<figure class="gradtrace"') == 2
    # Ordinary fences are still superfences': highlighted by Material.
    assert '<span class="kn">import</span>' in html and "gradtracefigure" not in html


def test_every_figure_is_byte_identical_across_builds_and_integrations(built) -> None:
    made: dict[str, bytes] = {}
    for example, (first, second) in built.items():
        a, b = first / FIGURES[example], second / FIGURES[example]
        names = sorted(p.name for p in a.glob("gradtrace-*"))
        assert names and names == sorted(p.name for p in b.glob("gradtrace-*")), example
        for name in names:
            data = (a / name).read_bytes()
            assert data == (b / name).read_bytes(), f"{example}: {name} differs between builds"
            # A name is its content: Sphinx and MkDocs draw the same program into the same file.
            assert made.setdefault(name, data) == data, f"{name} differs between integrations"
    assert len(made) >= 10


def test_every_figure_records_the_engine_and_graphviz_versions(built) -> None:
    for example, (site, _) in built.items():
        for path in (site / FIGURES[example]).glob("gradtrace-*"):
            text = path.read_text("utf-8")
            if path.suffix == ".svg":
                assert f"<metadata>{stamp()}</metadata>" in text, path
            else:
                assert f'<html data-gradtrace-version="{stamp()}"' in text, path
        html = (site / "index.html").read_text("utf-8")
        assert f'data-gradtrace-version="{stamp()}"' in html


BROKEN_RST = """Broken
======

.. gradtrace::
   :values: x=2

   y = x*2
   z = y + foo(y)

.. gradtrace::
   :mode: nope

   x
"""

BROKEN_MD = """---
title: front matter moves the lines
---
# Broken

```{fence}
y = x*2
z = y + foo(y)
```
"""


def test_a_program_that_cannot_run_is_a_warning_at_its_line_and_the_build_goes_on(
    tmp_path: Path,
) -> None:
    sphinx = tmp_path / "sphinx"
    shutil.copytree(EXAMPLES / "sphinx", sphinx)
    (sphinx / "broken.rst").write_text(BROKEN_RST, "utf-8")
    (sphinx / "broken_md.md").write_text(BROKEN_MD.replace("{fence}", "{gradtrace}"), "utf-8")
    mkdocs = tmp_path / "mkdocs"
    shutil.copytree(EXAMPLES / "mkdocs", mkdocs)
    (mkdocs / "docs" / "broken.md").write_text(BROKEN_MD.replace("{fence}", "gradtrace"), "utf-8")
    lenient = {  # no -W, no --strict: a warning does not stop the build
        sphinx: [sys.executable, "-m", "sphinx", "-b", "html", "-q", ".", "_build/html"],
        mkdocs: [sys.executable, "-m", "mkdocs", "build", "-d", "site"],
    }
    procs = [
        subprocess.Popen(command, cwd=cwd, env=QUIET, stderr=subprocess.PIPE, text=True)
        for cwd, command in lenient.items()
    ]
    (_, sphinx_log), (_, mkdocs_log) = (p.communicate(timeout=180) for p in procs)
    assert [p.returncode for p in procs] == [0, 0], sphinx_log + mkdocs_log
    # The page's line of the program's error, then the program's own line and column.
    unknown = "gradtrace: line 2, column 9: unknown function 'foo'"
    assert f"broken.rst:8: WARNING: {unknown} [gradtrace]" in sphinx_log
    assert f"broken_md.md:8: WARNING: {unknown} [gradtrace]" in sphinx_log
    assert "broken.rst:10: WARNING: gradtrace: mode is svg or stepper, not 'nope'" in sphinx_log
    assert f"broken.md:8: {unknown}" in mkdocs_log
    page = (sphinx / "_build/html/broken.html").read_text("utf-8")
    assert "gradtrace: line 2, column 9: unknown function" in page
    assert (sphinx / "_build/html/index.html").is_file()  # the other pages were built
    page = (mkdocs / "site/broken/index.html").read_text("utf-8")
    assert '<div class="gradtrace-error" role="alert">' in page
    assert "z = y + foo(y)\n        ^</pre>" in page


def open_stepper(page: Any) -> Any:
    """The page's stepper frame, once its script has started."""
    frame = page.locator("iframe.gradtrace-stepper").element_handle().content_frame()
    wait_js(frame, "window.gradtrace !== undefined")
    return frame


@pytest.mark.browser
@pytest.mark.skipif(not have_chromium(), reason="Chromium is not installed")
def test_the_built_pages_open_from_disk_and_their_stepper_steps(browser: Any, built) -> None:
    pictures = "[...document.images].every((i) => i.complete && i.naturalWidth > 0)"
    with watched_page(browser, viewport={"width": 1100, "height": 900}) as page:
        page.goto((built["sphinx"][0] / "myst.html").as_uri())
        wait_js(page, pictures)
        frame = open_stepper(page)
        assert frame.text_content("#step-label") == "Step 1 of 3"  # :step: 1
        frame.click("#btn-next")
        wait_js(frame, "document.querySelector('#step-label').textContent === 'Step 2 of 3'")
        frame.locator("body").press("ArrowLeft")
        wait_js(frame, "document.querySelector('#step-label').textContent === 'Step 1 of 3'")
        page.screenshot(path=str(SHOTS / "integration-sphinx.png"), full_page=True)

        page.goto((built["mkdocs-material"][0] / "index.html").as_uri())
        wait_js(page, pictures)
        frame = open_stepper(page)  # in the first content tab
        assert frame.text_content("#step-label") == "Step 0 of 2"
        frame.click("#btn-last")
        wait_js(frame, "document.querySelector('#step-label').textContent === 'Step 2 of 2'")
        assert frame.text_content("#n0-grad") == "grad 4"
        width = page.evaluate("document.querySelector('.md-content article').clientWidth")
        assert page.locator("iframe.gradtrace-stepper").bounding_box()["width"] > width * 0.9
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SHOTS / "integration-mkdocs.png"))
