"""The reveal.js plugin for real: the example deck (docs/examples/revealjs) built into a temporary
folder beside a real reveal.js (installed once by npm into tests/.cache/revealjs), opened in
Chromium from file:// and stepped with the keyboard through every fragment and back. At every
step the drawing on show is the exported step's (`gradtrace render --step K`), element for
element, and the sentence is the page's; nothing is fetched but files."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gradtrace.files import Program, step_svg
from gradtrace.reveal.patches import diff_elements, slide_svg, step_patches
from gradtrace.reveal.sentences import step_sentence
from gradtrace.standalone import standalone_html
from tests.browser_kit import wait_js, watch_errors

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "revealjs"
CACHE = Path(__file__).resolve().parent / ".cache" / "revealjs"
REVEAL_VERSION = "reveal.js@5"
SCREENSHOT = ROOT / "docs" / "screenshots" / "integration-revealjs.png"
LESSON = Program("x*y + x", {"x": 2, "y": 3})

# Every element of the drawing on show as [tag, {attribute: value}, text of a leaf element].
ELEMENTS_JS = """() => {
  const svg = document.querySelector('section.present figure.gradtrace svg');
  return [svg, ...svg.querySelectorAll('*')].map((el) => [
    el.localName,
    Object.fromEntries([...el.attributes].filter((a) => !a.name.startsWith('xmlns'))
      .map((a) => [a.name, a.value])),
    el.children.length ? null : el.textContent,
  ]);
}"""
SHOWN_JS = """() => {
  const fig = document.querySelector('section.present figure.gradtrace');
  if (!fig) return null;
  return {
    step: fig.getAttribute('data-gradtrace-step') || '0',
    label: fig.querySelector('.gradtrace-step').textContent,
    says: fig.querySelector('.gradtrace-says').textContent,
    grads: [...fig.querySelectorAll('.gradtrace-grad')].map((g) => g.textContent),
    changed: [...fig.querySelectorAll('.gradtrace-grad.changed')].map((g) => g.textContent),
  };
}"""


def expected_elements(trace: dict[str, Any], k: int) -> list[list[Any]]:
    """The exported step-k SVG's elements, as ELEMENTS_JS reads the page's."""
    out = []
    for el in ET.fromstring(slide_svg(step_svg(trace, k))).iter():
        attrs = {name.rsplit("}", 1)[-1]: value for name, value in el.attrib.items()}
        out.append([el.tag.rsplit("}", 1)[-1], attrs, None if len(el) else (el.text or "")])
    return out


@pytest.fixture(scope="session")
def reveal_dist() -> Path:
    """reveal.js's dist/ folder, installed by npm once into tests/.cache/revealjs."""
    dist = CACHE / "node_modules" / "reveal.js" / "dist"
    if not (dist / "reveal.js").is_file():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed: it fetches reveal.js for the deck")
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--prefix", str(CACHE), REVEAL_VERSION, "--no-audit", "--no-fund"],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return dist


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory, reveal_dist: Path) -> Path:
    """The example deck, built by its script into a fresh folder with reveal.js beside it."""
    out = tmp_path_factory.mktemp("deck")
    subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), str(EXAMPLE / "build.py"), str(out)],
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    shutil.copytree(reveal_dist, out / "reveal.js" / "dist")
    return out / "deck.html"


