"""What a screen reader hears and what a low-vision student can read: axe-core (from the
`axe-playwright-python` package, which ships it) in real Chromium on the page, the embed and
presentation mode; the one live region's "Step k of N: …"; the lesson panel outside any live
region; the drawing's accessible name; every text colour at least 4.5:1 (WCAG AA)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

import engine
from engine.drawing.style import STYLE
from engine.drawing.svg import svg_name
from tests.browser_kit import wait_js, watched_page

SIMPLE = "/?source=x*y%2Bx&values=x=2,y=3"
NEURON = "x1 = 2.0\nx2 = 0.0\nw1 = -3.0\nw2 = 1.0\nb = 6.88\nn = x1*w1 + x2*w2 + b\no = tanh(n)"
LIVE_ROLES = ("status", "alert", "log", "marquee", "timer")
AA = 4.5


# ---- contrast, as WCAG 2 defines it -------------------------------------------------------------


def _luminance(colour: str) -> float:
    rgb = _rgb(colour)

    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _rgb(colour: str) -> tuple[float, float, float]:
    colour = colour.strip().lower()
    found = re.match(r"rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)", colour)
    if found:
        return float(found.group(1)), float(found.group(2)), float(found.group(3))
    h = colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def contrast(fg: str, bg: str = "#ffffff") -> float:
    hi, lo = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_every_colour_the_drawing_writes_text_in_passes_aa_on_white():
    for key in ("ink", "muted", "active", "sent", "const", "offpath"):
        assert contrast(STYLE[key]) >= AA, (key, STYLE[key], contrast(STYLE[key]))
    assert contrast(STYLE["offpath"], STYLE["op_bg"]) >= AA  # an off-path op's symbol cell
    assert contrast(STYLE["ink"], STYLE["changed_bg"]) >= AA


def test_the_drawing_is_named_by_its_program_and_step_in_its_language():
    trace = engine.run("x*y + x", {"x": 2, "y": 3}).to_dict()
    assert svg_name(trace) == "Computation graph of out = x*y + x"
    assert svg_name(trace, 1) == "Computation graph of out = x*y + x: step 1 of 2"
    assert svg_name(trace, 2, "zh") == "out = x*y + x 的计算图:第 2 步,共 2 步"


# ---- in Chromium ------------------------------------------------------------------------------


@pytest.fixture
def page(browser: Any, base_url: str) -> Iterator[Any]:
    """A page whose CSP lets axe-core's script in (the page's own script-src is 'self')."""
    with watched_page(browser, viewport={"width": 1280, "height": 800}, bypass_csp=True) as p:
        yield p


def open_at(page: Any, base_url: str, path: str) -> None:
    page.goto(base_url + path)
    wait_js(page, "window.gradtrace !== undefined && document.querySelector('#graph svg')")


def serious(page: Any, context: str | None = None) -> list[tuple[str, str, list[Any]]]:
    """axe-core's serious and critical violations on the page (or inside `context`)."""
    axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe()
    found = axe.run(page, context=context).response["violations"]
    return [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:5])
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.browser
@pytest.mark.parametrize(
    "path",
    [
        SIMPLE + "&step=0",  # every row not yet reached
        SIMPLE + "&step=1&lang=zh",
        "/?source=" + quote(NEURON) + "&step=3",
        "/embed?source=x*y%2Bx&values=x=2,y=3&step=0",
        "/?present=1&step=0",
    ],
)
def test_axe_finds_nothing_serious_on_the_page_the_embed_and_presentation(page, base_url, path):
    open_at(page, base_url, path)
    assert serious(page) == []


@pytest.mark.browser
def test_axe_finds_nothing_serious_after_the_present_button_and_in_forward_mode(page, base_url):
    open_at(page, base_url, SIMPLE + "&step=0")
    page.click("#present-btn")
    wait_js(page, "document.body.classList.contains('present')")
    assert serious(page) == []
    page.click("#present-btn")
    page.check("#forward-mode")
    wait_js(page, "window.gradtrace.state.forwardMode")
    assert serious(page) == []


