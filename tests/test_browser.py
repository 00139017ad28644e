"""The page in real Chromium (Debian's `chromium`, driven by Playwright).

One browser and one server for the whole session. Every test also checks that the page logged
no console error and made no request to another origin. The screenshots in docs/screenshots/
are made here, so they stay current.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest

from bench.chromium import have_chromium
from tests.browser_kit import wait_js  # noqa: F401 (other browser tests import it from here)

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
LESSON = "/?source=x*y%2Bx&values=x=2,y=3"
NEURON = (
    "x1 = 2.0\nx2 = 0.0\nw1 = -3.0\nw2 = 1.0\nb = 6.8813735870195432\n"
    "n = x1*w1 + x2*w2 + b\no = tanh(n)"
)

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


# ---- one server, one browser -----------------------------------------------------------------


# The `browser` and `base_url` fixtures (one Chromium, one server) are in conftest.py.


class Watch:
    """What a page did that it must not: console errors, page errors, other-origin requests."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.errors: list[str] = []
        self.foreign: list[str] = []
        self.requests: list[str] = []

    def attach(self, page: Any) -> Any:
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", self._request)
        return page

    def _request(self, req: Any) -> None:
        self.requests.append(req.url)
        if not (req.url.startswith(self.origin + "/") or req.url.startswith(("data:", "blob:"))):
            self.foreign.append(req.url)


@pytest.fixture
def ctx(browser: Any, base_url: str) -> Iterator[tuple[Any, Watch]]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    watch = Watch(base_url)
    context.on("page", watch.attach)
    yield context, watch
    context.close()
    assert not watch.errors, f"console errors: {watch.errors}"
    assert not watch.foreign, f"requests to another origin: {watch.foreign}"


def open_page(ctx: tuple[Any, Watch], base_url: str, path: str) -> Any:
    context, _ = ctx
    page = context.new_page()
    page.goto(base_url + path)
    wait_js(page, "window.gradtrace !== undefined")
    return page


def trace_of(base_url: str, source: str, values: dict[str, Any]) -> dict[str, Any]:
    r = httpx.post(base_url + "/api/trace", json={"source": source, "values": values})
    r.raise_for_status()
    return r.json()


def grads_after(trace: dict[str, Any], k: int) -> dict[str, Any]:
    grads = {n["id"]: 0.0 for n in trace["nodes"] if n["grad"] is not None}
    for st in trace["steps"][: k + 1]:
        grads.update(st["grads"])
    return grads


def current_row(page: Any) -> dict[str, str]:
    """The row with aria-current="step", as {column header: cell text}."""
    return page.evaluate(
        """() => {
        const t = document.querySelector('#grad-table');
        const heads = [...t.tHead.rows[0].cells].map(c => c.textContent);
        const row = t.querySelector('tbody tr[aria-current="step"]');
        const out = {};
        [...row.cells].forEach((c, i) => { out[heads[i]] = c.textContent; });
        return out;
    }"""
    )


def step_param(page: Any) -> str | None:
    return (parse_qs(urlsplit(page.url).query).get("step") or [None])[0]


def wait_step(page: Any, k: int) -> None:
    wait_js(page, f"window.gradtrace.state.step === {k}")


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(150)
    page.screenshot(path=str(SHOTS / name))


# ---- tests -----------------------------------------------------------------------------------