@pytest.fixture()
def deck_page(browser: Any, deck: Path) -> Iterator[tuple[Any, list[str]]]:
    """The deck open in Chromium at its first slide; every URL it asked for is collected."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page = watch_errors(context.new_page(), errors)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.goto(deck.as_uri())
    wait_js(page, "window.Reveal && Reveal.isReady()")
    try:
        yield page, asked
    finally:
        context.close()
    assert not errors, f"console errors: {errors}"


def test_the_example_deck_is_built_from_its_script_byte_for_byte(deck: Path) -> None:
    assert deck.read_bytes() == (EXAMPLE / "deck.html").read_bytes()


def test_the_quarto_extension_ships_the_same_plugin_as_the_package() -> None:
    package = ROOT / "gradtrace" / "reveal" / "gradtrace-reveal.js"
    extension = ROOT / "quarto" / "_extensions" / "gradtrace" / "gradtrace-reveal.js"
    assert extension.read_bytes() == package.read_bytes()


@pytest.mark.browser
def test_the_keys_walk_every_backward_step_and_back(deck_page: tuple[Any, list[str]]) -> None:
    page, asked = deck_page
    trace = LESSON.trace()
    page.keyboard.press("ArrowRight")  # the intro slide -> the gradtrace slide, at step 0
    wait_js(page, "document.querySelector('section.present figure.gradtrace')")
    seen = []
    for k in range(3):
        if k:
            page.keyboard.press("ArrowRight" if k == 1 else "Space")
            wait_js(
                page,
                f"document.querySelector('section.present figure.gradtrace')"
                f".getAttribute('data-gradtrace-step') === '{k}'",
            )
        shown = page.evaluate(SHOWN_JS)
        seen.append(shown)
        assert shown["says"] == step_sentence(trace, k)
        assert shown["label"] == f"Step {k} of 2"
        assert page.evaluate(ELEMENTS_JS) == expected_elements(trace, k), f"step {k}"
    assert seen[0]["grads"] == ["x.grad = 0", "y.grad = 0"]
    assert seen[1]["grads"] == ["x.grad = 1", "y.grad = 0"] and seen[1]["changed"] == ["x.grad = 1"]
    assert seen[2]["grads"] == ["x.grad = 4", "y.grad = 2"]
    assert seen[2]["changed"] == ["x.grad = 4", "y.grad = 2"]
    assert "sends ū·y = 1·3 = 3 to x; x.grad: 1 → 4" in seen[2]["says"]
    # Past the last step the deck moves on; coming back shows the last step again.
    page.keyboard.press("PageDown")
    wait_js(page, "Reveal.getIndices().h === 2")
    page.keyboard.press("ArrowLeft")
    wait_js(page, "Reveal.getIndices().h === 1")
    assert page.evaluate(SHOWN_JS)["step"] == "2"
    # Back through every step to the seed: the drawing is step 0's again, element for element.
    for k, key in ((1, "ArrowLeft"), (0, "PageUp")):
        page.keyboard.press(key)
        wait_js(
            page,
            f"document.querySelector('section.present figure.gradtrace')"
            f".getAttribute('data-gradtrace-step') === '{k}'",
        )
        assert page.evaluate(SHOWN_JS)["says"] == step_sentence(trace, k)
        assert page.evaluate(ELEMENTS_JS) == expected_elements(trace, k), f"back at step {k}"
    assert page.evaluate("() => Reveal.getPlugin('gradtrace').steps()") == [0]
    page.keyboard.press("ArrowRight")
    wait_js(
        page,
        "document.querySelector('section.present figure.gradtrace')"
        ".getAttribute('data-gradtrace-step') === '1'",
    )
    page.screenshot(path=str(SCREENSHOT))
    # A jump (a #/1/0/1 link, the overview) lands on its step too: reveal.js counts from 0.
    page.evaluate("() => Reveal.slide(1, 0, 1)")
    assert page.evaluate("() => Reveal.getPlugin('gradtrace').steps()") == [2]
    assert asked and all(url.startswith("file:") for url in asked), asked


# Programs whose sentences take every branch: fan-out, a tensor term, = instead of +=, a
# non-scalar output seeded with ones, and a step with nothing to send.
SENTENCE_PROGRAMS = [
    Program("x*y + x", {"x": 2, "y": 3}),
    Program("x*y + x", {"x": 2, "y": 3}, accumulate="assign"),
    Program("W = [[1.0, 2.0], [3.0, 4.0]]\nv = [1.0, -1.0]\nsum(tanh(W @ v))"),
    Program("a = [1.0, 2.0]\na * 3"),
    Program("x = 2.0\nc = const(x) * 3\nc + x"),
]


@pytest.mark.browser
@pytest.mark.parametrize("program", SENTENCE_PROGRAMS, ids=lambda p: p.source[:14])
def test_the_slide_sentences_are_the_pages(browser: Any, tmp_path: Path, program: Program) -> None:
    """Each step's sentence, worked out in Python for the slide, is what the page's
    #explain says at that step (the standalone stepper, stepped with →)."""
    trace = program.trace()
    page_file = tmp_path / "stepper.html"
    page_file.write_text(standalone_html(trace, program=program, step=0), "utf-8")
    context = browser.new_context()
    errors: list[str] = []
    try:
        page = watch_errors(context.new_page(), errors)
        page.goto(page_file.as_uri())
        wait_js(page, "document.querySelector('#explain')")
        for k in range(len(trace["steps"])):
            if k:
                page.keyboard.press("ArrowRight")
            said = step_sentence(trace, k)
            wait_js(page, "document.querySelector('#explain').textContent === " + json.dumps(said))
    finally:
        context.close()
    assert not errors, errors


def _apply(elements: list[ET.Element], changes: list[list[Any]]) -> None:
    """What the plugin's apply() does, on ElementTree elements."""
    for index, attrs, text in changes:
        el = elements[index]
        for name, value in attrs.items():
            if value is None:
                el.attrib.pop(name, None)
            else:
                el.set(name, value)
        if text is not None:
            el.text = text


def _view(elements: list[ET.Element]) -> list[Any]:
    return [(e.tag, dict(e.attrib), None if len(e) else (e.text or "")) for e in elements]


@pytest.mark.parametrize(
    "program",
    [
        LESSON,
        Program("x = [1.0, 2.0, 3.0]\nW = [[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]]\ny = W @ x * x[0]"),
        Program("h = 0.5\nfor i in range(3):\n    h = tanh(w*h + 1)\nh", {"w": 0.8}),
        Program("y = x**3; g = grad(y, x); g", {"x": 2}),
    ],
    ids=["fan-out", "tensors", "loop", "second-order"],
)
def test_patches_1_to_k_turn_step_0_into_step_k(program: Program) -> None:
    trace = program.trace()
    drawing = step_patches(trace)
    elements = list(ET.fromstring(drawing.svg).iter())
    assert len(elements) == drawing.elements
    for k in range(len(drawing.patches)):
        _apply(elements, drawing.patches[k])
        expected = list(ET.fromstring(slide_svg(step_svg(trace, k))).iter())
        assert _view(elements) == _view(expected), f"step {k}"


def test_steps_that_are_not_one_drawing_restyled_are_refused() -> None:
    a = list(
        ET.fromstring('<svg xmlns="http://www.w3.org/2000/svg"><g/><text>1</text></svg>').iter()
    )
    b = list(ET.fromstring('<svg xmlns="http://www.w3.org/2000/svg"><g/><g/></svg>').iter())
    assert diff_elements(a, b) is None
    assert diff_elements(a, a) == []
