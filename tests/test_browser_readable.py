"""Every gallery program reads at every size, in real Chromium: node text measured in CSS px
(its font size times the drawing's scale on screen) on the page at 1366×900, in presentation at
1280×720 and 1920×1080, on a 390×844 phone and in a 643 px Sphinx column (the directive's
stepper, `:mode: stepper`, in its iframe). At each size a program either meets the size's
target whole, every node in its box, or the view follows the running node at the target size,
the overview inset on show, and stepping keeps the running node in the box, clear of the zoom
buttons and the inset. Each size is one page visit: the programs are chosen as a user chooses
them (the example menu; in presentation, Esc, the menu, Present again).

Zoom grows the box and keeps the running node in view while stepping; presentation has the zoom
buttons, and ⤢ shows the whole drawing. The measured sizes are written to
`<pytest tmp>/readable-<size>.json` (and printed with -s)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from app.examples import EXAMPLES
from bench.chromium import have_chromium
from tests.browser_kit import wait_js, watched_page

pytestmark = pytest.mark.browser

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

IDS = [ex["id"] for ex in EXAMPLES]
PAGE = {"viewport": {"width": 1366, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SIZES = {
    # name: (context options, presentation?, the least node text in CSS px)
    "page-1366x900": (PAGE, False, 12.0),
    "present-1280x720": ({"viewport": {"width": 1280, "height": 720}}, True, 20.0),
    "present-1920x1080": ({"viewport": {"width": 1920, "height": 1080}}, True, 30.0),
    "phone-390x844": (PHONE, False, 10.0),
}
SPHINX_COLUMN, SPHINX_TARGET = 643, 12.0
SLACK = 0.05  # px: the scale is computed, not measured

# Counts the page's requests in flight, so a test knows when the other direction has come.
COUNT_FETCHES = """(() => {
  const real = window.fetch;
  window.__inflight = 0;
  window.fetch = (...args) => { window.__inflight++;
    return real(...args).finally(() => { window.__inflight--; }); };
})();"""

# The drawing as a reader sees it: each node's text size, where the nodes, the running node,
# the zoom buttons and the overview inset are, in CSS px.
LOOK = """() => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
    return {l: r.left, t: r.top, r: r.right, b: r.bottom, w: r.width, h: r.height}; };
  const host = document.querySelector('#graph'), svg = host.querySelector('svg');
  const frame = host.parentElement;
  const px = [...svg.querySelectorAll('g.node text[id$="-head"]')]
    .map((t) => parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a);
  const bar = document.querySelector('.graph-pane .stepbar');
  const fixed = bar && getComputedStyle(bar).position === 'fixed';
  const hr = box(host);
  const seen = {l: Math.max(hr.l, 0), t: Math.max(hr.t, 0), r: Math.min(hr.r, innerWidth),
    b: Math.min(hr.b, innerHeight, fixed ? bar.getBoundingClientRect().top : Infinity)};
  const ov = frame.querySelector('.overview');
  return {
    px: Math.min(...px), following: frame.classList.contains('following'),
    layout: svg.querySelector('g.graph.tb') ? 'tb' : 'lr',
    seen, box: hr,
    nodes: [...svg.querySelectorAll('g.node')].map((g) => Object.assign(box(g), {id: g.id})),
    current: box(svg.querySelector('g.node.current')),
    zoom: box(frame.querySelector('.zoom')),
    overview: ov && !ov.hidden ? box(ov) : null,
    step: window.gradtrace.state.step, last: window.gradtrace.maxPos(),
  };
}"""


def inside(r: dict[str, float], box: dict[str, float], slack: float = 0.5) -> bool:
    return (
        r["l"] >= box["l"] - slack
        and r["t"] >= box["t"] - slack
        and r["r"] <= box["r"] + slack
        and r["b"] <= box["b"] + slack
    )


def mostly_in(r: dict[str, float], box: dict[str, float]) -> bool:
    """At least half of `r` is in `box` each way, or `r` is the larger and covers half of it
    (a node zoomed wider than its box is shown from its start)."""
    w = min(r["r"], box["r"]) - max(r["l"], box["l"])
    h = min(r["b"], box["b"]) - max(r["t"], box["t"])
    return w >= 0.5 * min(r["w"], box["w"]) and h >= 0.5 * min(r["h"], box["h"])


def overlaps(r: dict[str, float], o: dict[str, float] | None) -> bool:
    return (
        o is not None
        and r["l"] < o["r"]
        and r["r"] > o["l"]
        and r["t"] < o["b"]
        and r["b"] > o["t"]
    )


def settle(page: Any) -> None:
    """The program has run and any drawing in the other direction has come and been chosen."""
    wait_js(page, "window.gradtrace && document.querySelector('#graph svg')", timeout=30)
    wait_js(page, "!window.gradtrace.state.running && window.__inflight === 0", timeout=30)
    page.evaluate(
        "() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))"
    )
    wait_js(page, "window.__inflight === 0", timeout=30)
    page.evaluate(
        "() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))"
    )


def choose(page: Any, example: str, present: bool) -> None:
    """Open a gallery program as a user does: the menu (presenting: Esc, the menu, Present)."""
    page.evaluate("window.__oldSvg = document.querySelector('#graph svg')")
    if present:
        page.keyboard.press("Escape")
        wait_js(page, "!window.gradtrace.state.present")
    page.select_option("#examples", example)
    wait_js(page, "document.querySelector('#graph svg') !== window.__oldSvg", timeout=30)
    if present:
        page.click("#present-btn")
        wait_js(page, "window.gradtrace.state.present")
    settle(page)


def check_readable(page: Any, example: str, target: float) -> dict[str, Any]:
    """The program on show reads at `target` px: whole, or followed while it is stepped."""
    look = page.evaluate(LOOK)
    assert look["px"] >= target - SLACK, (example, look["px"], target)
    if not look["following"]:
        out = [n["id"] for n in look["nodes"] if not inside(n, look["seen"])]
        under = [n["id"] for n in look["nodes"] if overlaps(n, look["zoom"])]
        assert out == [] and under == [], (example, out, under)
        return look
    assert look["overview"] is not None, example  # where in the drawing the view is
    # Stepping (the keys, from wherever the focus is): the running node stays in the box.
    for key in ("ArrowRight", "ArrowRight", "End"):
        page.keyboard.press(key)
        page.evaluate(
            "() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))"
        )
        now = page.evaluate(LOOK)
        cur = now["current"]
        assert cur is not None, (example, key)
        assert inside(cur, now["seen"]) or (cur["w"] > now["seen"]["r"] - now["seen"]["l"] - 32), (
            example,
            key,
            cur,
            now["seen"],
        )
        assert not overlaps(cur, now["zoom"]) and not overlaps(cur, now["overview"]), (example, key)
        assert now["px"] >= target - SLACK
    page.keyboard.press("Home")
    return look


def record(tmp_path_factory: pytest.TempPathFactory, size: str, rows: dict[str, Any]) -> None:
    """The sizes measured, for the report: <pytest's base tmp>/readable-<size>.json."""
    out = tmp_path_factory.getbasetemp() / f"readable-{size}.json"
    out.write_text(json.dumps(rows, indent=1))


