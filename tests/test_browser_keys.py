"""The keys, in real Chromium, as a keyboard and a clicker (PageDown/PageUp) send them: Space and
Enter press a focused control; ↑/↓ step like ←/→ outside lists and menus; Esc leaves the
editor, then presentation; a lesson with its own stepper takes the clicker's keys while it has
the focus or is the one on show; stepping pauses Play, and Play at the end starts over; and a
lesson's stepper has the page's buttons, named in words, so ▶ means Play alone."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from bench.chromium import have_chromium
from tests.browser_kit import wait_js, watched_page

pytestmark = pytest.mark.browser

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

NEURON = (
    "x1 = 2\nx2 = 0\nw1 = -3\nw2 = 1\nb = 6.8813735870195432\nn = x1*w1 + x2*w2 + b\no = tanh(n)"
)
ST = "window.gradtrace.state"
LAPTOP = {"viewport": {"width": 1366, "height": 900}}


def open_at(page: Any, base_url: str, step: int, extra: str = "") -> None:
    page.goto(base_url + "/?source=" + quote(NEURON) + f"&step={step}" + extra)
    wait_js(page, "window.gradtrace !== undefined && document.querySelector('#graph svg')")


def step_is(page: Any, k: int) -> None:
    wait_js(page, f"{ST}.step === {k}")


def test_space_and_enter_press_the_focused_control(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        open_at(page, base_url, 1)
        page.focus("#btn-next")
        page.keyboard.press(" ")  # pressed once: one step, not a button press and a step
        step_is(page, 2)
        page.keyboard.press("Enter")
        step_is(page, 3)
        page.focus("#share summary")
        page.keyboard.press(" ")
        wait_js(page, "document.querySelector('#share').open")
        assert page.evaluate(f"{ST}.step") == 3
        page.keyboard.press("Enter")  # pressed again: closed
        wait_js(page, "!document.querySelector('#share').open")
        page.focus("#forward-mode")
        page.keyboard.press(" ")
        wait_js(page, f"{ST}.forwardMode")
        page.keyboard.press(" ")
        wait_js(page, f"!{ST}.forwardMode")
        page.focus("#btn-play")
        page.keyboard.press(" ")  # Space on Play plays
        wait_js(page, f"{ST}.playing")
        page.keyboard.press(" ")
        wait_js(page, f"!{ST}.playing")


def test_up_and_down_step_outside_lists_and_menus(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        open_at(page, base_url, 2)
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("ArrowDown")
        step_is(page, 3)
        page.keyboard.press("ArrowUp")
        step_is(page, 2)
        page.focus("#step-slider")  # a slider is no list: one step, not two
        page.keyboard.press("ArrowDown")
        step_is(page, 3)
        assert page.input_value("#step-slider") == "3"
        page.focus("#speed")  # a menu: ↓ picks in it, and the step stays
        page.keyboard.press("ArrowDown")
        wait_js(page, "document.querySelector('#speed').value === '400'")
        assert page.evaluate(f"{ST}.step") == 3
        page.keyboard.press("ArrowRight")  # ←/→ still step from a menu, which keeps its value
        step_is(page, 4)
        assert page.input_value("#speed") == "400"


def test_esc_leaves_the_editor_then_presentation(browser, base_url):
    with watched_page(browser, viewport={"width": 1280, "height": 720}) as page:
        open_at(page, base_url, 2, "&present=1")
        page.click("#editor-btn")
        page.click("#source")
        page.keyboard.press("Escape")  # out of the editor: the keys step again
        wait_js(page, "document.activeElement !== document.querySelector('#source')")
        assert page.evaluate(f"{ST}.present")
        page.keyboard.press("PageDown")
        step_is(page, 3)
        page.keyboard.press("Escape")  # out of presentation
        wait_js(page, f"!{ST}.present && !document.body.classList.contains('present')")
        wait_js(page, "!location.search.includes('present=1')")
        assert page.text_content("#present-btn") == "Present"
        assert page.evaluate("document.documentElement.classList.contains('present')") is False


LESSONS_WITH_STEPPERS = ["orders", "gradcheck", "forward", "mistakes"]


@pytest.mark.parametrize("lesson", LESSONS_WITH_STEPPERS)
def test_a_lesson_stepper_takes_the_clickers_keys_when_focused_or_on_show(
    browser, base_url, lesson
):
    with watched_page(browser, **LAPTOP) as page:
        open_at(page, base_url, 1, f"&lesson={lesson}")
        wait_js(page, "document.querySelector('#ls-next') !== null", timeout=20)
        sub = "window.gradtraceLessons.state.sub"
        # Focused: the clicker's PageDown steps the lesson, and the page stays at its step.
        page.focus("#ls-next")
        page.keyboard.press("PageDown")
        wait_js(page, f"{sub} === 1")
        assert page.evaluate(f"{ST}.step") == 1
        page.keyboard.press("PageUp")
        wait_js(page, f"{sub} === 0")
        page.keyboard.press("End")
        last = page.evaluate("window.gradtraceLessons.state.sub")
        assert last >= 1
        page.keyboard.press("PageDown")  # at its end: the lesson stays, the page too
        page.keyboard.press("Home")
        wait_js(page, f"{sub} === 0")
        assert page.evaluate(f"{ST}.step") == 1
        # On show: the lesson scrolled into view, the drawing out of it, the focus nowhere.
        page.evaluate("document.activeElement.blur()")
        page.evaluate(
            "document.querySelector('#lesson-body .ls-stepbar').scrollIntoView({block: 'start'})"
        )
        assert page.evaluate(
            "document.querySelector('#graph').getBoundingClientRect().bottom < 100"
        )
        page.keyboard.press("PageDown")
        wait_js(page, f"{sub} === 1")
        assert page.evaluate(f"{ST}.step") == 1
        # The drawing back on show: the page's stepper has the keys again.
        page.evaluate("window.scrollTo(0, 0)")
        page.keyboard.press("PageDown")
        step_is(page, 2)
        assert page.evaluate(sub) == 1


def test_stepping_pauses_play_and_play_at_the_end_starts_over(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        open_at(page, base_url, 0)
        page.select_option("#speed", "200")
        page.click("#btn-play")
        wait_js(page, f"{ST}.playing && {ST}.step >= 1")
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("ArrowLeft")  # a step by hand pauses Play
        wait_js(page, f"!{ST}.playing")
        held = page.evaluate(f"{ST}.step")
        page.wait_for_timeout(500)
        assert page.evaluate(f"{ST}.step") == held
        page.click("#btn-play")
        wait_js(page, f"{ST}.playing")
        page.click("#btn-next")  # so does a button
        wait_js(page, f"!{ST}.playing")
        page.click("#btn-last")
        step_is(page, 5)
        page.click("#btn-play")  # at the end: from the start again
        wait_js(page, f"{ST}.playing && {ST}.step < 5")
        wait_js(page, f"!{ST}.playing && {ST}.step === 5", timeout=10)  # ... to the end


def test_a_lesson_stepper_has_the_pages_buttons_named_in_words(browser, base_url):
    with watched_page(browser, **LAPTOP) as page:
        open_at(page, base_url, 1, "&lesson=forward")
        wait_js(page, "document.querySelector('#ls-next') !== null", timeout=20)
        for name in ("first", "back", "next", "last"):
            same = page.evaluate(
                f"document.querySelector('#ls-{name} svg').outerHTML"
                f" === document.querySelector('#btn-{name} svg').outerHTML"
            )
            assert same, name  # the page's icon: ‹ › mean the same in both
            assert (page.text_content(f"#ls-{name}") or "").strip() == ""  # no ▶ to read as Play
        assert page.get_attribute("#ls-next", "aria-label") == "Next lesson step"
        assert "▶" not in (page.text_content("#lesson-body .ls-stepbar") or "")
        page.click('.lang button[data-lang="zh"]')
        wait_js(
            page, "document.querySelector('#ls-next').getAttribute('aria-label') === '课程下一步'"
        )
        label = page.get_attribute(".strips", "aria-label")
        assert label == "拓扑顺序 / backward 调用顺序"