@pytest.mark.browser
def test_axe_finds_nothing_serious_in_any_lesson(page, base_url):
    open_at(page, base_url, "/?source=" + quote(NEURON) + "&step=2")
    names = page.eval_on_selector_all(
        "#lessons button[data-lesson]", "bs => bs.map(b => b.dataset.lesson)"
    )
    assert len(names) >= 10
    for name in names:
        page.click(f'#lessons button[data-lesson="{name}"]')
        wait_js(
            page,
            f"document.querySelector('#lesson-body').dataset.lesson === '{name}' && "
            f"window.gradtraceLessons.state.data['{name}'] !== undefined && "
            "!window.gradtraceLessons.state.loading",
            timeout=20,
        )
        found = serious(page, "#lessons")
        assert found == [], name


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_axe_finds_nothing_serious_in_either_language_where_the_page_helps_to_read(
    page, base_url, lang
):
    """The first visit's cue, the Lessons menu, a refused class code; a drawing followed at a
    readable size with its overview inset, on the page and presented; the lessons' steppers
    and the code lesson's copy buttons: in English and in Chinese."""
    from app.examples import EXAMPLES

    open_at(page, base_url, f"/?lang={lang}")
    assert page.is_visible("#step-cue")
    page.click("#lessons-menu summary")
    page.fill("#join-code", "?")
    page.click("#join button[type=submit]")
    wait_js(page, "!document.querySelector('#join-msg').hidden")
    assert serious(page) == [], "landing"
    rnn = next(ex for ex in EXAMPLES if ex["id"] == "rnn")
    source = rnn.get("source_zh", rnn["source"]) if lang == "zh" else rnn["source"]
    path = f"/?lang={lang}&step=3&source=" + quote(source)
    for extra in ("", "&present=1"):
        open_at(page, base_url, path + extra)
        wait_js(page, "document.querySelector('.graph-frame').classList.contains('following')")
        wait_js(page, "!document.querySelector('.overview').hidden")
        assert serious(page) == [], "following" + extra
    open_at(page, base_url, f"/?lang={lang}&step=2&source=" + quote(NEURON))
    for name in ("orders", "gradcheck", "forward", "mistakes", "code"):
        page.click(f'#lessons button[data-lesson="{name}"]')
        wait_js(
            page,
            f"document.querySelector('#lesson-body').dataset.lesson === '{name}' && "
            f"window.gradtraceLessons.state.data['{name}'] !== undefined && "
            "!window.gradtraceLessons.state.loading",
            timeout=20,
        )
        assert serious(page, "#lessons") == [], name


def live_ancestors(page: Any, selector: str) -> list[str]:
    """The element and its ancestors that make a live region (aria-live other than off, or a
    live role), as tag#id."""
    return page.evaluate(
        """([sel, roles]) => {
        const out = [];
        for (let e = document.querySelector(sel); e; e = e.parentElement) {
          const live = e.getAttribute('aria-live');
          const role = e.getAttribute('role');
          if ((live && live !== 'off') || roles.includes(role)) out.push(e.tagName + '#' + e.id);
        }
        return out;
    }""",
        [selector, list(LIVE_ROLES)],
    )


@pytest.mark.browser
def test_the_live_region_says_step_k_of_n_then_the_sentence(page, base_url):
    open_at(page, base_url, SIMPLE + "&step=0")
    page.keyboard.press("ArrowRight")
    wait_js(page, "window.gradtrace.state.step === 1")
    said = page.text_content("#announce")
    assert said == "Step 1 of 2: " + page.text_content("#explain")
    assert said.startswith("Step 1 of 2: ") and "x.grad" in said
    assert live_ancestors(page, "#announce") == ["P#announce"]
    # The visible sentence and the step label are not live too: the step is said once.
    assert live_ancestors(page, "#explain") == []
    assert page.get_attribute("#step-label", "aria-live") == "off"
    page.hover("#grad-table tbody tr")  # a hover re-renders: the region keeps its words
    assert page.text_content("#announce") == said
    page.click('.lang button[data-lang="zh"]')
    wait_js(page, "document.querySelector('#announce').textContent.startsWith('第 1 步')")
    assert page.text_content("#announce") == "第 1 步,共 2 步:" + page.text_content("#explain")


