"""The drawing fits its frame on first sight, at every width, in real Chromium.

On first load and after each new program every node box (`g.node`) is inside the part of the
frame on screen, clear of the zoom buttons; the frame is as tall as the drawing needs; zoom and
pan still work, with a cue while part of the drawing is out of the frame; a one-finger swipe
over a drawing that is all on show scrolls the page; the grad table starts on the first screen
of a laptop; the editor wraps long lines and its highlight overlay stays on the text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from bench.chromium import have_chromium
from tests.browser_kit import wait_js, watch_errors

pytestmark = pytest.mark.browser

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

LESSON = "/?source=x*y%2Bx&values=x=2,y=3"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}

# Where each node box is, against the part of the frame that is on screen: inside the
# viewport, above the phone's fixed step bar, below the zoom buttons.
BOXES = """() => {
    const host = document.querySelector('#graph');
    const hr = host.getBoundingClientRect();
    const stepbar = document.querySelector('.graph-pane .stepbar');
    const bar = stepbar.getBoundingClientRect();
    const fixedBar = getComputedStyle(stepbar).position === 'fixed';
    const zoom = document.querySelector('.zoom').getBoundingClientRect();
    const frame = {left: Math.max(hr.left, 0), right: Math.min(hr.right, innerWidth),
                   top: Math.max(hr.top, 0),
                   bottom: Math.min(hr.bottom, fixedBar ? bar.top : innerHeight, innerHeight)};
    const nodes = [...host.querySelectorAll('g.node')].map((g) => {
        const r = g.getBoundingClientRect();
        return {id: g.id, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    });
    return {frame, zoom: {left: zoom.left, right: zoom.right, top: zoom.top, bottom: zoom.bottom},
            nodes, height: hr.height, viewBox: host.querySelector('svg').getAttribute('viewBox'),
            classes: host.parentElement.className,
            touch: getComputedStyle(host).touchAction, scrollY: window.scrollY};
}"""


@pytest.fixture
def opened(browser: Any, base_url: str) -> Iterator[Any]:
    """open(path, **context options) -> page; every page is checked for console errors."""
    contexts: list[Any] = []
    errors: list[str] = []

    def open_page(path: str, **options: Any) -> Any:
        context = browser.new_context(**options)
        contexts.append(context)
        page = watch_errors(context.new_page(), errors)
        page.goto(base_url + path)
        wait_js(page, "window.gradtrace !== undefined && document.querySelector('#graph svg')")
        page.wait_for_timeout(100)  # the ResizeObserver's refit, if the scroll bar came
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert not errors, f"console errors: {errors}"


def outside(box: dict[str, Any]) -> list[str]:
    """The nodes not wholly inside the frame on screen, or under the zoom buttons."""
    f, z, bad = box["frame"], box["zoom"], []
    for n in box["nodes"]:
        out = (
            n["left"] < f["left"] - 0.5
            or n["right"] > f["right"] + 0.5
            or n["top"] < f["top"] - 0.5
            or n["bottom"] > f["bottom"] + 0.5
        )
        under_zoom = not (
            n["right"] <= z["left"]
            or n["left"] >= z["right"]
            or n["bottom"] <= z["top"]
            or n["top"] >= z["bottom"]
        )
        if out or under_zoom:
            bad.append(n["id"])
    return bad


def choose_example(page: Any, example: str) -> None:
    """A new program from the gallery: wait for its drawing to replace the one on show."""
    page.evaluate("window.__oldSvg = document.querySelector('#graph svg')")
    page.select_option("#examples", example)
    wait_js(page, "document.querySelector('#graph svg') !== window.__oldSvg", timeout=30)
    page.wait_for_timeout(150)


# ---- every node on show, at every width ------------------------------------------------------


def test_a_phone_shows_every_node_of_x_times_y_plus_x_on_first_load(opened):
    page = opened(LESSON + "&step=1", **PHONE, device_scale_factor=2)
    box = page.evaluate(BOXES)
    assert len(box["nodes"]) == 4
    assert outside(box) == []
    page.screenshot(path="/tmp/fit-phone-xy.png")


@pytest.mark.parametrize("example", ["batched-matmul", "jacobian-rows"])
def test_a_phone_shows_every_node_of_a_new_program_from_the_gallery(opened, example):
    # Programs that read whole on a phone (tests/test_browser_readable.py: the others are
    # followed at the phone's readable size).
    page = opened(LESSON, **PHONE)
    choose_example(page, example)
    box = page.evaluate(BOXES)
    assert len(box["nodes"]) > 1
    assert outside(box) == [], example
    assert "clipped" not in box["classes"]


@pytest.mark.parametrize("example", ["max", "product", "neuron", "softmax-ce"])
def test_a_wide_screen_clips_no_node_and_leaves_no_blank_under_the_drawing(opened, example):
    page = opened(LESSON, viewport={"width": 1440, "height": 900})
    choose_example(page, example)
    box = page.evaluate(BOXES)
    assert outside(box) == [], example
    # The frame is as tall as the drawing at its scale: little white below the lowest box,
    # and the order strips follow the drawing's pane directly.
    lowest = max(n["bottom"] for n in box["nodes"])
    assert box["frame"]["bottom"] - lowest < 48
    gap = page.evaluate(
        """() => document.querySelector('.strips').getBoundingClientRect().top
        - document.querySelector('.graph-frame').getBoundingClientRect().bottom"""
    )
    assert gap < 80


@pytest.mark.parametrize("path", [LESSON, "/?source=" + quote("a = 2\nb = -3\nL = tanh(a*b + a)")])
def test_a_laptop_shows_the_top_of_the_grad_table_on_the_first_screen(opened, path):
    page = opened(path, viewport={"width": 1280, "height": 720})
    top = page.evaluate("document.querySelector('#grad-table').getBoundingClientRect().top")
    assert 0 < top < 720
    assert outside(page.evaluate(BOXES)) == []
    page.screenshot(path="/tmp/fit-laptop.png")


def test_on_a_phone_a_new_errors_caret_line_is_clear_of_the_step_bar(opened):
    page = opened("/?source=" + quote("a = 2\nb = 3\nL = a*b"), **PHONE)
    page.tap("#source")
    page.keyboard.press("Control+End")
    page.keyboard.type(" +")
    wait_js(page, "document.querySelector('#error-box .caret') !== null", timeout=10)
    page.wait_for_timeout(300)
    caret, bar = page.evaluate(
        """() => [document.querySelector('#error-box .caret').getBoundingClientRect().bottom,
        document.querySelector('.graph-pane .stepbar').getBoundingClientRect().top]"""
    )
    assert caret <= bar  # the line with the caret shows above the fixed bar, not under it


# ---- zoom, pan, and the cue ------------------------------------------------------------------


def test_zoom_in_shows_a_cue_and_fit_brings_every_node_back(opened):
    page = opened(LESSON, viewport={"width": 1280, "height": 800})
    first = page.evaluate(BOXES)
    assert "clipped" not in first["classes"] and first["touch"] == "pan-y"
    for _ in range(4):
        page.click("#zoom-in")
    zoomed = page.evaluate(BOXES)
    assert zoomed["viewBox"] != first["viewBox"]
    assert "clipped" in zoomed["classes"] and "more-" in zoomed["classes"]
    assert zoomed["touch"] == "none"  # zoomed in, one finger pans the drawing
    assert outside(zoomed) != []
    # A mouse drag pans the view.
    r = page.locator("#graph").bounding_box()
    page.mouse.move(r["x"] + r["width"] / 2, r["y"] + r["height"] / 2)
    page.mouse.down()
    page.mouse.move(r["x"] + r["width"] / 2 - 120, r["y"] + r["height"] / 2, steps=6)
    page.mouse.up()
    panned = page.evaluate(BOXES)
    assert panned["viewBox"] != zoomed["viewBox"]
    page.screenshot(path="/tmp/fit-zoomed.png")
    page.click("#zoom-fit")
    back = page.evaluate(BOXES)
    assert outside(back) == [] and "clipped" not in back["classes"]
    assert back["viewBox"] == first["viewBox"]


def test_a_vertical_swipe_on_the_drawing_scrolls_the_page_unless_zoomed_in(opened):
    page = opened(LESSON, **PHONE)
    cdp = page.context.new_cdp_session(page)
    r = page.locator("#graph").bounding_box()
    x, y = r["x"] + r["width"] / 2, r["y"] + r["height"] / 2

    def swipe_up() -> None:
        """One finger, 200 px up, over a third of a second (real touch events, not a script's)."""
        down = {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]}
        cdp.send("Input.dispatchTouchEvent", down)
        for i in range(1, 11):
            point = {"x": x, "y": y - 20 * i}
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
            page.wait_for_timeout(16)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        page.wait_for_timeout(300)

    start = page.evaluate(BOXES)
    swipe_up()
    after = page.evaluate(BOXES)
    assert after["scrollY"] > start["scrollY"] + 100  # the page scrolled
    assert after["viewBox"] == start["viewBox"]  # and the drawing stayed put
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(100)
    page.tap("#zoom-in")
    page.tap("#zoom-in")
    zoomed = page.evaluate(BOXES)
    assert zoomed["touch"] == "none"
    swipe_up()
    moved = page.evaluate(BOXES)
    assert moved["scrollY"] < 20  # zoomed in: the swipe pans the drawing, not the page
    assert moved["viewBox"] != zoomed["viewBox"]


def test_a_pinch_on_the_drawing_zooms_it(opened):
    page = opened(LESSON, **PHONE)
    cdp = page.context.new_cdp_session(page)
    r = page.locator("#graph").bounding_box()
    cx, cy = r["x"] + r["width"] / 2, r["y"] + r["height"] / 2
    before = page.evaluate(BOXES)["viewBox"]

    def touch(kind: str, d: float) -> None:
        points = (
            []
            if kind == "touchEnd"
            else [
                {"x": cx - d, "y": cy, "id": 1},
                {"x": cx + d, "y": cy, "id": 2},
            ]
        )
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    touch("touchStart", 30)
    for d in range(35, 120, 5):
        touch("touchMove", d)
    touch("touchEnd", 0)
    page.wait_for_timeout(100)
    after = page.evaluate(BOXES)
    width = lambda vb: float(vb.split()[2])  # noqa: E731
    assert width(after["viewBox"]) < width(before) * 0.7
    assert "clipped" in after["classes"]


# ---- the editor wraps, and its highlight stays on the text -----------------------------------

WRAPPED = "total = alpha*beta + gamma*delta + epsilon*zeta + theta*iota"


@pytest.mark.parametrize("lines_before", [0, 30])
def test_the_editor_wraps_long_lines_with_the_highlight_on_its_text(opened, lines_before):
    # Thirty lines before it make the editor scroll (a scroll bar beside the text).
    source = "".join(f"c{i} = {i}\n" for i in range(lines_before)) + WRAPPED
    page = opened("/?source=" + quote(source), viewport={"width": 1280, "height": 800})
    ta = page.locator("#source")
    assert page.evaluate(
        "(() => { const t = document.querySelector('#source');"
        " return t.scrollWidth <= t.clientWidth; })()"
    )
    # The step whose node is `theta*iota`: its mark is on the wrapped part of the last line.
    n = page.evaluate("window.gradtrace.maxPos()")
    for k in range(n + 1):
        page.evaluate(f"window.gradtrace.setPos({k})")
        text = page.evaluate("document.querySelector('#editor-hl mark.cur')?.textContent")
        if text == "theta*iota":
            break
    else:
        pytest.fail("no step highlights theta*iota")
    page.evaluate("document.querySelector('#source').scrollTop = 1e6")
    page.evaluate("document.querySelector('#source').dispatchEvent(new Event('scroll'))")
    page.wait_for_timeout(50)
    mark = page.evaluate(
        """() => { const m = document.querySelector('#editor-hl mark.cur');
        const rs = [...m.getClientRects()]; const r = rs[rs.length - 1];
        return {n: rs.length, x: r.left + r.width / 2, y: r.top + r.height / 2, left: r.left}; }"""
    )
    box = ta.bounding_box()
    # At the end of a line twice as long as the editor is wide: on its wrapped part.
    assert mark["n"] == 1 and mark["left"] < box["x"] + box["width"] / 2
    assert box["y"] < mark["y"] < box["y"] + box["height"]
    # Where the textarea itself puts the caret for a click on the mark: inside the token.
    page.mouse.click(mark["x"], mark["y"])
    caret = page.evaluate("document.querySelector('#source').selectionStart")
    start = source.index("theta*iota")
    assert start <= caret <= start + len("theta*iota")
    clip = {"x": 0, "y": 40, "width": 420, "height": 300}
    page.screenshot(path=f"/tmp/fit-editor-{lines_before}.png", clip=clip)


def test_hovering_the_wrapped_part_of_a_line_finds_the_node_written_there(opened):
    """The hover reads the pointer's place from the highlight overlay, which wraps as the
    textarea does: on the wrapped part of a long line it names the node written there."""
    page = opened("/?source=" + quote(WRAPPED), viewport={"width": 1280, "height": 800})
    ids = page.evaluate(
        "Object.fromEntries(window.gradtrace.state.trace.nodes.map((n) => [n.text, n.id]))"
    )
    box = page.evaluate(
        """() => { const ta = document.querySelector('#source');
        const hl = document.querySelector('#editor-hl');
        const text = hl.firstChild ? hl.textContent : '';
        const start = text.indexOf('iota');
        const walker = document.createTreeWalker(hl, NodeFilter.SHOW_TEXT);
        let seen = 0, n;
        while ((n = walker.nextNode())) {
          if (seen + n.length > start) {
            const r = document.createRange();
            r.setStart(n, start - seen); r.setEnd(n, start - seen + 1);
            const b = r.getBoundingClientRect();
            const t = ta.getBoundingClientRect();
            return {x: b.left + b.width / 2, y: b.top + b.height / 2, first: t.top + 20};
          }
          seen += n.length;
        }
        return null; }"""
    )
    assert box is not None and box["y"] > box["first"]  # on the wrapped part, below line 1's top
    page.mouse.move(box["x"], box["y"])
    wait_js(page, f"window.gradtrace.state.hover === {ids['iota']!r}")
