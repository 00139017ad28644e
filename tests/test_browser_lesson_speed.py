"""Lessons step as fast as the plain page, and a loop too large to draw in full says so.

In real Chromium (the session's `browser` and `base_url`, tests/conftest.py). A lesson view is
built once per trace and a step restyles it in place (static/js/lessons/panel.js); the bounds
on time here only catch a hang or a rebuild per step (the bench row "lesson step" measures).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from bench.programs import mlp_program
from tests import browser_kit
from tests.browser_kit import watched_page

pytestmark = pytest.mark.browser

MLP = mlp_program(3, (6, 7, 1))  # 247 nodes, 149 steps (bench/browser.py's lesson row)
LOOP_903 = "w = 0.99\nb = 0.1\nh = 1.0\nfor i in range(300):\n    h = tanh(h*w + b)\nL = h"
STEP_BOUND_MS = 500  # a step takes ~10-30 ms; a view rebuilt per step took 1.2-1.6 s


@pytest.fixture
def page(browser: Any, base_url: str) -> Iterator[Any]:
    with watched_page(browser, viewport={"width": 1280, "height": 900}) as p:
        yield p


def wait_js(page: Any, expr: str, timeout: float = 30.0) -> Any:
    """browser_kit.wait_js, with the longer wait a 247-node MLP's first answer may need."""
    return browser_kit.wait_js(page, expr, timeout)


def open_lesson(page: Any, base_url: str, source: str, lesson: str) -> None:
    page.goto(f"{base_url}/?source={quote(source)}&step=0&lesson={lesson}")
    wait_js(
        page,
        f"window.gradtraceLessons && window.gradtraceLessons.state.data['{lesson}'] && "
        "!window.gradtraceLessons.state.loading && "
        f"document.querySelector('#lesson-body').dataset.lesson === '{lesson}' && "
        "document.querySelector('#lesson-body table')",
        timeout=60,
    )


def grads_after(trace: dict[str, Any], k: int) -> dict[str, Any]:
    grads: dict[str, Any] = {}
    for st in trace["steps"][: k + 1]:
        grads.update(st["grads"])
    return grads


def current_cells(page: Any, table: str) -> tuple[str | None, dict[str, Any], int]:
    """The current row of a lesson table: its step, {node: exact grad} of the cells on show,
    and how many rows come after the current one (none should)."""
    return tuple(
        page.evaluate(
            """(sel) => {
        const t = document.querySelector(sel);
        const tr = t.querySelector('tbody tr[aria-current="step"]');
        const cells = {};
        if (tr) tr.querySelectorAll('td[data-node]').forEach((td) => {
          cells[td.dataset.node] = td.classList.contains('lost') ? null : JSON.parse(td.title);
        });
        const k = tr ? Number(tr.dataset.step) : -1;
        const later = [...t.querySelectorAll('tbody tr')].filter((r) => Number(r.dataset.step) > k);
        return [tr ? tr.dataset.step : null, cells, later.length];
    }""",
            table,
        )
    )  # type: ignore[return-value]


def timed_step(page: Any, k: int) -> float:
    """setPos(k) and the style and layout it forces, in ms, timed in the page."""
    return float(
        page.evaluate(
            """(k) => {
        const t0 = performance.now();
        window.gradtrace.setPos(k);
        document.querySelector('#lesson-body').getBoundingClientRect();
        document.body.getBoundingClientRect();
        return performance.now() - t0;
    }""",
            k,
        )
    )


def check_row(page: Any, table: str, k: int, trace: dict[str, Any]) -> None:
    step, cells, later = current_cells(page, table)
    assert step == str(k) and later == 0, (table, k, step, later)
    want = grads_after(trace, k)
    assert cells, f"{table}: no cells on show at step {k}"
    for node, got in cells.items():
        if got is not None:
            assert got == pytest.approx(want.get(node, 0.0), rel=1e-9, abs=1e-12), (table, k, node)