def test_a_permalink_opens_at_its_step_and_the_table_matches_the_api(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=1")
    assert page.text_content("#step-label") == "Step 1 of 2"
    trace = trace_of(base_url, "x*y+x", {"x": 2, "y": 3})
    labels = {n["id"]: n["label"] for n in trace["nodes"]}
    row = current_row(page)
    for nid, g in grads_after(trace, 1).items():
        assert float(row[labels[nid]]) == pytest.approx(g)
    # The drawing: the output runs, both of its input edges carry gradient, x.grad is 1 so far.
    out = trace["output"]
    assert "current" in page.get_attribute(f"#graph g.node#{out}", "class")
    for arg in (0, 1):
        assert "active" in page.get_attribute(f"#graph #e-{out}-{arg}", "class")
    assert page.text_content("#graph #n0-grad") == "grad 1"
    assert page.locator("#graph g.node").count() == len(trace["nodes"])
    explain = page.text_content("#explain")
    assert "sends" in explain and "x.grad: 0 → 1" in explain


def test_every_step_shows_the_apis_grads_and_marks(ctx, base_url):
    source, values = "(x*y + x)*(x - y)", {"x": 2, "y": 3}
    trace = trace_of(base_url, source, values)
    labels = {n["id"]: n["label"] for n in trace["nodes"]}
    page = open_page(ctx, base_url, "/?source=" + quote(source) + "&values=x=2,y=3&step=0")
    n = len(trace["steps"]) - 1
    for k, st in enumerate(trace["steps"]):
        wait_step(page, k)
        assert page.text_content("#step-label") == f"Step {k} of {n}"
        row = current_row(page)
        for nid, g in grads_after(trace, k).items():
            assert float(row[labels[nid]]) == pytest.approx(g, rel=1e-3)
        marks = page.evaluate(
            """() => ({
            current: [...document.querySelectorAll('#graph g.node.current')].map(g => g.id),
            changed: [...document.querySelectorAll('#graph g.node.changed')].map(g => g.id),
            active: [...document.querySelectorAll('#graph g.edge.active')].map(g => g.id),
        })"""
        )
        assert marks["current"] == [st["node"]]
        assert sorted(marks["changed"]) == sorted(st["grads"])
        assert sorted(marks["active"]) == sorted(f"e-{st['node']}-{t['arg']}" for t in st["terms"])
        page.keyboard.press("ArrowRight")


def test_the_assign_bug_row_and_options_in_the_address(ctx, base_url):
    page = open_page(ctx, base_url, "/?source=x*x&values=x=3&accumulate=assign&order=kahn")
    assert page.input_value("#accumulate") == "assign" and page.input_value("#order") == "kahn"
    assert page.text_content("#grad-table tfoot th") == "with += (correct)"
    assert page.text_content("#grad-table tfoot td[data-node='n0']") == "6"
    assert "overwritten" in page.text_content("#explain")
    page.select_option("#accumulate", "add")
    wait_js(page, "window.gradtrace.state.trace.options.accumulate === 'add'")
    assert page.text_content("#grad-table tfoot th") == "if += were = (wrong)"
    wait_js(page, "!new URL(location.href).searchParams.has('accumulate')")


def test_buttons_keys_and_slider_step_and_the_address_follows(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=0")
    assert page.text_content("#step-label") == "Step 0 of 2"
    page.click("#btn-next")
    wait_step(page, 1)
    page.click("#btn-next")
    wait_step(page, 2)
    assert page.text_content("#step-label") == "Step 2 of 2"
    assert page.is_disabled("#btn-next")
    assert page.text_content("#graph #n0-grad") == "grad 4"
    assert "changed" in page.get_attribute("#graph g.node#n0", "class")
    wait_js(page, "new URL(location.href).searchParams.get('step') === '2'")
    page.click("#btn-first")
    wait_step(page, 0)
    page.locator("body").focus()
    page.keyboard.press("ArrowRight")
    wait_step(page, 1)
    page.keyboard.press("End")
    wait_step(page, 2)
    page.keyboard.press("PageUp")
    wait_step(page, 1)
    page.keyboard.press("Home")
    wait_step(page, 0)
    page.keyboard.press("PageDown")
    wait_step(page, 1)
    assert page.get_attribute("#grad-table tbody tr[data-step='1']", "aria-current") == "step"
    # Not while typing in the editor.
    page.focus("#source")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("End")
    page.wait_for_timeout(100)
    assert page.evaluate("window.gradtrace.state.step") == 1
    page.fill("#step-slider", "2")
    wait_step(page, 2)
    wait_js(page, "new URL(location.href).searchParams.get('step') === '2'")


def test_typing_a_program_redraws_it_and_gives_value_fields(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=1")
    page.fill("#source", "a*b*b")
    wait_js(page, "document.querySelectorAll('#graph g.node').length === 4")
    wait_js(page, "window.gradtrace.state.trace.grads.b !== undefined")
    assert page.locator("#value-fields input").count() == 2
    assert page.text_content("#step-label") == "Step 0 of 2"  # a new program: its first step
    page.fill("#value-fields input[data-name='b']", "3")
    wait_js(page, "window.gradtrace.state.trace.grads.b === 6")
    wait_js(page, "new URL(location.href).searchParams.get('values') === 'b=3'")
    headers = page.eval_on_selector_all(
        "#grad-table thead th", "els => els.map(e => e.textContent)"
    )
    assert "b" in headers and "a" in headers


def test_a_long_loop_opens_collapsed_and_a_click_on_its_box_draws_every_iteration(ctx, base_url):
    src = "w = 0.99\nb = 0.1\nh = 1.0\nfor i in range(80):\n    h = tanh(h*w + b)\nL = h"
    page = open_page(ctx, base_url, "/?source=" + quote(src))
    page.wait_for_selector("#graph svg g#loop-1")
    assert page.is_visible("#collapse-note") and page.is_checked("#collapse-loops")
    assert "collapse" not in page.url  # the server decided; the address does not say
    # A tap on the loop's box (which may be scrolled out of the frame: the event, not a mouse).
    page.dispatch_event("#graph svg g#loop-1 text", "pointerdown")
    page.dispatch_event("#graph svg g#loop-1 text", "pointerup")
    wait_js(page, "!document.querySelector('#graph svg g#loop-1')")
    assert page.locator("#graph svg g.node:not(.copy)").count() == 243  # every iteration
    assert not page.is_visible("#collapse-note") and not page.is_checked("#collapse-loops")
    wait_js(page, "new URL(location.href).searchParams.get('collapse') === '0'")
    again = open_page(ctx, base_url, page.url.removeprefix(base_url))
    again.wait_for_selector("#graph svg g.node")
    assert again.locator("#graph svg g#loop-1").count() == 0
    again.check("#collapse-loops")  # asked for: collapsed, and the address says so
    again.wait_for_selector("#graph svg g#loop-1")
    wait_js(again, "new URL(location.href).searchParams.get('collapse') === '1'")


def test_an_error_is_shown_in_place_and_the_last_drawing_stays_dimmed(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=1")
    page.fill("#source", "x*y + tanhh(x)")
    page.wait_for_selector("#error-box:not([hidden])")
    box = page.text_content("#error-box")
    assert "Line 1, column 7" in box and "tanh" in box and "^" in box
    assert page.text_content("#editor-hl mark.err") == "tanhh"
    assert "stale" in page.get_attribute("#graph", "class")
    assert page.locator("#graph g.node#n0").count() == 1
    assert page.text_content("#step-label") == "Step 1 of 2"
    page.fill("#source", "x*y + tanh(x)")
    page.wait_for_selector("#error-box", state="hidden")
    assert "stale" not in (page.get_attribute("#graph", "class") or "")


def test_the_language_switch_changes_every_word(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=1")
    page.click(".lang button[data-lang='zh']")
    wait_js(page, "document.documentElement.lang === 'zh-CN'")
    assert page.text_content("#step-label") == "第 1 步,共 2 步"
    assert "传给" in page.text_content("#explain")
    assert page.text_content("#h-table") == "每一步之后的 grad"
    wait_js(page, "new URL(location.href).searchParams.get('lang') === 'zh'")
    # No English word is left in the chrome (the program and numbers are not words).
    chrome = page.evaluate(
        "[...document.querySelectorAll('[data-i18n]')].map(e => e.textContent).join(' ')"
    )
    assert not re.search(r"\b(Step|Share|Present|Values|Options|Legend)\b", chrome)
    page.click(".lang button[data-lang='en']")
    wait_js(page, "document.documentElement.lang === 'en'")
    assert page.text_content("#step-label") == "Step 1 of 2"


def test_copy_link_opens_the_same_state_in_a_fresh_page(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=2&lang=zh")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    wait_step(page, 1)
    page.click("#share summary")
    page.click("#copy-link")
    wait_js(page, "document.querySelector('#share-text').value.startsWith('http')")
    link = page.input_value("#share-text")
    assert link == page.evaluate("navigator.clipboard.readText()")
    assert link == page.url
    fresh = open_page(ctx, base_url, link[len(base_url) :])
    assert fresh.text_content("#step-label") == "第 1 步,共 2 步"
    assert fresh.input_value("#source") == "x*y+x"
    assert current_row(fresh) == current_row(page)


def test_a_long_program_gets_a_compressed_link_that_opens_it(ctx, base_url):
    src = NEURON + "\n" + "\n".join(f"# note {i}: the neuron from the lesson" for i in range(12))
    page = open_page(ctx, base_url, "/?source=" + quote(src) + "&step=3")
    wait_js(page, "new URL(location.href).searchParams.has('z')")
    assert "source=" not in page.url
    fresh = open_page(ctx, base_url, page.url[len(base_url) :])
    assert fresh.input_value("#source") == src
    assert fresh.text_content("#step-label") == page.text_content("#step-label")


def test_embed_code_and_the_embed_page(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=1")
    page.click("#share summary")
    page.fill("#embed-w", "640")
    page.click("#copy-embed")
    wait_js(page, "document.querySelector('#share-text').value.startsWith('<iframe')")
    code = page.input_value("#share-text")
    assert 'width="640"' in code and "/embed?" in code and "step=1" in code
    src = re.search(r'src="([^"]+)"', code).group(1).replace("&amp;", "&")
    embed = open_page(ctx, base_url, src[len(base_url) :])
    assert embed.text_content("#step-label") == "Step 1 of 2"
    assert embed.locator("#source").count() == 0 and embed.locator(".topbar").count() == 0
    assert embed.locator("#graph g.node").count() == 4
    embed.keyboard.press("ArrowRight")
    wait_step(embed, 2)


def test_downloads_of_the_current_step(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=1")
    page.click("#share summary")
    with page.expect_download() as svg_dl:
        page.click("#download-svg")
    assert svg_dl.value.suggested_filename == "gradtrace-step-1.svg"
    assert b"<svg" in Path(svg_dl.value.path()).read_bytes()
    with page.expect_download() as png_dl:
        page.click("#download-png")
    assert Path(png_dl.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_hover_links_the_table_the_drawing_and_the_source(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=1")
    page.hover("#grad-table thead th[data-node='n1']")
    wait_js(page, "document.querySelector('#graph g.node#n1').classList.contains('hover')")
    assert page.text_content("#editor-hl mark.hov") == "y"
    page.hover("#graph g.node#n2")
    wait_js(
        page,
        "document.querySelector('#grad-table thead th[data-node=n2]').classList.contains('hover')",
    )


def test_forward_pass_can_be_stepped_before_backward(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&step=0")
    page.check("#forward-mode")
    assert page.text_content("#step-label") == "Forward 1 of 4"
    assert "fwd-pending" in page.get_attribute("#graph g.node#n3", "class")
    page.locator("body").focus()
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    assert page.text_content("#step-label") == "Step 0 of 2"
    assert "fwd-pending" not in page.get_attribute("#graph g.node#n3", "class")


def test_screenshots_at_a_middle_step(ctx, base_url, browser):
    context, watch = ctx
    neuron = "/?source=" + quote(NEURON) + "&step=3"
    page = open_page(ctx, base_url, neuron)
    shot(page, "desktop.png")  # present.png: tests/test_browser_present.py
    zh = open_page(ctx, base_url, LESSON + "&step=1&lang=zh")
    shot(zh, "zh.png")
    phone_ctx = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
    )
    phone_ctx.on("page", watch.attach)
    try:
        phone = phone_ctx.new_page()
        phone.goto(base_url + LESSON + "&step=1")
        wait_js(phone, "window.gradtrace !== undefined")
        # The step buttons sit at the bottom of the screen, under the thumb.
        box = phone.locator("#btn-next").bounding_box()
        assert box and box["y"] > 844 * 0.75
        phone.tap("#btn-next")
        wait_step(phone, 2)
        phone.tap("#btn-back")
        wait_step(phone, 1)
        shot(phone, "phone.png")
    finally:
        phone_ctx.close()
    for name in ("desktop", "zh", "phone"):
        assert (SHOTS / f"{name}.png").stat().st_size > 10_000
    assert json.dumps(watch.requests)  # requests were recorded (and checked by the fixture)


# ---- a large graph: stepping restyles only what changed, and must look like a fresh page ---------

SNAPSHOT = """() => {
    const cls = (el) => [...el.classList].filter((c) => c !== 'node' && c !== 'edge')
        .sort().join(' ');
    const text = (el) => (el ? el.textContent : null);
    const nodes = {}, edges = {}, chips = {}, cells = {};
    document.querySelectorAll('#graph g.node').forEach((g) => {
        nodes[g.id] = [cls(g), text(g.querySelector('[id$="-head"]')),
                       text(g.querySelector('[id$="-grad"]')), text(g.querySelector('title'))];
    });
    document.querySelectorAll('#graph g.edge').forEach((g) => { edges[g.id] = cls(g); });
    document.querySelectorAll('#topo-strip li, #backward-strip li').forEach((li, i) => {
        chips[i] = [li.dataset.node, li.getAttribute('aria-current'), li.className];
    });
    const row = document.querySelector('#grad-table tbody tr[aria-current="step"]');
    row.querySelectorAll('td[data-node]').forEach((td) => {
        cells[td.dataset.node] = [td.textContent, td.className];
    });
    const rows = [...document.querySelectorAll('#grad-table tbody tr')].map(
        (tr) => [tr.dataset.step, tr.getAttribute('aria-current'), tr.className]);
    return {nodes, edges, chips, cells, rows, explain: text(document.querySelector('#explain')),
            label: text(document.querySelector('#step-label'))};
}"""


def test_stepping_a_large_graph_looks_like_opening_it_at_that_step(ctx, base_url):
    from bench.programs import sized_program

    source = sized_program(90)
    trace = trace_of(base_url, source, {})
    n = len(trace["steps"]) - 1
    assert n * len(trace["nodes"]) > 5000  # a windowed, wide table: cells only in view
    page = open_page(ctx, base_url, "/?source=" + quote(source) + "&step=0")
    # Forwards one at a time, back one, and jumps both ways.
    walk = [*range(1, 30), 28, 27, n, n - 1, 5, 60, 0, 40]
    for k in walk:
        page.evaluate(f"window.gradtrace.setPos({k})")
        if k not in (1, 2, 27, 28, 29, n, 5, 60, 0, 40):
            continue
        stepped = page.evaluate(SNAPSHOT)
        fresh = open_page(ctx, base_url, "/?source=" + quote(source) + f"&step={k}")
        assert stepped == fresh.evaluate(SNAPSHOT), f"step {k}"
        fresh.close()
    # The current row shows every grad after its step (the columns in view have cells).
    cells = page.evaluate(SNAPSHOT)["cells"]
    assert len(cells) >= 10
    for nid, text in cells.items():
        want = grads_after(trace, 40)[nid]
        assert float(text[0]) == pytest.approx(want, rel=1e-3, abs=1e-4)
    # Scrolled sideways, the table fills in the columns that come into view, under their heads.
    page.evaluate("document.querySelector('.table-scroll').scrollLeft = 4000")
    wait_js(
        page,
        """(() => {
        const box = document.querySelector('.table-scroll');
        const row = document.querySelector('#grad-table tbody tr[aria-current="step"]');
        const tds = [...row.querySelectorAll('td[data-node]')];
        return tds.some((td) => td.offsetLeft >= box.scrollLeft &&
                                td.offsetLeft < box.scrollLeft + box.clientWidth);
    })()""",
    )
    aligned = page.evaluate(
        """() => [...document.querySelectorAll(
            '#grad-table tbody tr[aria-current="step"] td[data-node]')].every((td) => {
            const th = document.querySelector(
                `#grad-table thead th[data-node="${td.dataset.node}"]`);
            return Math.abs(th.offsetLeft - td.offsetLeft) <= 1 &&
                Math.abs(th.offsetWidth - td.offsetWidth) <= 1;
        })"""
    )
    assert aligned
