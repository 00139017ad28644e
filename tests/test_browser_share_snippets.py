"""Share copies the Sphinx directive, the MyST fence and the MkDocs fence for the program on
screen, and each of them, built for real, draws the step the page shows."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from bench.chromium import have_chromium
from tests.browser_kit import wait_js, watched_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not have_chromium(), reason="Chromium is not installed"),
]

PROGRAM = "a = x*y\n\nL = a + x"  # a blank line in the program stays one
PAGE = "/?source=" + quote(PROGRAM) + "&values=x=2,y=3&step=1&accumulate=assign"
SVG = "{http://www.w3.org/2000/svg}"
BUTTONS = ("copy-rst", "copy-myst", "copy-mkdocs")
OPTIONS = [":values: x=2,y=3", ":step: 1", ":accumulate: assign"]
EXPECTED = {
    "copy-rst": "\n".join(
        [".. gradtrace::", *("   " + o for o in OPTIONS), "", "   a = x*y", "", "   L = a + x", ""]
    ),
    "copy-myst": "\n".join(["```{gradtrace}", *OPTIONS, "", "a = x*y", "", "L = a + x", "```", ""]),
    "copy-mkdocs": "\n".join(
        ['```gradtrace values="x=2,y=3" step=1 accumulate=assign', "a = x*y", "", "L = a + x"]
    )
    + "\n```\n",
}


def copied(page: Any, button: str) -> str:
    page.evaluate("document.querySelector('#share-text').value = ''")
    page.click("#" + button)
    wait_js(page, "document.querySelector('#share-text').value.length > 0")
    return str(page.input_value("#share-text"))


def page_grads(page: Any) -> dict[str, str]:
    return dict(
        page.evaluate(
            "Array.from(document.querySelectorAll('#graph svg text[id$=\"-grad\"]'))"
            ".map((t) => [t.id, t.textContent])"
        )
    )


def svg_grads(path: Path) -> dict[str, str]:
    root = ET.fromstring(path.read_bytes())
    return {
        t.get("id", ""): "".join(t.itertext())
        for t in root.iter(SVG + "text")
        if (t.get("id") or "").endswith("-grad")
    }


def test_share_copies_the_snippets_that_draw_the_step_on_screen(
    browser: Any, base_url: str, tmp_path: Path
) -> None:
    with watched_page(browser) as page:
        page.goto(base_url + PAGE)
        wait_js(page, "window.gradtrace && document.querySelector('#graph svg')")
        page.click("#share summary")
        snippets = {button: copied(page, button) for button in BUTTONS}
        shown = page_grads(page)
        assert page.text_content("#copy-mkdocs") == "Copy MkDocs fence"
    assert snippets == EXPECTED
    assert shown["n0-grad"] == "grad 1"  # x after step 1, with = in place of +=

    # Built for real, each snippet draws the same grads as the page's drawing.
    pytest.importorskip("myst_parser")
    docs = tmp_path / "sphinx"
    docs.mkdir()
    (docs / "conf.py").write_text('extensions = ["myst_parser", "gradtrace.sphinx"]\n')
    toc = ".. toctree::\n\n   myst\n\n"
    (docs / "index.rst").write_text("Notes\n=====\n\n" + toc + snippets["copy-rst"], "utf-8")
    (docs / "myst.md").write_text("# MyST\n\n" + snippets["copy-myst"], "utf-8")
    site = tmp_path / "mkdocs"
    (site / "docs").mkdir(parents=True)
    (site / "mkdocs.yml").write_text("site_name: notes\nplugins:\n  - gradtrace\n", "utf-8")
    (site / "docs" / "index.md").write_text("# Notes\n\n" + snippets["copy-mkdocs"], "utf-8")
    quiet = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    sphinx = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", ".", "out"]
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", "out"]
    builds = [subprocess.Popen(c, cwd=d, env=quiet) for c, d in ((sphinx, docs), (mkdocs, site))]
    assert [b.wait(timeout=180) for b in builds] == [0, 0]
    figures = sorted((docs / "out" / "_images").glob("gradtrace-*.svg"))
    figures += sorted((site / "out" / "assets" / "gradtrace").glob("gradtrace-*.svg"))
    # rst and MyST give the same options, so the same file; MkDocs draws it again, byte-equal.
    assert [p.name for p in figures][:1] * 2 == [p.name for p in figures]
    assert figures[0].read_bytes() == figures[1].read_bytes()
    assert svg_grads(figures[0]) == shown


def test_the_snippet_buttons_are_worded_in_the_page_s_language(browser: Any, base_url: str):
    with watched_page(browser) as page:
        page.goto(base_url + PAGE + "&lang=zh")
        wait_js(page, "window.gradtrace && document.querySelector('#graph svg')")
        page.click("#share summary")
        words = [page.text_content("#" + b) for b in BUTTONS]
        assert words == ["复制 Sphinx 指令", "复制 MyST 指令", "复制 MkDocs 代码块"]
        assert copied(page, "copy-rst").startswith(".. gradtrace::\n   :values: x=2,y=3\n")
        assert ":lang: zh\n" in copied(page, "copy-myst")
