"""The value fields and the things around them, in real Chromium: a field per free name that
takes a number or a tensor, unreadable text marked and never sent, a shape error that says which
field needs a tensor, a 2×2 grad shown as rows, and a new program opening at its first step.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from tests.test_browser import ctx, open_page, wait_js, wait_step  # noqa: F401 (ctx: a fixture)

pytestmark = pytest.mark.browser

MATVEC = "(W @ x).sum()"
SHOTS = "/tmp"


def field(page: Any, name: str) -> Any:
    return page.locator(f"#value-fields input[data-name='{name}']")


def note(page: Any, name: str) -> str:
    return page.text_content(f"#value-note-{name}") or ""


def test_a_tensor_typed_in_a_field_runs_and_its_grad_shows_as_rows(ctx, base_url):  # noqa: F811
    page = open_page(ctx, base_url, "/?source=" + quote("(W * x).sum()"))
    assert page.locator("#value-fields input").count() == 2
    assert field(page, "W").get_attribute("type") == "text"  # a tensor can be typed
    field(page, "W").fill("[[1, 2], [3, 4]]")
    wait_js(page, "Array.isArray(window.gradtrace.state.trace.grads.W)")
    assert page.evaluate("window.gradtrace.state.values.W") == [[1, 2], [3, 4]]
    assert field(page, "W").get_attribute("aria-invalid") is None
    field(page, "x").fill("[[1, -1], [2, 0.5]]")
    wait_js(page, "window.gradtrace.state.trace.grads.W[1][1] === 0.5")
    # W's grad is x, a 2×2: its shape and its rows, never a flat list of four.
    page.evaluate("window.gradtrace.setPos(window.gradtrace.maxPos())")
    cell = page.locator("#grad-table tbody tr[aria-current='step'] td[data-node]").last
    text = page.evaluate(
        """() => {
        const t = document.querySelector('#grad-table');
        const col = [...t.tHead.rows[0].cells].findIndex(c => c.textContent === 'W');
        return t.querySelector('tbody tr[aria-current="step"]').cells[col].textContent;
    }"""
    )
    assert text == "[2×2]\n[1, -1]\n[2, 0.5]", text
    assert cell.count() == 1
    page.screenshot(path=f"{SHOTS}/values_tensor.png", full_page=True)


def test_unreadable_text_is_marked_on_its_field_and_never_sent(ctx, base_url):  # noqa: F811
    page = open_page(ctx, base_url, "/?source=" + quote("x*y + x") + "&values=x=2,y=3")
    before = page.evaluate("window.gradtrace.state.trace")
    field(page, "x").fill("[1,-1,")
    wait_js(page, "document.querySelector('#value-note-x').textContent !== ''")
    assert field(page, "x").get_attribute("aria-invalid") == "true"
    assert "not a number or a nested list" in note(page, "x")
    assert field(page, "x").get_attribute("aria-describedby") == "value-note-x"
    assert field(page, "x").input_value() == "[1,-1,"  # kept as typed, not reset
    page.wait_for_timeout(600)  # longer than the run's debounce: nothing was sent
    assert page.evaluate("window.gradtrace.state.values.x") == 2
    assert page.evaluate("window.gradtrace.state.trace") == before
    field(page, "y").fill("[[1, 2], [3]]")
    wait_js(page, "document.querySelector('#value-note-y').textContent.includes('rows')")
    field(page, "x").fill("5")  # fixed: the mark goes and the program runs with it
    wait_js(page, "window.gradtrace.state.trace.grads.y === 5")
    assert field(page, "x").get_attribute("aria-invalid") is None
    assert note(page, "x") == ""
    page.screenshot(path=f"{SHOTS}/values_invalid.png", full_page=True)


def test_a_shape_error_keeps_the_fields_and_says_which_needs_a_tensor(ctx, base_url):  # noqa: F811
    page = open_page(ctx, base_url, "/?source=" + quote("(W * x).sum()"))
    page.fill("#source", MATVEC)
    wait_js(page, "window.gradtrace.state.error && window.gradtrace.state.error.code === 'shape'")
    assert page.is_visible("#values")
    assert page.locator("#value-fields input").count() == 2  # the fields stay
    wait_js(page, "document.querySelector('#value-note-W').textContent.includes('needs a tensor')")
    assert "needs a tensor" in note(page, "x")
    page.screenshot(path=f"{SHOTS}/values_shape_error.png", full_page=True)
    field(page, "W").fill("[[1, 2], [3, 4]]")
    wait_js(page, "document.querySelector('#value-note-W').textContent.includes('2×2')")
    assert "needs a tensor" in note(page, "x")
    field(page, "x").fill("[1, -1]")
    wait_js(page, "window.gradtrace.state.error === null && !window.gradtrace.state.stale")
    assert page.evaluate("window.gradtrace.state.trace.grads.W") == [[1, -1], [1, -1]]
    assert note(page, "W") == "" and note(page, "x") == ""


def test_a_link_to_a_program_that_needs_tensors_shows_its_fields(ctx, base_url):  # noqa: F811
    page = open_page(ctx, base_url, "/?source=" + quote(MATVEC))
    assert page.evaluate("window.gradtrace.state.error.free") == ["W", "x"]
    assert page.locator("#value-fields input").count() == 2
    assert "needs a tensor" in note(page, "W")


def test_a_new_program_opens_at_its_first_step_and_an_edit_keeps_it(ctx, base_url):  # noqa: F811
    page = open_page(ctx, base_url, "/?source=" + quote("x*y + x") + "&values=x=2,y=3&step=2")
    wait_step(page, 2)
    field(page, "y").fill("4")  # the same program with another value: the step stays
    wait_js(page, "window.gradtrace.state.trace.grads.x === 5")
    assert page.evaluate("window.gradtrace.state.step") == 2
    page.fill("#source", "a*b*b")
    wait_js(page, "window.gradtrace.state.trace.grads.b !== undefined")
    assert page.evaluate("window.gradtrace.state.step") == 0
    assert page.text_content("#step-label") == "Step 0 of 2"
