"""A notebook that imports gradtrace, executed by nbclient in a real IPython kernel: a traced
program's outputs hold the stepper (text/html), the step as SVG (image/svg+xml) and one line of
text; the HTML works in Chromium where scripts run and stays a drawing where they do not."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from tests.notebook_kit import execute  # noqa: E402

CELLS = [
    'from gradtrace import run\nt = run("x*y + x", values={"x": 2, "y": 3})\nt',
    't.show(step=1, lang="zh")',
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The notebook's cells after a run, each with its outputs."""
    tmp = tmp_path_factory.mktemp("nb")
    cells: list[dict[str, Any]] = execute(CELLS, tmp, "lesson.ipynb").cells
    return cells


def result(cell: dict[str, Any]) -> dict[str, str]:
    outs = [o for o in cell["outputs"] if o["output_type"] == "execute_result"]
    errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
    assert not errors, errors
    assert len(outs) == 1, cell["outputs"]
    data: dict[str, str] = outs[0]["data"]
    return data


def svg_text(svg: str) -> str:
    root = ET.fromstring(svg)
    return " ".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))


def test_a_trace_shows_as_html_svg_and_one_line_of_text(executed: list[dict[str, Any]]) -> None:
    data = result(executed[0])
    assert set(data) >= {"text/html", "image/svg+xml", "text/plain"}
    assert data["text/plain"] == "<Trace out = 8: 4 nodes, 3 steps; x.grad = 4, y.grad = 2>"
    text = svg_text(data["image/svg+xml"])
    assert "grad 4" in text and "Step 2 of 2" in text
    html = data["text/html"]
    assert html.startswith('<div class="gradtrace-output" data-gradtrace="gt-')
    assert html.count("<svg") >= 1 and "<script>" in html
    assert "http://" not in re.sub(r'xmlns(:\w+)?="[^"]*"', "", html.split("<script>")[0])
    # The whole stepper rides in the cell: ~250 KB of page code, ~76 KB of words in both
    # languages, the stylesheet and the trace (403 KB for this program on 2026-12-02).
    assert len(html) < 450_000


def test_show_picks_the_step_and_the_language(executed: list[dict[str, Any]]) -> None:
    data = result(executed[1])
    text = svg_text(data["image/svg+xml"])
    assert "第 1 步,共 2 步" in text and "grad 1" in text
    assert "第 1 步,共 2 步" in data["text/html"]


def page_with(outputs: list[str], tmp_path: Path, name: str) -> str:
    """The outputs in a page, as a notebook front end puts them into its own document."""
    body = "".join(f'<div class="output">{o}</div>' for o in outputs)
    path = tmp_path / name
    path.write_text(f"<!doctype html><meta charset=utf-8><title>nb</title>{body}", "utf-8")
    return path.as_uri()


@pytest.mark.browser
def test_where_scripts_run_the_drawing_becomes_the_stepper(
    executed: list[dict[str, Any]], browser: Any, tmp_path: Path
) -> None:
    first, second = result(executed[0])["text/html"], result(executed[1])["text/html"]
    url = page_with([first, second, first], tmp_path, "trusted.html")  # the same output twice
    context = browser.new_context(viewport={"width": 1000, "height": 800}, offline=True)
    errors: list[str] = []
    requests: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.extend([m.text] if m.type == "error" else []))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(url)
        page.wait_for_function(
            "() => document.querySelectorAll('iframe').length === 3 && "
            "!document.querySelector('.gradtrace-static')"
        )
        frames = [f for f in page.frames if f != page.main_frame]
        labels = sorted(f.text_content("#step-label") for f in frames)
        assert labels == ["Step 2 of 2", "Step 2 of 2", "第 1 步,共 2 步"]
        heights = page.evaluate("[...document.querySelectorAll('iframe')].map(f => f.offsetHeight)")
        assert all(h > 250 for h in heights), heights
        frame = next(f for f in frames if f.text_content("#step-label") == "Step 2 of 2")
        frame.click("#step-label")
        page.keyboard.press("ArrowLeft")
        frame.wait_for_function("() => window.gradtrace.state.step === 1")
        row = frame.evaluate(
            """() => [...document.querySelectorAll('#grad-table tbody tr[aria-current="step"] td')]
                      .map(td => td.textContent)"""
        )
        assert row[:4] == ["1", "1", "0", "1"]  # out, x*y, y, x: the page's column order
        assert frame.text_content("#graph #n0-grad") == "grad 1"
        assert not errors, errors
        assert {u for u in requests if not u.startswith("about:")} == {url}
    finally:
        context.close()


@pytest.mark.browser
def test_where_scripts_do_not_run_the_static_drawing_stays(
    executed: list[dict[str, Any]], browser: Any, tmp_path: Path
) -> None:
    html = result(executed[0])["text/html"]
    # An untrusted notebook: Jupyter's sanitizer drops the script; a static viewer never runs it.
    stripped = re.sub(r"<script>.*?</script>", "", html, flags=re.S)
    for js, outputs, name in [(True, [stripped], "untrusted.html"), (False, [html], "nojs.html")]:
        context = browser.new_context(java_script_enabled=js, offline=True)
        try:
            page = context.new_page()
            page.goto(page_with(outputs, tmp_path, name))
            assert page.locator("iframe").count() == 0
            assert page.locator(".gradtrace-static svg g.node").count() == 4
            assert page.text_content(".gradtrace-static svg #n0-grad") == "grad 4"
            box = page.locator(".gradtrace-static svg").bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 100
        finally:
            context.close()
