"""The Quarto extension (quarto/_extensions/gradtrace) without Quarto: Quarto cannot be installed
here, and neither pandoc nor a Lua interpreter is on the machine, so gradtrace.lua itself is not
run. What is tested is what it runs: the exact command lines it builds
(`gradtrace quarto --to FORMAT -- PROGRAM key=value…`, keys in name order) for html, revealjs
and another format, what they print, and that the revealjs output steps in a real reveal.js
deck with the plugin the extension ships."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gradtrace.reveal.slides import PLUGIN_FILE, PLUGIN_GLOBAL, deck_html
from tests.browser_kit import wait_js, watched_page
from tests.test_reveal import reveal_dist  # noqa: F401 (the fixture: reveal.js from npm)

ROOT = Path(__file__).resolve().parents[1]
EXTENSION = ROOT / "quarto" / "_extensions" / "gradtrace"
GRADTRACE = str(Path(sys.executable).parent / "gradtrace")
LUA = (EXTENSION / "gradtrace.lua").read_text("utf-8")


def shortcode(to: str, program: str, **kwargs: str) -> subprocess.CompletedProcess[str]:
    """Run the command gradtrace.lua runs for {{< gradtrace "program" key=value … >}}."""
    args = ["quarto", "--to", to, "--", program]
    args += [f"{name}={kwargs[name]}" for name in sorted(kwargs)]
    return subprocess.run(
        [GRADTRACE, *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_the_lua_builds_the_command_line_these_tests_run() -> None:
    # The same argument list, in the same order, as shortcode() above.
    assert '{ "quarto", "--to", to, "--", program }' in LUA
    assert "table.sort(names)" in LUA and 'name .. "=" .. text(kwargs[name])' in LUA
    assert 'is_format("revealjs")' in LUA and 'is_format("html:js")' in LUA


def test_the_extension_contributes_the_shortcode_and_the_plugin() -> None:
    manifest = yaml.safe_load((EXTENSION / "_extension.yml").read_text("utf-8"))
    contributes = manifest["contributes"]
    assert contributes["shortcodes"] == ["gradtrace.lua"]
    (plugin,) = contributes["revealjs-plugins"]
    assert plugin["name"] == PLUGIN_GLOBAL and plugin["script"] == [PLUGIN_FILE]
    assert (EXTENSION / PLUGIN_FILE).is_file()


def test_html_step_all_is_one_figure_per_step_ending_at_the_grads() -> None:
    done = shortcode("html", "x*y + x", values="x=2,y=3", step="all", caption="fan-out")
    assert done.returncode == 0, done.stderr
    figures = re.findall(r"<figure class=\"gradtrace\".*?</figure>", done.stdout, re.S)
    assert len(figures) == 3
    assert "gradtrace-data" not in done.stdout and "fragment" not in done.stdout
    assert 'x.grad = <span class="v">4</span>' in figures[2]
    assert 'y.grad = <span class="v">2</span>' in figures[2]
    assert 'id="n0-grad"' in figures[2] and ">grad 4</text>" in figures[2]
    assert all("<figcaption>fan-out</figcaption>" in f for f in figures)


def test_the_same_shortcode_prints_the_same_bytes_twice() -> None:
    runs = [shortcode("revealjs", "x*y + x", values="x=2,y=3", step="all") for _ in range(2)]
    assert runs[0].returncode == 0 and runs[0].stdout == runs[1].stdout
    assert 'data-gradtrace-version="gradtrace ' in runs[0].stdout


def test_revealjs_step_all_is_one_figure_with_a_fragment_per_step() -> None:
    done = shortcode("revealjs", "x*y + x", values="x=2,y=3", step="all", lang="zh")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('<figure class="gradtrace"') == 1
    assert done.stdout.count('class="fragment gradtrace-fragment"') == 2
    assert "第 0 步,共 2 步" in done.stdout and 'class="gradtrace-data"' in done.stdout


def test_a_single_step_and_the_stepper() -> None:
    one = shortcode("revealjs", "x*y + x", values="x=2,y=3", step="1")
    assert one.returncode == 0 and "fragment" not in one.stdout and "Step 1 of 2" in one.stdout
    stepper = shortcode("html", "x*y + x", values="x=2,y=3", mode="stepper", height="500")
    assert stepper.returncode == 0, stepper.stderr
    assert (
        '<iframe class="gradtrace-stepper"' in stepper.stdout and 'height="500"' in stepper.stdout
    )
    assert re.search(
        r'srcdoc="\s*&lt;!doctype html&gt;\s*&lt;html data-gradtrace-version=', stepper.stdout
    )


def test_other_formats_get_png_files_and_markdown_images(tmp_path: Path) -> None:
    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert (librsvg2-bin) draws the PNGs")
    args = ["quarto", "--to", "pdf", "--figures", str(tmp_path / "figs"), "--", "x*y + x"]
    done = subprocess.run(
        [GRADTRACE, *args, "step=all", "values=x=2,y=3", "alt=the lesson"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    images = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)\{fig-alt=\"the lesson", done.stdout)
    assert len(images) == 3
    assert all(Path(p).read_bytes().startswith(b"\x89PNG") for p in images)


def test_a_program_that_cannot_run_shows_where_and_exits_2() -> None:
    done = shortcode("html", "x*y +", values="x=2,y=3")
    assert done.returncode == 2
    assert "line 1, column" in done.stderr
    assert '<div class="gradtrace-error" role="alert">' in done.stdout
    bad = shortcode("html", "x*y + x", colour="red")
    assert bad.returncode == 2 and "unknown option 'colour'" in bad.stderr
    assert "values, step, pass, accumulate" in bad.stderr


@pytest.mark.browser
def test_the_revealjs_output_steps_in_a_deck(
    browser: Any,
    tmp_path: Path,
    reveal_dist: Path,  # noqa: F811
) -> None:
    """The shortcode's revealjs output in a slide as Quarto writes one (a section with its
    heading), with the plugin inline (the extension's copy is the same file, test_reveal.py):
    → walks it to x.grad = 4."""
    done = shortcode("revealjs", "x*y + x", values="x=2,y=3", step="all")
    assert done.returncode == 0, done.stderr
    slide = f'<section id="lesson" class="slide level2">\n<h2>Lesson</h2>\n{done.stdout}</section>'
    deck = deck_html([slide], reveal="reveal.js")
    (tmp_path / "deck.html").write_text(deck, "utf-8")
    shutil.copytree(reveal_dist, tmp_path / "reveal.js" / "dist")
    with watched_page(browser) as page:
        page.goto((tmp_path / "deck.html").as_uri())
        wait_js(page, "window.Reveal && Reveal.isReady()")
        for _ in range(2):
            page.keyboard.press("ArrowRight")
        wait_js(page, "document.querySelector('figure.gradtrace').dataset.gradtraceStep === '2'")
        grads = page.eval_on_selector_all(".gradtrace-grad", "els => els.map(e => e.textContent)")
        assert grads == ["x.grad = 4", "y.grad = 2"]