@pytest.mark.browser
def test_the_lesson_panel_is_outside_live_regions_and_its_status_is_a_short_summary(page, base_url):
    open_at(page, base_url, "/?source=" + quote(NEURON) + "&step=1")
    assert live_ancestors(page, "#lesson-body") == []
    assert live_ancestors(page, "#lessons") == []
    page.click('#lessons button[data-lesson="forward"]')  # a lesson with its own stepper
    wait_js(page, "document.querySelector('#lesson-status').textContent !== ''")
    status = page.text_content("#lesson-status")
    assert re.fullmatch(r"Lesson: Forward mode, 1 of \d+", status), status
    page.click("#ls-next")
    wait_js(page, "document.querySelector('#lesson-status').textContent.includes(', 2 of')")
    body = page.text_content("#lesson-body")
    assert len(page.text_content("#lesson-status")) < 60 < len(body)
    assert live_ancestors(page, "#lesson-body") == []
    page.click('#lessons button[data-lesson="code"]')  # one that follows the page's step
    status = "document.querySelector('#lesson-status').textContent"
    wait_js(page, f"{status} === 'Lesson: PyTorch and JAX'")
    page.keyboard.press("ArrowRight")  # the page's step is #announce's; the status keeps still
    wait_js(page, "window.gradtrace.state.step === 2")
    assert page.text_content("#lesson-status") == "Lesson: PyTorch and JAX"


@pytest.mark.browser
def test_the_inline_drawing_is_named_by_its_program_and_the_step(page, base_url):
    open_at(page, base_url, SIMPLE + "&step=1")
    svg = "#graph > svg"
    assert page.get_attribute(svg, "role") == "img"
    name = page.get_attribute(svg, "aria-label")
    assert name == "Computation graph of out = x*y+x: Step 1 of 2"
    page.keyboard.press("ArrowRight")
    label = "document.querySelector('#graph > svg').getAttribute('aria-label')"
    wait_js(page, f"{label}.endsWith('Step 2 of 2')")
    title = page.evaluate("() => document.querySelector('#graph > svg > title').textContent")
    assert title == page.get_attribute(svg, "aria-label")


def test_api_svg_is_an_image_with_a_title_and_every_text_reads_at_aa(base_url):
    for step in (0, 1, 2):
        r = httpx.get(
            base_url + "/api/svg",
            params={"source": "x*y + x", "values": "x=2,y=3", "step": str(step), "lang": "zh"},
        )
        r.raise_for_status()
        head = r.text.split("<g ", 1)[0]
        assert 'role="img"' in head and 'aria-label="' in head
        assert re.search(r"<title>[^<]*x\*y \+ x[^<]*</title>", head), head
        fills = set(re.findall(r'<text [^>]*fill="(#[0-9a-fA-F]{6})"', r.text))
        assert fills, "the legend colours its texts"
        for fill in fills:
            assert contrast(fill) >= AA, (step, fill, contrast(fill))


@pytest.mark.browser
def test_the_pages_restyled_drawing_and_legend_keys_read_at_aa(page, base_url):
    open_at(page, base_url, "/?source=" + quote(NEURON) + "&step=3")
    colours = page.evaluate(
        """() => {
        const pick = (sel, prop) => [...document.querySelectorAll(sel)]
          .map(e => [sel, getComputedStyle(e)[prop]]);
        return [
          ...pick('#graph .edge.sent .elabel', 'fill'),
          ...pick('#graph .edge.active .elabel', 'fill'),
          ...pick('.legend .key', 'color'),
          ...pick('#grad-table tbody tr.later td', 'color'),
        ];
    }"""
    )
    kinds = {sel for sel, _ in colours}
    assert len(kinds) == 4, kinds
    for sel, colour in colours:
        assert contrast(colour) >= AA, (sel, colour, contrast(colour))
