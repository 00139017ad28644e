"""The lesson panel in real Chromium: each lesson switched on and stepped through.

Uses the session's one browser and one server (`browser`, `base_url` in conftest.py). Like
test_browser.py, every test checks that the page logged no console error and asked no other
origin for anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tests.browser_kit import wait_js

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def url(base_url: str) -> str:
    return base_url


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    foreign: list[str] = []
    p = context.new_page()
    p.on("console", lambda m: m.type == "error" and errors.append(m.text))
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.on(
        "request",
        lambda r: (
            None if r.url.startswith((url + "/", "data:", "blob:")) else foreign.append(r.url)
        ),
    )
    yield p
    context.close()
    assert not errors, f"console errors: {errors}"
    assert not foreign, f"requests to another origin: {foreign}"


def open_lesson(
    page: Any, url: str, source: str, values: str, lesson: str, extra: str = ""
) -> None:
    page.goto(f"{url}/?source={quote(source)}&values={quote(values)}{extra}")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.click(f'#lessons button[data-lesson="{lesson}"]')
    wait_lesson(page, lesson)


def wait_lesson(page: Any, lesson: str) -> None:
    wait_js(
        page,
        f"document.querySelector('#lesson-body').dataset.lesson === '{lesson}' && "
        f"window.gradtraceLessons.state.data['{lesson}'] !== undefined && "
        "!window.gradtraceLessons.state.loading",
    )


def main_step(page: Any, k: int) -> None:
    page.evaluate(f"() => window.gradtrace.setPos({k})")
    wait_js(page, f"window.gradtrace.state.step === {k}")


def lesson_step(page: Any, k: int) -> None:
    page.evaluate(
        f"() => {{ const s = document.querySelector('#ls-slider'); s.value = '{k}'; "
        "s.dispatchEvent(new Event('input')); }"
    )
    wait_js(page, f"window.gradtraceLessons.state.sub === {k}")


def cells(page: Any, selector: str) -> list[list[str]]:
    return page.evaluate(
        f"""() => [...document.querySelectorAll('{selector} tr')].map(
            tr => [...tr.cells].map(c => c.textContent))"""
    )


# ---- 1. "= instead of +=" -----------------------------------------------------------------


def test_compare_assign_marks_the_overwritten_cell_as_the_steps_go(page, url):
    open_lesson(page, url, "x*y + x", "x=2,y=3", "compare_assign", "&step=0")
    assert "lesson=compare_assign" in page.url
    assert page.locator("#ls-table-add td.diverged").count() == 0  # nothing has parted yet
    main_step(page, 1)
    assert page.locator('#ls-table-add tr[aria-current="step"]').get_attribute("data-step") == "1"
    main_step(page, 2)
    # Step 2 writes x.grad: 1 + 3 = 4 with +=, but = keeps only the 3.
    row_add = page.locator('#ls-table-add tr[aria-current="step"] td[data-node="n0"]')
    row_bad = page.locator('#ls-table-assign tr[aria-current="step"] td[data-node="n0"]')
    assert row_add.text_content().startswith("4")
    assert row_bad.text_content().startswith("✗") or "3" in row_bad.text_content()
    assert "diverged" in row_bad.get_attribute("class")
    assert "lost" in row_bad.get_attribute("class")
    callout = page.text_content(".ls-callout")
    assert "x.grad is 3, but should be 4" in callout
    # The language switch relabels the view.
    page.click('.lang button[data-lang="zh"]')
    wait_js(page, "document.querySelector('.ls-callout').textContent.includes('应为')")


def test_the_gallery_opens_an_example_on_its_lesson(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "xy-plus-x")
    wait_lesson(page, "compare_assign")
    assert (
        page.get_attribute('#lessons button[data-lesson="compare_assign"]', "aria-pressed")
        == "true"
    )


# ---- 2. why topological order ---------------------------------------------------------------


def test_orders_steps_each_schedule_and_states_the_call_limit(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "diamonds")
    wait_lesson(page, "orders")
    assert "12,285" in page.text_content("#ls-limit-note")
    assert page.text_content("#ls-total-dfs") == "36"
    # The naive recursion: call 2 goes from the output's add into sin(h), one diamond down.
    lesson_step(page, 1)
    assert "Call 2" in page.text_content("#ls-naive-now")
    lesson_step(page, 4)
    assert "Calls so far: 5 of 12,285" in page.text_content("#ls-naive-count")
    # Kahn: the first pop is the output, and the counts table is on show.
    page.click('.ls-orders button[data-mode="kahn"]')
    wait_js(page, "document.querySelector('#ls-kahn-counts') !== null")
    lesson_step(page, 1)
    assert page.locator("#ls-kahn-counts td.changed").count() >= 1
    page.click('.ls-orders button[data-mode="dfs"]')
    wait_js(page, "document.querySelector('#ls-step-label').textContent.startsWith('1 of')")
    page.click("#ls-next")
    wait_js(page, "window.gradtraceLessons.state.sub === 1")


# ---- 4. gradient check ----------------------------------------------------------------------


def test_gradcheck_steps_element_by_element_and_catches_assign(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "kink")
    wait_lesson(page, "gradcheck")
    assert "x[0]" in page.text_content("#ls-gc-now")
    assert page.locator("#ls-gc-table tbody tr").count() == 1
    lesson_step(page, 1)
    assert page.locator("#ls-gc-table tbody tr").count() == 2
    assert page.text_content('#ls-gc-table tr[aria-current="true"] .ls-verdict') == "kink"
    assert "0 fail" in page.text_content("#ls-gc-summary")
    # The = bug: the check now fails x.
    open_lesson(page, url, "x*y + x", "x=2,y=3", "gradcheck", "&accumulate=assign")
    assert "1 fail" in page.text_content("#ls-gc-summary")
    assert page.text_content('#ls-gc-table tr[aria-current="true"] .ls-verdict') == "fail"


# ---- 6. higher-order gradients ----------------------------------------------------------------


def test_higher_order_steps_the_second_pass_to_6x(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "second-derivative")
    wait_lesson(page, "higher")
    assert page.locator("#graph g.node.ls-built").count() >= 2  # what grad() built is marked
    main_step(page, 1)
    assert "built by grad()" in page.text_content("#ls-ho-now")
    n = page.evaluate("() => window.gradtrace.state.trace.steps.length - 1")
    main_step(page, n)
    assert page.text_content("#ls-ho-checks .ls-second") == "18"
    assert page.text_content("#graph #n0-grad") == "grad 18"  # 6x at x = 3
    # Switching the lesson off takes the marks away.
    page.click('#lessons button[data-lesson="higher"]')
    wait_js(page, "document.querySelectorAll('#graph g.node.ls-built').length === 0")


# ---- 3. forward mode ------------------------------------------------------------------------


def test_forward_mode_fills_the_tangent_table_pass_by_pass(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "max")
    wait_lesson(page, "forward")
    assert "Pass 1 of 3" in page.text_content("#ls-fw-now")
    # Pass 1 seeds x; its third node is x*y with tangent ẋ·y + x·ẏ = 3.
    lesson_step(page, 2)
    # issue 16: a tangent is written as a student reads it (d(…), ẋ), not `(x*y)˙`
    assert page.text_content("#ls-fw-now") == "d((x*y)\u2081) = x\u0307·y + x·y\u0307 = 3"
    n = page.evaluate(
        "() => window.gradtraceLessons.views.forward.count("
        "window.gradtraceLessons.state.data.forward)"
    )
    lesson_step(page, n - 1)
    grads = cells(page, "#ls-fw-grads tbody")
    assert grads == [["x", "36", "36"], ["y", "24", "24"], ["z", "0", "0"]]
    assert "same gradient" in page.text_content("#ls-fw-same")
    assert cells(page, "#ls-fw-cost tbody")[0] == ["passes", "3", "1"]


# ---- 5. tensors, shape by shape ----------------------------------------------------------------


def test_shapes_show_the_reduction_as_its_own_sub_step(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "broadcast-batch")
    wait_lesson(page, "shapes")
    main_step(page, 0)
    assert "Seed: L.grad starts as 1." in page.text_content(
        "#ls-sh-now"
    )  # issue 16: not "ones of shape scalar"
    main_step(page, 2)
    reduce = page.locator(".ls-sub li.reduce")
    assert reduce.count() == 1
    assert reduce.text_content().startswith("reduce: (2,3,4) summed over axes 0 and 2 → (3,1)")
    main_step(page, 3)
    assert page.locator(".ls-sub li.matmul").count() == 2  # dA = ū·Bᵀ and dB = Aᵀ·ū
    assert "ū·Bᵀ" in page.text_content(".ls-sub")


# ---- 8. what backward keeps alive ----------------------------------------------------------------


def test_memory_frees_values_as_the_steps_go(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "saved")
    wait_lesson(page, "memory")
    main_step(page, 0)
    assert "Peak: 7 values" in page.text_content("#ls-mem-summary")
    assert "const()/detach()" in page.text_content("#ls-mem-summary")
    assert page.locator("#ls-mem-table tbody tr.later").count() == 0
    n = page.evaluate("() => window.gradtrace.state.trace.steps.length - 1")
    main_step(page, n)
    assert "freed after it" in page.text_content("#ls-mem-now")
    assert page.locator("#ls-mem-table tbody tr.later").count() >= 5
    assert page.get_attribute("#ls-mem-bars tr[aria-current=step]", "aria-current") == "step"


# ---- 7. PyTorch and JAX ------------------------------------------------------------------------


def test_code_panels_name_each_steps_grad_fn(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "neuron")
    wait_lesson(page, "code")
    assert "o = torch.tanh(n)" in page.text_content("#ls-code-torch")
    assert "# o.grad_fn is TanhBackward0" in page.text_content("#ls-code-torch")
    assert "w1.grad = tensor(1.0000)" in page.text_content("#ls-code-torch-out")
    assert "jax.grad(f)(params)" in page.text_content("#ls-code-jax")
    main_step(page, 1)
    assert "TanhBackward0" in page.text_content("#ls-code-now")
    main_step(page, 2)
    assert "AddBackward0" in page.text_content("#ls-code-now")


def test_the_code_lesson_copies_each_program(browser, url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
    try:
        page = context.new_page()
        page.goto(url + "/?source=" + quote("a = 2\nb = a*a\nL = b + a") + "&lesson=code")
        wait_lesson(page, "code")
        for which in ("torch", "jax"):
            page.click(f"#ls-copy-{which}")
            wait_js(page, f"document.querySelector('#ls-copy-{which}').textContent === 'Copied'")
            copied = page.evaluate("navigator.clipboard.readText()")
            assert copied == page.text_content(f"#ls-code-{which}")
        assert page.get_attribute("#ls-copy-torch", "aria-label") == "Copy the PyTorch program"
    finally:
        context.close()


# ---- 9. misconceptions ---------------------------------------------------------------------------


def test_mistakes_show_each_symptom(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "max-missing")
    wait_lesson(page, "mistakes")
    rows = cells(page, "#ls-mis-table tbody")
    assert ["x", "36", "18"] in rows and ["y", "24", "12"] in rows  # ERRATA 1
    assert page.locator("#ls-mis-table td.diverged").count() == 2
    # backward twice: step to the second call; PyTorch's error is quoted.
    page.click('.ls-mistakes button[data-mode="twice"]')
    lesson_step(page, 1)
    assert "retain_graph" in page.text_content("#ls-mis-torch")
    assert ["x", "36", "72"] in cells(page, "#ls-mis-table tbody")
    # forgetting zero_grad: three steps, the accumulated grads marked.
    page.click('.ls-mistakes button[data-mode="zero_grad"]')
    lesson_step(page, 2)
    assert page.locator("#ls-mis-table tbody tr").count() == 3
    assert page.locator("#ls-mis-table td.diverged").count() >= 1
    # Choosing another node to drop re-runs the lesson.
    page.click('.ls-mistakes button[data-mode="missing"]')
    page.select_option("#ls-mis-drop", "n2")
    wait_js(
        page,
        "document.querySelector('#ls-mis-drop') && "
        "document.querySelector('#ls-mis-drop').value === 'n2' && "
        "!window.gradtraceLessons.state.loading",
    )
    assert ["x", "36", "0"] in cells(page, "#ls-mis-table tbody")


def test_a_vector_output_steps_through_one_hot_rows(page, url):
    page.goto(url + "/?source=x&values=x=1")
    wait_js(page, "window.gradtrace !== undefined && window.gradtraceLessons !== undefined")
    page.select_option("#examples", "jacobian-rows")
    wait_lesson(page, "mistakes")
    assert "one-hot at [0]" in page.text_content("#ls-mis-now")
    lesson_step(page, 1)
    assert "one-hot at [1]" in page.text_content("#ls-mis-now")
    lesson_step(page, 2)
    assert "v = ones" in page.text_content("#ls-mis-now")


# ---- 10. predict, then reveal --------------------------------------------------------------------


def test_practice_checks_predictions_and_reveals_the_step(page, url):
    open_lesson(page, url, "x*y + x", "x=2,y=3", "practice", "&step=0")
    # The rows still to come are hidden while practising.
    assert (
        page.evaluate(
            "() => getComputedStyle(document.querySelector("
            "'#grad-table tbody tr.later td')).visibility"
        )
        == "hidden"
    )
    assert "Step 1 runs out._backward()" in page.text_content("#ls-pr-now")
    page.fill("#ls-pr-n2", "1")
    page.fill("#ls-pr-n0", "1")
    page.click("#ls-pr-check")
    assert page.locator(".ls-pr-row .right").count() == 2
    page.click("#ls-pr-reveal")
    wait_js(page, "window.gradtrace.state.step === 1")
    # Step 2 adds 3 to x.grad: a guess of 3 forgets the += and is wrong.
    page.fill("#ls-pr-n0", "3")
    page.fill("#ls-pr-n1", "2")
    page.click("#ls-pr-check")
    wrong = page.text_content('.ls-pr-row[data-node="n0"]')
    assert "✗ it is 4" in wrong and "x.grad = 1 + ū·y = 1 + 1·3 = 3 → 4" in wrong
    assert "Score: 3 of 4 right." in page.text_content("#ls-pr-score")
    page.click("#ls-pr-reveal")
    wait_js(page, "window.gradtrace.state.step === 2")
    assert "last step" in page.text_content("#ls-pr-now")
