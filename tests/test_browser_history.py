"""History that keeps work, and a first visit that teaches, in real Chromium.

A new program (an example chosen, or a program typed) pushes a history entry; steps and small
changes replace it, so Back returns to the previous program at its step, and the example menu
names the example on show (after a reload, Back and Forward too). The landing opens at step 0
with a cue; the lessons are in reach above the fold at 1366×768; `/` has a Join a class box;
the key hint names the keys and Share; Predict, then reveal starts at step 0."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest

from bench.chromium import have_chromium
from tests.browser_kit import wait_js, watched_page

pytestmark = pytest.mark.browser

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

ST = "window.gradtrace.state"
LAPTOP = {"viewport": {"width": 1366, "height": 768}}
TYPED = "a = 3\nb = a*a + a\nL = b*b"


def ready(page: Any) -> None:
    wait_js(page, "window.gradtrace !== undefined && document.querySelector('#graph svg')")
    wait_js(page, f"!{ST}.running", timeout=20)


def type_program(page: Any, text: str) -> None:
    page.fill("#source", "")
    page.click("#source")
    page.keyboard.type(text)
    wait_js(
        page, f"{ST}.source === {text!r} && {ST}.trace && !{ST}.running && !{ST}.stale", timeout=20
    )
    wait_js(page, "window.gradtrace.state.trace.nodes.some((n) => n.label === 'b')", timeout=20)


def test_type_choose_an_example_and_back_brings_the_typed_program_back(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        page.goto(base_url + "/")
        ready(page)
        start = page.evaluate("history.length")
        type_program(page, TYPED)
        page.evaluate("document.activeElement.blur()")
        for _ in range(3):  # steps replace the entry
            page.keyboard.press("ArrowRight")
        wait_js(page, f"{ST}.step === 3")
        wait_js(page, "location.search.includes('step=3')")
        assert page.evaluate("history.length") == start + 1  # the typed program's own entry
        assert page.input_value("#examples") == ""  # no example is on show
        page.select_option("#examples", "neuron")
        wait_js(page, f"{ST}.source.includes('tanh') && !{ST}.running", timeout=20)
        wait_js(page, "history.length === " + str(start + 2))
        page.go_back()
        wait_js(page, f"{ST}.source === {TYPED!r} && !{ST}.running", timeout=20)
        wait_js(page, f"{ST}.trace.nodes.some((n) => n.label === 'b') && {ST}.step === 3")
        assert page.input_value("#source") == TYPED
        assert page.input_value("#examples") == ""
        assert page.text_content("#step-label") == "Step 3 of 3"
        page.go_forward()
        wait_js(page, f"{ST}.source.includes('tanh') && !{ST}.running", timeout=20)
        assert page.input_value("#examples") == "neuron"
        page.go_back()
        wait_js(page, f"{ST}.source === {TYPED!r}", timeout=20)
        page.go_back()  # the landing, as it was opened
        wait_js(page, f"{ST}.source === 'x*y + x' && !{ST}.running", timeout=20)
        wait_js(page, f"{ST}.step === 0")
        assert page.input_value("#examples") == "xy-plus-x"


def test_the_example_menu_names_the_example_on_show_after_a_reload(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        page.goto(base_url + "/")
        ready(page)
        page.select_option("#examples", "diamonds")
        wait_js(page, f"{ST}.source.includes('range(12)') && !{ST}.running", timeout=20)
        page.wait_for_function("() => location.search.includes('lesson=')")
        page.reload()
        ready(page)
        assert page.input_value("#examples") == "diamonds"
        # A value changed is a small change: the entry is replaced, and the menu still says so.
        page.select_option("#examples", "xy-plus-x")
        wait_js(page, f"{ST}.source === 'x*y + x' && !{ST}.running", timeout=20)
        length = page.evaluate("history.length")
        page.fill('#value-fields input[data-name="x"]', "5")
        wait_js(page, f"{ST}.values.x === 5 && !{ST}.running", timeout=20)
        wait_js(page, "location.search.includes('x=5')")
        assert page.evaluate("history.length") == length
        assert page.input_value("#examples") == "xy-plus-x"
        # In Chinese, the example's Chinese program is the same example.
        page.goto(base_url + "/?lang=zh&source=" + quote(next_source("diamonds", "zh")))
        ready(page)
        assert page.input_value("#examples") == "diamonds"


def next_source(example: str, lang: str) -> str:
    from app.examples import EXAMPLES

    ex = next(e for e in EXAMPLES if e["id"] == example)
    return str(ex.get("source_zh") if lang == "zh" else ex["source"])


# ---- a first visit ---------------------------------------------------------------------------


def test_the_landing_opens_at_step_0_with_a_cue_and_the_lessons_in_reach(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        page.goto(base_url + "/")
        ready(page)
        assert page.text_content("#step-label") == "Step 0 of 2"
        assert page.is_visible("#step-cue")
        assert "→" in (page.text_content("#step-cue") or "")
        # Every grad but the seed is still 0: nothing is filled in before it is stepped.
        assert page.text_content("#n0-grad") == "grad 0"
        # The lessons, the keys and Share's snippets are named on the first screen.
        menu = page.locator("#lessons-menu summary").bounding_box()
        assert menu and menu["y"] + menu["height"] < 768
        hint = page.text_content(".stepbar .key-hint") or ""
        assert all(word in hint for word in ("PgDn", "↑", "Esc", "Share", "Sphinx"))
        assert page.is_visible(".stepbar .key-hint")
        page.click("#lessons-menu summary")
        page.click('#lessons-menu button[data-open-lesson="orders"]')
        wait_js(page, "window.gradtraceLessons.state.name === 'orders'")
        wait_js(page, "document.activeElement.dataset.lesson === 'orders'")
        tabs = page.locator("#lessons > .ls-tabs").bounding_box()
        assert tabs and tabs["y"] >= 0 and tabs["y"] + tabs["height"] <= 768  # on show
        page.evaluate("window.scrollTo(0, 0); document.activeElement.blur()")
        page.keyboard.press("ArrowRight")
        wait_js(page, f"{ST}.step === 1")
        assert page.is_hidden("#step-cue")  # stepped: the cue has done its job
        page.screenshot(path="/tmp/first-visit.png")


def test_an_address_with_a_program_still_opens_at_its_last_step(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        page.goto(base_url + "/?source=x*y%2Bx&values=x=2,y=3")
        ready(page)
        assert page.text_content("#step-label") == "Step 2 of 2"
        assert page.is_hidden("#step-cue")


def test_predict_then_reveal_starts_at_step_0_whatever_step_is_on_show(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        page.goto(base_url + "/?source=x*y%2Bx&values=x=2,y=3&step=2")
        ready(page)
        page.click('#lessons button[data-lesson="practice"]')
        wait_js(page, f"{ST}.step === 0")
        wait_js(page, "document.querySelector('#ls-pr-now') !== null")
        said = page.text_content("#ls-pr-now") or ""
        assert "Final score" not in said and "Step 1" in said


def test_join_a_class_takes_a_code_to_its_page(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        page.goto(base_url + "/")
        ready(page)
        assert page.is_visible("#join-code")
        page.fill("#join-code", "no!")
        page.click("#join button[type=submit]")
        wait_js(page, "!document.querySelector('#join-msg').hidden")
        assert "6 to 8" in (page.text_content("#join-msg") or "")
        assert page.get_attribute("#join-code", "aria-invalid") == "true"
        code = httpx.post(base_url + "/api/rooms", json={}).json()["room"]
        spoken = code[:3].lower() + " " + code[3:]  # as read aloud: a space, lower case
        page.fill("#join-code", spoken)
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/r/{code}")
        wait_js(page, "window.gradtraceRoom && window.gradtraceRoom.role === 'student'")
    with watched_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True) as phone:
        phone.goto(base_url + "/?lang=zh")
        ready(phone)
        assert phone.get_attribute("#join-code", "placeholder") == "课堂代码"
        assert phone.text_content("#join button") == "加入课堂"