@pytest.mark.parametrize("size", list(SIZES))
def test_every_gallery_program_reads_at_its_size(browser, base_url, tmp_path_factory, size):
    options, present, target = SIZES[size]
    rows: dict[str, Any] = {}
    with watched_page(browser, **options) as page:
        page.add_init_script(COUNT_FETCHES)
        page.goto(base_url + "/" + ("?present=1" if present else ""))
        settle(page)
        for example in IDS:
            choose(page, example, present)
            look = check_readable(page, example, target)
            rows[example] = {k: look[k] for k in ("px", "layout", "following")}
    record(tmp_path_factory, size, rows)
    # The readable size is no accident of one program: the small ones are shown whole.
    assert not rows["xy-plus-x"]["following"] and not rows["zero-grad"]["following"]


# ---- the Sphinx directive's stepper in a docs column ----------------------------------------


@pytest.fixture(scope="module")
def sphinx_column(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page with every gallery program as the directive writes `:mode: stepper` (the same
    files and <iframe>, gradtrace/figure.py), in a column as wide as alabaster's."""
    from gradtrace.figure import build, media_html, parse_options, write

    out = tmp_path_factory.mktemp("sphinx-column")
    frames = []
    for ex in EXAMPLES:
        options = {"mode": "stepper", "step": "0"}
        if ex["values"]:
            options["values"] = ",".join(f"{k}={v}" for k, v in ex["values"].items())
        (fig,) = build(parse_options(ex["source"], options))
        write(fig, out)
        frames.append(f"<h2>{ex['id']}</h2>{media_html(fig, fig.name)}")
    page = out / "column.html"
    page.write_text(
        '<!doctype html><html lang="en"><meta charset="utf-8"><title>notes</title>'
        f'<body style="margin:0"><main style="width:{SPHINX_COLUMN}px">{"".join(frames)}</main>'
    )
    return page


def test_every_gallery_program_reads_in_a_sphinx_column(browser, sphinx_column, tmp_path_factory):
    rows: dict[str, Any] = {}
    with watched_page(browser, viewport={"width": 1100, "height": 900}) as page:
        page.goto(sphinx_column.as_uri())
        frames = page.locator("iframe.gradtrace-stepper")
        assert frames.count() == len(IDS)
        for i, example in enumerate(IDS):
            frames.nth(i).scroll_into_view_if_needed()  # a frame out of sight draws nothing new
            frame = frames.nth(i).element_handle().content_frame()
            wait_js(frame, "window.gradtrace && document.querySelector('#graph svg')", timeout=30)
            frame.evaluate(
                "() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))"
            )
            frame.focus("#step-slider")  # the reader clicked into it: its keys step it
            look = check_readable(frame_as_page(frame, page), example, SPHINX_TARGET)
            assert frame.evaluate("innerWidth") <= SPHINX_COLUMN
            # The stepper fits its frame: nothing to scroll inside it.
            assert frame.evaluate("document.documentElement.scrollHeight <= innerHeight + 1")
            rows[example] = {k: look[k] for k in ("px", "layout", "following")}
    record(tmp_path_factory, f"sphinx-{SPHINX_COLUMN}px", rows)
    assert rows["neuron"]["layout"] == "tb"  # it was drawn left to right, at 5.9 px


class frame_as_page:  # noqa: N801 (a Playwright frame with the page's keyboard)
    """A frame where check_readable wants a page: its evaluate, the page's keyboard."""

    def __init__(self, frame: Any, page: Any) -> None:
        self.frame, self.keyboard = frame, page.keyboard

    def evaluate(self, expr: str) -> Any:
        return self.frame.evaluate(expr)


# ---- zoom, and presentation's zoom ----------------------------------------------------------

NEURON = (
    "x1 = 2\nx2 = 0\nw1 = -3\nw2 = 1\nb = 6.8813735870195432\nn = x1*w1 + x2*w2 + b\no = tanh(n)"
)
RNN = next(ex for ex in EXAMPLES if ex["id"] == "rnn")


def test_zooming_in_grows_the_box_and_stepping_keeps_the_running_node_in_it(browser, base_url):
    with watched_page(browser, **PAGE) as page:
        page.add_init_script(COUNT_FETCHES)
        page.goto(base_url + "/?source=" + quote(NEURON) + "&step=0")
        settle(page)
        before = page.evaluate(LOOK)
        for _ in range(8):
            page.click("#zoom-in")
        zoomed = page.evaluate(LOOK)
        assert zoomed["box"]["h"] > before["box"]["h"] * 1.3  # the box grew with the drawing
        assert zoomed["px"] > before["px"] * 4
        page.evaluate("document.activeElement.blur()")  # the keys from the page, not a button
        for k in range(1, int(zoomed["last"]) + 1):
            page.keyboard.press("ArrowRight")
            wait_js(page, f"window.gradtrace.state.step === {k}")
            page.evaluate(
                "() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))"
            )
            now = page.evaluate(LOOK)
            assert now["current"] and mostly_in(now["current"], now["box"]), (k, now["current"])
            assert now["px"] == pytest.approx(zoomed["px"])  # stepping kept the zoom
        page.click("#zoom-fit")
        whole = page.evaluate(LOOK)
        assert all(inside(n, whole["box"]) for n in whole["nodes"])
        assert whole["box"]["h"] < zoomed["box"]["h"]


def test_presentation_has_zoom_and_fit_shows_the_whole_of_a_followed_drawing(browser, base_url):
    values = ",".join(f"{k}={v}" for k, v in RNN["values"].items())
    path = (
        "/?source="
        + quote(RNN["source"])
        + ("&values=" + values if values else "")
        + "&present=1&step=4"
    )
    with watched_page(browser, viewport={"width": 1280, "height": 720}) as page:
        page.add_init_script(COUNT_FETCHES)
        page.goto(base_url + path)
        settle(page)
        look = page.evaluate(LOOK)
        assert look["following"] and look["px"] >= 20 - SLACK and look["overview"]
        assert page.is_visible("#zoom-in") and page.is_visible("#zoom-fit")
        page.screenshot(path="/tmp/readable-present-rnn.png")
        page.click("#zoom-fit")
        whole = page.evaluate(LOOK)
        assert not whole["following"] and whole["overview"] is None
        assert all(inside(n, whole["seen"]) for n in whole["nodes"])
        page.click("#zoom-in")
        assert page.evaluate(LOOK)["px"] > whole["px"]
