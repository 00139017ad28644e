"""The training lesson in real Chromium: the gallery's training loops open it, the contours and
the descent path are drawn, the zero_grad comparison's two curves part where the engine (and
torch, tests/test_lessons_training.py) says, and the learning rates' divergence shows.
Screenshots: docs/screenshots/training-*.png."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_kit import wait_js

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"


@pytest.fixture
def page(browser: Any, base_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    errors: list[str] = []
    foreign: list[str] = []
    p = context.new_page()
    p.on("console", lambda m: m.type == "error" and errors.append(m.text))
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.on(
        "request",
        lambda r: (
            None if r.url.startswith((base_url + "/", "data:", "blob:")) else foreign.append(r.url)
        ),
    )
    yield p
    context.close()
    assert not errors, f"console errors: {errors}"
    assert not foreign, f"requests to another origin: {foreign}"


def open_example(page: Any, url: str, example: str) -> dict[str, Any]:
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", example)
    wait_js(
        page,
        "document.querySelector('#lesson-body').dataset.lesson === 'training' && "
        "window.gradtraceLessons.state.data.training !== undefined && "
        "!window.gradtraceLessons.state.loading && document.querySelector('.ls-training')",
        timeout=15,
    )
    return page.evaluate("() => window.gradtraceLessons.state.data.training")


def lesson_step(page: Any, k: int) -> None:
    page.evaluate(
        f"() => {{ const s = document.querySelector('#ls-slider'); s.value = '{k}'; "
        "s.dispatchEvent(new Event('input')); }"
    )
    wait_js(page, f"window.gradtraceLessons.state.sub === {k}")


def show_lesson(page: Any) -> None:
    page.locator("#lessons").scroll_into_view_if_needed()
    page.evaluate("() => document.querySelector('#lessons').scrollIntoView({block: 'start'})")


def test_the_gallery_s_linear_regression_draws_the_contours_and_the_path(page, base_url):
    d = open_example(page, base_url, "linear-regression")
    assert d["passes"] == 40 and d["path"]["dims"] == 2
    fig = page.locator("#tr-path svg")
    assert fig.count() == 1
    contours = page.eval_on_selector_all(
        "#tr-path path.tr-contour", "ps => ps.filter(p => p.getAttribute('d')).length"
    )
    assert contours >= 8
    # a dot per pass and one after the last, the pass on show larger, its update an arrow
    assert page.locator("#tr-path circle.tr-pt").count() == 41
    assert page.locator("#tr-path circle.tr-pt.cur").count() == 1
    assert page.locator("#tr-path line.tr-arrow").count() == 1
    assert "Pass 1 of 40" in (fig.get_attribute("aria-label") or "")
    first = page.get_attribute("#tr-path circle.tr-pt.cur", "cx")
    lesson_step(page, 5)
    assert page.get_attribute("#tr-path circle.tr-pt.cur", "cx") != first
    assert "Pass 6 of 40" in (page.get_attribute("#tr-path svg", "aria-label") or "")
    show_lesson(page)
    page.screenshot(path=str(SHOTS / "training-path.png"))


def test_the_zero_grad_comparison_parts_where_the_engine_says(page, base_url):
    d = open_example(page, base_url, "linear-regression")
    page.click('.ls-training button[data-mode="zero_grad"]')
    wait_js(page, "document.querySelector('#tr-zg-loss svg') !== null")
    z = d["zero_grad"]
    assert z["lines"][0]["text"] == "opt.zero_grad()"
    assert (z["first_grad_pass"], z["first_loss_pass"]) == (1, 2)
    assert d["loss"][:2] == z["without"]["loss"][:2] and d["loss"][2] != z["without"]["loss"][2]
    assert page.locator("#tr-zg-loss path.tr-line").count() == 2
    assert page.locator("#tr-zg-grad-0 path.tr-line").count() == 2
    assert "pass 2" in page.text_content("#ls-tr-first")
    lesson_step(page, 2)
    rows = page.eval_on_selector_all(
        "#ls-tr-table tbody tr", "trs => trs.map(tr => [...tr.cells].map(c => c.textContent))"
    )
    assert [r[0] for r in rows] == ["1", "2", "3"] and rows[0][1] == rows[0][2]
    assert page.locator("#ls-tr-table td.diverged").count() == 3  # pass 2's grad, pass 3's two
    now = page.text_content("#ls-tr-now")
    assert now.startswith("After pass 3: w.grad = ")
    show_lesson(page)
    page.screenshot(path=str(SHOTS / "training-zero-grad.png"))
    # "Show that step": the page's stepper moves to the step where the grads part
    page.click("#ls-tr-show-step")
    wait_js(page, f"window.gradtrace.state.step === {z['first_leaf_step']}")
    page.click('.lang button[data-lang="zh"]')
    wait_js(page, "document.querySelector('#ls-tr-now').textContent.includes('第 3 遍之后')")


def test_the_learning_rates_show_the_large_one_diverging(page, base_url):
    d = open_example(page, base_url, "lr-diverges")
    r = d["rates"]
    assert [x["diverged"] for x in r["runs"]] == [False, True, True]
    assert page.locator("#tr-rates-loss path.tr-line").count() == 3
    assert page.locator("#ls-tr-now li[data-diverged=true]").count() == 2
    assert "lr = 0.06" in page.text_content("#ls-tr-now")
    show_lesson(page)
    page.screenshot(path=str(SHOTS / "training-rates.png"))
    page.click('.ls-training button[data-mode="path"]')
    wait_js(page, "document.querySelector('#tr-path svg') !== null")
    assert page.locator("#tr-path circle.tr-pt").count() == 20  # a dot per pass, on its loss


def test_logistic_regression_on_a_phone(browser, base_url):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        d = open_example(page, base_url, "logistic-regression")
        assert d["path"]["dims"] == 2 and d["rates"]["available"]
        page.click('.ls-training button[data-mode="rates"]')
        wait_js(page, "document.querySelector('#tr-rates-path svg') !== null")
        assert page.locator("#tr-rates-path path.tr-path").count() == 3
        width = page.evaluate(
            "() => document.querySelector('#tr-rates-path svg').getBoundingClientRect().width"
        )
        assert 100 < width <= 390
        page.evaluate("() => document.querySelector('.ls-training').scrollIntoView()")
        page.screenshot(path=str(SHOTS / "training-phone.png"))
    finally:
        context.close()
    assert not errors, errors


def test_the_misconceptions_lesson_sends_a_loop_to_the_training_lesson(page, base_url):
    open_example(page, base_url, "linear-regression")
    page.click('#lessons button[data-lesson="mistakes"]')
    wait_js(
        page,
        "window.gradtraceLessons.state.data.mistakes !== undefined && "
        "!window.gradtraceLessons.state.loading && document.querySelector('.ls-mistakes')",
    )
    page.click('.ls-mistakes button[data-mode="zero_grad"]')
    wait_js(page, "document.querySelector('#ls-mis-loop') !== null")
    assert "opt.zero_grad()" in page.text_content("#ls-mis-loop")
    page.click("#ls-mis-loop button")
    wait_js(
        page,
        "window.gradtraceLessons.state.name === 'training' && "
        "document.querySelector('#tr-zg-loss svg') !== null",
        timeout=15,
    )


def test_the_class_s_pass_question_is_the_run_without_zeroing_and_names_the_wrong_answers(
    page, base_url
):
    d = open_example(page, base_url, "linear-regression")
    q = page.evaluate(
        """async () => {
        const m = await import('/static/js/room/misconceptions.js');
        const a = await import('/static/js/room/ask.js');
        const q = m.passQuestion(window.gradtraceLessons.state.data.training, 2);
        return Object.assign({}, q, { text: a.questionText(q),
            why: q.named.map((n) => m.misconceptionOf(q, n.value)) });
    }"""
    )
    z = d["zero_grad"]["without"]
    assert q["answer"] == z["grads"][2][0] and q["name"] == "w" and q["pass"] == 3
    assert q["text"] == "What is w.grad after pass 3, if the zeroing line were missing?"
    named = {n["name"]: n["value"] for n in q["named"]}
    assert named["nozero"] == d["grads"][2][0]
    assert named["samepath"] == pytest.approx(sum(g[0] for g in d["grads"][:3]), rel=1e-12)
    assert q["why"] == [n["name"] for n in q["named"]]
    none = page.evaluate(
        """async () => (await import('/static/js/room/misconceptions.js')).passQuestion(
            { training: false }, 0)"""
    )
    assert none is None


@pytest.fixture
def axe_page(browser: Any) -> Iterator[Any]:
    """A page whose CSP lets axe-core's script in (as tests/test_accessibility.py's)."""
    from tests.browser_kit import watched_page

    with watched_page(browser, viewport={"width": 1280, "height": 800}, bypass_csp=True) as p:
        yield p


@pytest.mark.parametrize("mode", ["zero_grad", "path", "rates"])
def test_each_part_passes_axe(axe_page, base_url, mode):
    from tests.test_accessibility import serious

    open_example(axe_page, base_url, "linear-regression")
    axe_page.click(f'.ls-training button[data-mode="{mode}"]')
    wait_js(axe_page, f"document.querySelector('.ls-training button[data-mode={mode}]')"
            ".getAttribute('aria-pressed') === 'true'")  # fmt: skip
    assert serious(axe_page, "#lesson-body") == []


def test_the_path_in_presentation_mode(browser, base_url):
    from urllib.parse import quote

    from app.examples import EXAMPLES

    source = next(e for e in EXAMPLES if e["id"] == "linear-regression")["source"]
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(f"{base_url}/?source={quote(source)}&present=1&lesson=training")
        wait_js(page, "window.gradtraceLessons !== undefined && "
                "document.querySelector('.ls-training') !== null", timeout=15)  # fmt: skip
        page.click('.ls-training button[data-mode="path"]')
        wait_js(page, "document.querySelector('#tr-path svg') !== null")
        assert page.locator("#tr-path circle.tr-pt").count() == 41
        page.evaluate("() => document.querySelector('.ls-training').scrollIntoView()")
        page.screenshot(path=str(SHOTS / "training-present.png"))
    finally:
        context.close()


def test_three_parameters_plot_each_and_draw_contours_over_two_chosen(page, base_url):
    from urllib.parse import quote

    from tests.test_lessons_training import NONE

    page.goto(f"{base_url}/?source={quote(NONE)}&lesson=training")
    wait_js(page, "document.querySelector('.ls-training') !== null", timeout=15)
    page.click('.ls-training button[data-mode="path"]')
    wait_js(page, "document.querySelector('#tr-values svg') !== null")
    assert page.locator("#tr-values path.tr-line").count() == 3
    assert page.locator("#tr-grads path.tr-line").count() == 3
    page.select_option("#ls-tr-pair-y", "2")
    page.click("#ls-tr-pair-go")
    wait_js(page, "document.querySelector('#tr-path svg') !== null", timeout=15)
    assert page.locator("#tr-path circle.tr-pt").count() == 7
    show_lesson(page)
    page.screenshot(path=str(SHOTS / "training-three.png"))


def test_the_class_is_asked_about_a_pass_without_zero_grad(browser, base_url):
    from urllib.parse import quote

    from app.examples import EXAMPLES
    from tests.browser_kit import watch_errors

    source = next(e for e in EXAMPLES if e["id"] == "linear-regression")["source"]
    errors: list[str] = []
    contexts = [browser.new_context(viewport={"width": 1280, "height": 720}),
                browser.new_context(viewport={"width": 390, "height": 844})]  # fmt: skip
    try:
        teacher, student = (watch_errors(c.new_page(), errors) for c in contexts)
        teacher.goto(f"{base_url}/?source={quote(source)}&lesson=training")
        wait_js(teacher, "window.gradtraceRoom !== undefined && "
                "document.querySelector('.ls-training') !== null", timeout=15)  # fmt: skip
        teacher.click("#room-start")
        wait_js(teacher, "window.gradtraceRoom.status === 'live'")
        code = teacher.text_content("#room-code") or ""
        student.goto(base_url + "/r/" + code)
        wait_js(student, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
        lesson_step(teacher, 2)
        wait_js(teacher, "!document.querySelector('#room-ask-pass').hidden")
        assert teacher.text_content("#room-ask-pass") == "w.grad after pass 3 without zero_grad?"
        d = teacher.evaluate("() => window.gradtraceLessons.state.data.training")
        teacher.click("#room-ask-pass")
        student.wait_for_selector("#room-question:not([hidden])")
        assert student.text_content("#room-q-text") == (
            "What is w.grad after pass 3, if the zeroing line were missing?"
        )
        student.fill("#room-q-input", repr(d["grads"][2][0]))  # the zeroed run's: nothing changed
        student.click("#room-q-send")
        wait_js(student, "document.querySelector('#room-sent').dataset.status === 'sent'")
        teacher.click("#room-reveal")
        student.wait_for_selector("#room-verdict")
        assert student.get_attribute("#room-verdict", "data-why") == "nozero"
        answer = d["zero_grad"]["without"]["grads"][2][0]
        assert student.evaluate("() => window.gradtraceRoom !== undefined") and f"{answer:.4g}"[
            :5
        ] in (student.text_content("#room-answer") or "")
    finally:
        for c in contexts:
            c.close()
    assert not errors, errors
