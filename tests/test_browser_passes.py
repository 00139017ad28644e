"""A program of several passes on the page, in real Chromium (issue 20 part 5, issue 24 item 1).

The 3-pass loop of PyTorch's lesson (grads accumulate: w.grad is 4, 8, 12): the drawing is the
graph of the pass on show and changes when a step crosses into another pass; the sentence says
the pass ("Pass 2 of 3: loss.backward() at line 5."); the grad table marks where each pass
begins and w's column carries on across them; the strips show the pass's topo; the timeline
draws the loss per pass, a click on it opens that pass, and Shift+PageDown / the button jump a
whole pass while PageDown keeps stepping steps; `step=k` and /embed open the right pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bench.chromium import have_chromium
from bench.programs import LOOP, REGRESSION
from tests.browser_kit import wait_js, watched_page

pytestmark = pytest.mark.browser

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

ST = "window.gradtrace.state"
DESKTOP = {"viewport": {"width": 1280, "height": 720}}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True}
SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
# Each pass's loss node (the trace's ids: the drawing's g.node ids too), and its first step.
OUTPUTS = ["n6", "n12", "n18"]
FIRST = [0, 4, 8]


def address(**extra: Any) -> str:
    return "/?" + urlencode({"source": LOOP, **extra})


def ready(page: Any) -> None:
    wait_js(page, "window.gradtrace !== undefined && document.querySelector('#graph svg')")
    wait_js(page, f"!{ST}.running", timeout=20)


def drawn(page: Any, node: str) -> None:
    """Wait until the drawing on show is the one with `node` in it."""
    wait_js(page, f"!!document.querySelector('#graph svg g.node#{node}')", timeout=20)


def sentence(page: Any) -> str:
    return page.text_content("#explain") or ""


def cell(page: Any, step: int, node: str) -> str:
    return page.text_content(f'#grad-table tbody tr[data-step="{step}"] td[data-node="{node}"]')


def test_stepping_across_a_pass_shows_that_pass(browser: Any, base_url: str) -> None:
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + address(step=0))
        ready(page)
        drawn(page, "n6")
        assert not page.query_selector("#graph svg g.node#n12")
        assert sentence(page).startswith("Pass 1 of 3: loss.backward() at line 5.")
        page.evaluate("document.activeElement.blur()")
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        wait_js(page, f"{ST}.step === 3")
        assert page.query_selector("#graph svg g.node#n6")
        page.keyboard.press("ArrowRight")  # the seed of pass 2
        wait_js(page, f"{ST}.step === 4")
        drawn(page, "n12")
        assert not page.query_selector("#graph svg g.node#n6")
        assert page.query_selector("#graph svg g.node#n0")  # the leaf, under its own id
        assert sentence(page).startswith("Pass 2 of 3: loss.backward() at line 5.")
        # The table: a marked row where each pass begins, and w's column carrying on.
        for k, first in enumerate(FIRST):
            row = f'#grad-table tbody tr[data-step="{first}"]'
            assert "pass-start" in (page.get_attribute(row, "class") or "")
            said = f"Pass {k + 1} of 3: loss.backward() at line 5"
            assert page.text_content(row + " .pass-mark") == said
        assert [float(cell(page, s, "n0")) for s in (3, 7, 11)] == [4.0, 8.0, 12.0]
        assert float(cell(page, 4, "n0")) == 4.0  # pass 2 starts from the grad pass 1 left
        # The strips are the pass on show's topo.
        topo = page.eval_on_selector_all("#topo-strip li", "ls => ls.map((l) => l.dataset.node)")
        assert topo == ["n0", "n7", "n8", "n9", "n10", "n11", "n12"]
        seed_chip = '#backward-strip li[data-node="n12"]'
        assert page.get_attribute(seed_chip, "aria-current") == "true"  # pass 2's seed runs
        assert "idle" not in (page.get_attribute(seed_chip, "class") or "")
        # The grads on the drawing follow the step: w's grad cell reads 8 at pass 2's end.
        page.keyboard.press("End")
        wait_js(page, f"{ST}.step === 11")
        drawn(page, "n18")
        assert sentence(page).startswith("Pass 3 of 3")
        page.keyboard.press("Home")
        wait_js(page, f"{ST}.step === 0")
        drawn(page, "n6")  # the kept drawing of pass 1 comes back


def test_the_timeline_opens_a_pass_and_shift_page_down_jumps_one(browser: Any, base_url: str):
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + address(step=0))
        ready(page)
        assert page.is_visible("#pass-timeline")
        each = "cs => cs.map((c) => c.dataset.pass)"
        marks = page.eval_on_selector_all("#pass-curve circle.mark", each)
        assert marks == ["0", "1", "2"]
        assert page.get_attribute("#pass-curve", "aria-valuetext") == "Pass 1 of 3: loss 1"
        page.click('#pass-curve circle.mark[data-pass="2"]')
        wait_js(page, f"{ST}.step === 8")
        drawn(page, "n18")
        assert page.get_attribute("#pass-curve", "aria-valuetext") == "Pass 3 of 3: loss 1"
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("Home")
        wait_js(page, f"{ST}.step === 0")
        page.keyboard.press("Shift+PageDown")
        wait_js(page, f"{ST}.step === 4")
        page.keyboard.press("PageDown")  # the clicker: one step
        wait_js(page, f"{ST}.step === 5")
        page.keyboard.press("Shift+PageUp")
        wait_js(page, f"{ST}.step === 0")
        page.click("#btn-next-pass")
        wait_js(page, f"{ST}.step === 4")
        page.click("#btn-next-pass")
        wait_js(page, f"{ST}.step === 8")
        assert page.is_disabled("#btn-next-pass")
        # The curve focused: ← and → move a pass.
        page.focus("#pass-curve")
        page.keyboard.press("ArrowLeft")
        wait_js(page, f"{ST}.step === 4")
        drawn(page, "n12")
        wait_js(page, "location.search.includes('step=4')")


SUMMARISED = (
    "import torch\n"
    "w = torch.tensor(1.0, requires_grad=True)\n"
    "for i in range(1000):\n"
    "    loss = (w*2 - 1)**2\n"
    "    loss.backward()\n"
    "    with torch.no_grad():\n"
    "        w -= 0.1 * w.grad\n"
    "    w.grad.zero_()\n"
)


def test_summarised_passes_are_drawn_and_marked(browser: Any, base_url: str) -> None:
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + "/?" + urlencode({"source": SUMMARISED, "step": 0}))
        ready(page)
        passes = page.evaluate(f"{ST}.trace.passes.map((p) => p.kept)")
        assert len(passes) == 1000 and not all(passes)
        hollow = page.eval_on_selector_all("#pass-curve circle.mark.summarised", "cs => cs.length")
        assert hollow == passes.count(False)
        assert page.query_selector("#pass-curve path.curve.summarised")
        assert page.is_visible(".pass-summarised-note")
        # A click on a summarised pass opens the nearest kept one, at its first step.
        first_gone = passes.index(False)
        back = first_gone + passes[first_gone:].index(True)  # the kept passes after the gap
        k = back - (back - first_gone) // 5  # nearer the kept passes after than before
        page.click(f'#pass-curve circle.mark[data-pass="{k}"]', force=True)
        wait_js(page, f"{ST}.step > 0", timeout=10)
        on_show = page.evaluate(f"{ST}.trace.steps[{ST}.step].pass")
        assert passes[on_show]
        assert on_show == back
        assert page.evaluate(f"{ST}.trace.passes[{on_show}].first_step") == page.evaluate(
            f"{ST}.step"
        )


def test_the_chinese_page_says_the_pass(browser: Any, base_url: str) -> None:
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + address(step=5, lang="zh"))
        ready(page)
        drawn(page, "n12")
        assert sentence(page).startswith("第 2 遍,共 3 遍:第 5 行的 loss.backward()。")
        assert page.get_attribute("#pass-curve", "aria-valuetext") == "第 2 遍,共 3 遍:损失 1"


def test_an_address_and_the_embed_open_the_pass_of_their_step(browser: Any, base_url: str) -> None:
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + address(step=6))
        ready(page)
        drawn(page, "n12")
        assert page.evaluate(f"{ST}.step") == 6
        page.goto(base_url + "/embed?" + urlencode({"source": LOOP, "step": 9}))
        wait_js(page, "window.gradtrace !== undefined && !!document.querySelector('#graph svg')")
        drawn(page, "n18")
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("Home")
        wait_js(page, f"{ST}.step === 0")
        drawn(page, "n6")


def test_screenshots(browser: Any, base_url: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, opts in (("passes-desktop.png", DESKTOP), ("passes-phone.png", PHONE)):
        with watched_page(browser, **opts) as page:
            page.goto(base_url + address(step=5))
            ready(page)
            drawn(page, "n12")
            page.wait_for_timeout(300)
            page.screenshot(path=str(SHOTS / name))


AXE_AT = [{"step": 5}, {"step": 5, "lang": "zh"}, {"step": 5, "present": 1}]


@pytest.mark.parametrize("extra", AXE_AT)
def test_axe_finds_nothing_serious_on_a_program_of_passes(
    browser: Any, base_url: str, extra: dict[str, Any]
) -> None:
    axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe()
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + address(**extra))
        ready(page)
        drawn(page, "n12")
        found = axe.run(page).response["violations"]
        bad = [(v["id"], [n["target"] for n in v["nodes"]][:5]) for v in found]
        bad = [b for v, b in zip(found, bad, strict=True) if v["impact"] in ("serious", "critical")]
        assert bad == []


def test_a_class_follows_the_instructor_s_pass(browser: Any, base_url: str) -> None:
    """Issue 24 item 5: the instructor's pass and step are followed (the step indexes every
    pass, so the student's page opens the instructor's pass and its drawing)."""
    with watched_page(browser, **DESKTOP) as teacher, watched_page(browser, **PHONE) as student:
        teacher.goto(base_url + address(step=0))
        ready(teacher)
        wait_js(teacher, "window.gradtraceRoom !== undefined")
        teacher.click("#room-start")
        wait_js(teacher, "window.gradtraceRoom.status === 'live'")
        code = teacher.text_content("#room-code") or ""
        student.goto(base_url + "/r/" + code)
        wait_js(student, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
        wait_js(student, f"{ST}.source === {LOOP!r} && {ST}.step === 0", timeout=20)
        teacher.locator("#graph").click(position={"x": 5, "y": 5})  # the page, not a field
        teacher.keyboard.press("Shift+PageDown")
        wait_js(teacher, f"{ST}.step === 4")
        wait_js(student, f"{ST}.step === 4", timeout=20)
        drawn(student, "n12")
        assert sentence(student).startswith("Pass 2 of 3: loss.backward() at line 5.")
        teacher.click('#pass-curve circle.mark[data-pass="2"]')
        wait_js(student, f"{ST}.step === 8", timeout=20)
        drawn(student, "n18")
        assert student.get_attribute("#pass-curve", "aria-valuetext") == "Pass 3 of 3: loss 1"


def test_a_hundred_epochs_show_three_passes_of_rows_and_a_log_curve(
    browser: Any, base_url: str
) -> None:
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + "/?" + urlencode({"source": REGRESSION, "step": 30}))
        ready(page)
        passes = page.evaluate(f"{ST}.trace.passes")
        assert len(passes) == 100
        on_show = page.evaluate(f"{ST}.trace.steps[30].pass")
        drawn(page, passes[on_show]["output"])
        rows = page.eval_on_selector_all(
            "#grad-table tbody tr", "rs => rs.map((r) => Number(r.dataset.step))"
        )
        assert rows[0] == passes[on_show - 1]["first_step"]
        assert rows[-1] == passes[on_show + 1]["last_step"]
        assert "log" in (page.get_attribute("#pass-curve", "class") or "")  # 1.8 down to 1e-6
        # The leaf shows its value in that pass (the updates move it pass by pass), not its last.
        w = page.evaluate(f"{ST}.trace.nodes.find((n) => n.label === 'w').id")
        head = page.text_content(f"#graph svg #{w}-head") or ""
        before = passes[on_show]["leaves_before"]["w"]
        assert float(head.split("=")[1]) == pytest.approx(before, rel=1e-3)
        assert before != pytest.approx(passes[-1]["leaves_before"]["w"], rel=1e-3)
        said = page.get_attribute("#pass-curve", "aria-valuetext") or ""
        assert said.startswith(f"Pass {on_show + 1} of 100: loss ")
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("Shift+PageDown")
        wait_js(page, f"{ST}.step === {passes[on_show + 1]['first_step']}")
        drawn(page, passes[on_show + 1]["output"])


def test_the_forward_pass_walks_the_last_pass(browser: Any, base_url: str) -> None:
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + address(step=1))
        ready(page)
        drawn(page, "n6")
        page.check("#forward-mode")
        wait_js(page, f"{ST}.forwardMode && {ST}.fwd === 0")
        drawn(page, "n18")  # the trace's topo is the last pass's
        topo = page.eval_on_selector_all("#topo-strip li", "ls => ls.map((l) => l.dataset.node)")
        assert topo == ["n0", "n13", "n14", "n15", "n16", "n17", "n18"]
        page.uncheck("#forward-mode")
        wait_js(page, f"!{ST}.forwardMode")
        drawn(page, "n6")


# Passes over different graphs (y = x·w + x, then z = sin(x)·x): the lessons see the pass on show.
TWO_GRAPHS = (
    "import torch\n"
    "x = torch.tensor(2.0, requires_grad=True)\n"
    "w = torch.tensor(3.0, requires_grad=True)\n"
    "y = x * w + x\n"
    "y.backward()\n"
    "z = torch.sin(x) * x\n"
    "z.backward()"
)
LS = "window.gradtraceLessons.state"
CALLOUT = "document.querySelector('.ls-callout').textContent"


def test_a_lesson_follows_the_pass_on_show(browser: Any, base_url: str) -> None:
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + "/?" + urlencode({"source": TWO_GRAPHS, "step": 0}))
        ready(page)
        wait_js(page, "window.gradtraceLessons !== undefined")
        page.click('#lessons button[data-lesson="compare_assign"]')
        wait_js(page, f"{LS}.data.compare_assign && !{LS}.loading && {LS}.pass === 0", timeout=20)
        first = page.evaluate(f"{ST}.trace.passes[1].first_step")
        # Pass 1: y's table, x.grad is w + 1 = 4 with +=.
        cols = page.evaluate(f"{LS}.data.compare_assign.columns")
        assert cols[0] == page.evaluate(f"{ST}.trace.passes[0].output")
        callout = page.text_content(".ls-callout")
        assert "but should be 4" in callout
        assert page.evaluate(f"{LS}.data.compare_assign.steps") == first  # that pass's steps only
        # A step into pass 2: the lesson is asked again and shows z's backward.
        page.evaluate(f"() => window.gradtrace.setPos({first + 1})")
        wait_js(page, f"{LS}.pass === 1 && !{LS}.loading", timeout=20)
        cols = page.evaluate(f"{LS}.data.compare_assign.columns")
        assert cols[0] == page.evaluate(f"{ST}.trace.passes[1].output")
        # z's backward alone: x.grad should be cos(2)·2 + sin(2) = 0.077.
        wait_js(page, f"{CALLOUT}.includes('should be 0.077')")
        # The current row is the pass's own step 1 (the page's step first + 1).
        cur = page.locator('#ls-table-add tr[aria-current="step"]').get_attribute("data-step")
        assert cur == "1"
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#lessons").screenshot(path=str(SHOTS / "passes-lesson.png"))
        # Back into pass 1: pass 1's lesson again.
        page.evaluate("() => window.gradtrace.setPos(1)")
        wait_js(page, f"{LS}.pass === 0 && !{LS}.loading", timeout=20)
        wait_js(page, f"{CALLOUT}.includes('but should be 4')")


# Pass 1 a 40-step loop (drawn as one box when collapsed), pass 2 a single product: no loop.
LOOP_THEN_ONE = (
    "import torch\n"
    "x = torch.tensor(0.5, requires_grad=True)\n"
    "h = x\n"
    "for i in range(40):\n"
    "    h = torch.sin(h) * x\n"
    "h.backward()\n"
    "z = x * 3\n"
    "z.backward()"
)


def drawn_pass(page: Any, k: int) -> None:
    wait_js(page, f"document.querySelector('#graph svg').dataset.pass === '{k}'", timeout=20)


def test_each_pass_s_drawing_brings_its_collapse_state(browser: Any, base_url: str) -> None:
    with watched_page(browser, **DESKTOP) as page:
        page.goto(base_url + "/?" + urlencode({"source": LOOP_THEN_ONE, "step": 0, "collapse": 1}))
        ready(page)
        drawn_pass(page, 0)
        assert page.evaluate(f"{ST}.collapsed && {ST}.collapsed.id") == "loop-1"
        assert page.is_visible("#collapse-row")
        assert page.query_selector("#graph svg g.node.collapsed")
        last = page.evaluate(f"{ST}.trace.steps.length - 1")
        page.evaluate(f"() => window.gradtrace.setPos({last})")
        drawn_pass(page, 1)
        # z = x·3 has no loop: no box, no collapse box, no note.
        wait_js(page, f"{ST}.collapsed === null && !{ST}.collapsible")
        assert not page.is_visible("#collapse-row")
        assert not page.query_selector("#graph svg g.node.collapsed")
        page.evaluate("() => window.gradtrace.setPos(0)")  # the kept drawing of pass 1, boxed
        drawn_pass(page, 0)
        wait_js(page, f"{ST}.collapsible && {ST}.collapsed && {ST}.collapsed.id === 'loop-1'")
        assert page.is_visible("#collapse-row")
        assert page.is_checked("#collapse-loops")