def test_compare_assign_steps_the_mlp_in_place_with_the_right_rows(page, base_url):
    traces = {
        acc: httpx.post(
            base_url + "/api/trace", json={"source": MLP, "accumulate": acc}, timeout=60
        ).json()
        for acc in ("add", "assign")
    }
    assert len(traces["add"]["nodes"]) == 247 and len(traces["add"]["steps"]) == 149
    open_lesson(page, base_url, MLP, "compare_assign")
    page.evaluate("() => { window.__lessonBody = document.querySelector('#ls-table-add'); }")
    times = [timed_step(page, k) for k in range(1, 149)]
    assert max(times) < STEP_BOUND_MS, f"slowest step {max(times):.0f} ms"
    # The tables were built once: the same element after every step, not a new one per step.
    assert page.evaluate("() => window.__lessonBody === document.querySelector('#ls-table-add')")
    for k in (148, 90, 3, 0, 77):
        timed_step(page, k)
        check_row(page, "#ls-table-add", k, traces["add"])
        check_row(page, "#ls-table-assign", k, traces["assign"])
    # A window of rows ending at the step, and the note says which.
    assert page.text_content(".ls-compare .ls-window").strip().endswith("/ 148")
    # Scrolled sideways, the table fills in the columns that came into view.
    last_col = page.evaluate(
        """() => { const box = document.querySelector('#ls-table-add').closest('.ls-scroll');
        box.scrollLeft = box.scrollWidth; return [...document.querySelectorAll(
        '#ls-table-add thead th[data-node]')].pop().dataset.node; }"""
    )
    wait_js(
        page,
        'document.querySelector(\'#ls-table-add tbody tr[aria-current="step"] '
        f'td[data-node="{last_col}"]\')',
        timeout=10,
    )
    check_row(page, "#ls-table-add", 77, traces["add"])


def test_a_lesson_with_its_own_stepper_steps_in_place(page, base_url):
    open_lesson(page, base_url, MLP, "forward")
    page.evaluate("() => { window.__fw = document.querySelector('#ls-fw-table'); }")
    times = page.evaluate(
        """() => { const out = [];
        for (let k = 1; k <= 60; k++) { const s = document.querySelector('#ls-slider');
          const t0 = performance.now(); s.value = String(k); s.dispatchEvent(new Event('input'));
          document.body.getBoundingClientRect(); out.push(performance.now() - t0); }
        return out; }"""
    )
    assert max(times) < STEP_BOUND_MS, f"slowest step {max(times):.0f} ms"
    assert page.evaluate("() => window.__fw === document.querySelector('#ls-fw-table')")
    assert page.text_content("#ls-step-label").startswith("61")
    filled = page.evaluate(
        "() => [...document.querySelectorAll('#ls-fw-table tbody td:nth-child(n+3)')]"
        ".filter((td) => td.textContent !== '').length"
    )
    assert filled == 61  # one tangent per lesson step, 0..60
    page.click("#ls-back")  # the buttons read the step when clicked
    wait_js(page, "window.gradtraceLessons.state.sub === 59")
    assert page.text_content("#ls-step-label").startswith("60")
    assert page.locator("#ls-fw-table tbody tr[aria-current=true]").count() == 1


def test_a_loop_too_large_to_draw_in_full_says_so_and_offers_no_expanding(page, base_url):
    body = httpx.post(base_url + "/api/render", json={"source": LOOP_903}, timeout=60).json()
    assert len(body["trace"]["nodes"]) == 903
    assert body["collapsed"]["refused"] == {"code": "too_large", "nodes": 903, "limit": 500}
    asked = httpx.post(
        base_url + "/api/render", json={"source": LOOP_903, "collapse": False}, timeout=60
    ).json()
    assert asked["collapsed"]["refused"]["code"] == "too_large"  # asked for, still refused
    page.goto(f"{base_url}/?source={quote(LOOP_903)}")
    page.wait_for_selector("#graph svg g#loop-1", timeout=60_000)
    assert page.is_checked("#collapse-loops") and page.is_disabled("#collapse-loops")
    why = page.text_content("#collapse-why")
    assert page.is_visible("#collapse-why") and "903" in why and "500" in why
    note = page.text_content("#collapse-note")
    assert page.is_visible("#collapse-note") and "903" in note and "500" in note
    assert "untick" not in note and "Click" not in note  # no action that cannot work
    # In the chosen language, numbers and all.
    page.click('.lang button[data-lang="zh"]')
    wait_js(page, "document.querySelector('#collapse-note').textContent.includes('个节点')")
    assert "903" in page.text_content("#collapse-note")
    assert "个节点" in page.text_content("#collapse-why")
    # A loop that can be drawn in full keeps its box enabled and its note's offer.
    small = "w = 0.99\nb = 0.1\nh = 1.0\nfor i in range(80):\n    h = tanh(h*w + b)\nL = h"
    state = httpx.post(base_url + "/api/render", json={"source": small}, timeout=60).json()
    assert "refused" not in state["collapsed"]
    page.goto(f"{base_url}/?source={quote(small)}")
    page.wait_for_selector("#graph svg g#loop-1", timeout=60_000)
    assert page.is_checked("#collapse-loops") and not page.is_disabled("#collapse-loops")
    assert not page.is_visible("#collapse-why")
    assert json.dumps(page.text_content("#collapse-note")).count("untick") == 1
