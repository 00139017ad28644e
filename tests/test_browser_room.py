"""The class room in real Chromium against the real server (app/rooms/): an instructor's page
and a student's page in two browser contexts. The student follows the instructor's steps (by
the socket's seq), steps away and follows again; a question is asked, answered, tallied and
revealed, with a wrong answer named by its misconception. The questions and misconceptions
(static/js/room/misconceptions.js) are checked against the engine's own traces. Makes
docs/screenshots/room-instructor.png (projected, 1280×720) and room-phone.png (390×844).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from bench import load
from bench.chromium import have_chromium
from engine import run
from tests.browser_kit import wait_js, watch_errors
from tests.redis_proc import have_redis
from tests.room_client import http
from tests.room_deploy import Redis, Replica

pytestmark = pytest.mark.browser

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

SHOTS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
# x fans out: step 1 (b = a + x) gives x.grad 1, step 2 (a = x*y) adds 3: 4 with +=, 3 with =.
FAN = "a = x*y\nb = a + x"
# The same with an upstream grad of 3 at every step: forgetting × upstream gives 3 + 3 = 6.
SCALED = "a = x*y\nb = a + x\nc = 3*b"
VALUES = {"x": 2.0, "y": 3.0}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


def page_path(source: str, step: int) -> str:
    return "/?source=" + quote(source) + "&values=x=2,y=3&step=" + str(step)


class Pages:
    """Contexts made for a test, closed after it; the test fails on any console error."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.contexts: list[Any] = []
        self.errors: list[str] = []

    def new(self, **options: Any) -> Any:
        context = self.browser.new_context(**options)
        self.contexts.append(context)
        return watch_errors(context.new_page(), self.errors)


@pytest.fixture
def pages(browser: Any) -> Iterator[Pages]:
    made = Pages(browser)
    yield made
    for context in made.contexts:
        context.close()
    assert not made.errors, f"console errors: {made.errors}"


def js_question(page: Any, fn: str, source: str, k: int) -> Any:
    """misconceptions.js's `fn` on the engine's trace of `source` after step k."""
    trace = run(source, values=VALUES).to_dict()
    return page.evaluate(
        """async ([fn, trace, k]) => {
        const m = await import('/static/js/room/misconceptions.js');
        return m[fn](trace, k);
    }""",
        [fn, trace, k],
    )


def label_of(trace: dict[str, Any], name: str) -> str:
    return next(n["id"] for n in trace["nodes"] if n["label"] == name)


def test_the_questions_and_their_misconceptions_match_the_engine(pages: Pages, base_url: str):
    page = pages.new()
    page.goto(base_url + page_path(FAN, 0))
    wait_js(page, "window.gradtrace !== undefined")
    for source in (FAN, SCALED):
        add = run(source, values=VALUES).to_dict()
        assign = run(source, values=VALUES, accumulate="assign").to_dict()
        x = label_of(add, "x")
        # The step before the second one that sends x a grad: the next step adds to x.grad.
        k = [i for i, st in enumerate(add["steps"]) if x in st["grads"]][1] - 1
        q = js_question(page, "gradQuestion", source, k)

        def after(trace: dict[str, Any], k: int = k, x: str = x) -> float:
            return float(trace["steps"][k + 1]["grads"][x])

        assert (q["name"], q["kind"]) == ("x", "value")
        assert q["answer"] == pytest.approx(after(add))  # += : the sum of both contributions
        named = {m["name"]: m["value"] for m in q["named"]}
        assert named["assign"] == pytest.approx(after(assign))  # = : what the engine's assign gives
        assert named["assign"] != pytest.approx(q["answer"])
        if source == SCALED:
            assert named["chain"] == pytest.approx(3 + 3)  # x.grad before (3) + the local 3, no × 3
        else:
            assert "chain" not in named  # the upstream grad is 1: nothing to forget
    # "Which node runs next?" at the seed: b runs; a is offered, and is not ready (b uses it).
    q = js_question(page, "nextQuestion", FAN, 0)
    assert q["answer"] == "b" and sorted(q["choices"]) == ["a", "b"]
    assert q["named"] == [{"value": "a", "name": "fanout"}]
    assert js_question(page, "nextQuestion", FAN, 2) is None  # no step after the last
    verdicts = page.evaluate(
        """async () => {
        const m = await import('/static/js/room/misconceptions.js');
        const q = { kind: 'value', answer: 0.70710678, named: [{ value: 3, name: 'assign' }] };
        return [m.isRight(q, 0.7071), m.isRight(q, 0.71), m.misconceptionOf(q, 3.0004),
                m.misconceptionOf(q, 5), m.isRight(q, null)];
    }"""
    )
    assert verdicts == [True, False, "assign", None, False]


ST = "window.gradtrace.state"
SENT = "(document.querySelector('#room-sent') || {dataset: {}}).dataset.status"
MEMBER = "JSON.parse(sessionStorage.getItem('gradtrace.member.' + window.gradtraceRoom.code)).id"


def wait_text(page: Any, selector: str, text: str) -> None:
    wait_js(page, f"(document.querySelector({selector!r}) || {{}}).textContent === {text!r}")


def step_label(page: Any) -> str:
    return str(page.text_content("#step-label"))


def test_a_class_follows_the_instructor_and_answers_a_question(pages: Pages, base_url: str):
    # One long story, as a class lives it: each part starts where the one before left the two
    # pages (a room, a joined student, a step, a question), which are slow to make again.
    teacher = pages.new(viewport={"width": 1280, "height": 720})
    teacher.goto(base_url + page_path(FAN, 0))
    wait_js(teacher, "window.gradtraceRoom !== undefined")
    teacher.click("#room-start")
    wait_js(teacher, "window.gradtraceRoom.status === 'live'")
    code = teacher.text_content("#room-code") or ""
    assert 6 <= len(code) <= 8 and teacher.text_content("#room-code-small") == code
    assert teacher.get_attribute("#room-link", "href") == base_url + "/r/" + code
    wait_js(teacher, "document.querySelector('#room-qr').naturalWidth > 0")  # the server's QR

    student = pages.new(**PHONE)
    student.goto(base_url + "/r/" + code)
    wait_js(student, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
    wait_js(student, f"{ST}.source === {FAN!r} && {ST}.step === 0")
    assert student.evaluate("window.gradtraceRoom.role") == "student"
    wait_js(teacher, "document.querySelector('#room-count').textContent.startsWith('1 ')")

    SHOTS.mkdir(parents=True, exist_ok=True)  # the room as projected: code, link, QR, count
    teacher.screenshot(path=str(SHOTS / "room-instructor.png"))

    # The instructor steps: the student's page follows, one seq per step.
    seq = student.evaluate("window.gradtraceRoom.seq")
    teacher.locator("#graph").click(position={"x": 5, "y": 5})  # focus the page, not a field
    teacher.keyboard.press("ArrowRight")
    wait_js(student, f"{ST}.step === 1")
    assert student.evaluate("window.gradtraceRoom.seq") == seq + 1
    assert step_label(student) == step_label(teacher) == "Step 1 of 2"

    # The student steps back on their own: following pauses; "Follow again" returns.
    assert student.is_hidden("#room-follow-again")
    student.click("#btn-back")
    wait_js(student, "window.gradtraceRoom.following === false")
    assert student.is_visible("#room-follow-again")
    assert student.evaluate(f"{ST}.step") == 0
    teacher.click("#btn-next")  # the instructor moves on meanwhile: the paused page stays
    teacher.click("#btn-back")
    student.wait_for_timeout(200)
    assert student.evaluate(f"{ST}.step") == 0
    student.click("#room-follow-again")
    wait_js(student, f"{ST}.step === 1 && window.gradtraceRoom.following")
    assert student.is_hidden("#room-follow-again")

    # Predict, then reveal: x.grad after the next step is 4 (1 + 3); the `=` bug gives 3.
    assert teacher.text_content("#room-ask-grad") == "x.grad after the next step?"
    teacher.click("#room-ask-grad")
    student.wait_for_selector("#room-question:not([hidden])")
    assert student.text_content("#room-q-text") == "What is x.grad after the next step?"
    assert student.get_attribute("#room-question", "role") == "dialog"
    student.fill("#room-q-input", "5")
    student.click("#room-q-send")
    wait_text(teacher, "#room-total", "1 answer")
    student.fill("#room-q-input", "3")  # changed before the reveal: the later answer counts
    student.click("#room-q-send")
    wait_js(student, "document.querySelector('#room-sent').dataset.status === 'sent'")
    assert student.text_content("#room-sent") == "Sent: 3. You can change it until the reveal."
    # the projector shows how many answered, not what, until the instructor shows it
    assert teacher.is_visible("#room-live-hidden") and teacher.locator(".room-bar-row").count() == 0
    teacher.click("#room-show-live")
    wait_text(teacher, '.room-bar-row[data-value="3"] .room-bar-n', "1 (100%)")
    assert teacher.get_attribute("#room-show-live", "aria-pressed") == "true"
    assert teacher.text_content("#room-total") == "1 answer"
    teacher.click("#room-reveal")
    student.wait_for_selector("#room-answer")
    assert student.text_content("#room-answer") == "The answer: 4"
    verdict = student.locator("#room-verdict")
    assert verdict.get_attribute("data-why") == "assign"
    assert "You answered 3: not right." in (verdict.text_content() or "")
    assert "= instead of +=" in (verdict.text_content() or "")
    wait_js(teacher, "document.querySelector('.room-bar-row.named .room-bar-why') !== null")
    assert "overwritten" in (teacher.text_content(".room-bar-row.named .room-bar-why") or "")

    student.screenshot(path=str(SHOTS / "room-phone.png"))

    # Which node runs next, at the seed: the student picks a, which waits for b (a fan-out).
    teacher.click("#room-q-done")
    teacher.keyboard.press("Home")
    wait_js(student, f"{ST}.step === 0")
    teacher.click("#room-ask-next")
    student.wait_for_selector("#room-question .room-choice")
    student.click("#room-question .room-choice:text-is('a')")
    wait_text(teacher, "#room-total", "1 answer")
    teacher.click("#room-reveal")
    student.wait_for_selector("#room-verdict")
    assert student.get_attribute("#room-verdict", "data-why") == "fanout"
    assert student.text_content("#room-answer") == "The answer: b"

    # The lesson the instructor opens opens on the student's page.
    teacher.click("#lessons button[data-lesson] >> nth=0")
    lesson = teacher.evaluate("window.gradtraceLessons.state.name")
    assert lesson
    wait_js(student, f"window.gradtraceLessons.state.name === {lesson!r}")
    # A change of option is followed too (the program runs again on the student's page).
    teacher.select_option("#accumulate", "assign")
    wait_js(student, f"{ST}.accumulate === 'assign' && {ST}.trace.options.accumulate === 'assign'")
    teacher.fill("#source", "x*y*y + x")  # typing: sent once the burst is over
    wait_js(student, f"{ST}.source === 'x*y*y + x' && !{ST}.running && {ST}.trace.value === 20")

    # The instructor's tab reloads: it drives the same room again; then ends the class.
    teacher.reload()
    wait_js(teacher, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
    assert teacher.evaluate("window.gradtraceRoom.role") == "instructor"
    assert teacher.evaluate("window.gradtraceRoom.code") == code
    teacher.keyboard.press("End")
    wait_js(student, f"{ST}.step === {ST}.trace.steps.length - 1")
    teacher.click("#room-end")
    wait_js(student, "window.gradtraceRoom.status === 'ended'")
    assert student.text_content("#room-status") == "Class ended"
    assert teacher.is_visible("#room-start") and teacher.is_hidden("#room-card")


def test_the_key_never_stays_in_the_address_bar_and_the_card_copies_an_instructor_link(
    pages: Pages, base_url: str
):
    teacher = pages.new(viewport={"width": 1280, "height": 720})
    teacher.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    requests: list[str] = []
    teacher.on("request", lambda r: requests.append(r.url))
    teacher.goto(base_url + page_path(FAN, 1))
    wait_js(teacher, "window.gradtraceRoom !== undefined")
    teacher.click("#room-start")
    wait_js(teacher, "window.gradtraceRoom.status === 'live'")
    teacher.keyboard.press("ArrowRight")  # the page writes its address again
    teacher.wait_for_timeout(100)
    url = urlsplit(teacher.url)
    code = teacher.evaluate("window.gradtraceRoom.code")
    assert parse_qs(url.query)["room"] == [code] and parse_qs(url.query)["step"] == ["2"]
    assert url.fragment == "" and "key" not in teacher.url  # never on the projector
    key = teacher.evaluate("JSON.parse(sessionStorage.getItem('gradtrace.room')).key")
    assert len(key) >= 22 and not any(key in r for r in requests)  # nor sent in an address
    teacher.reload()  # the tab keeps it: a reload drives the class again
    wait_js(teacher, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
    assert teacher.evaluate("window.gradtraceRoom.role") == "instructor"
    assert "key" not in teacher.url
    # "Copy instructor link": the key in the link's fragment, for a second device
    teacher.click("#room-copy-key")
    wait_js(teacher, "!document.querySelector('#room-copy-note').hidden")
    note = teacher.text_content("#room-copy-note") or ""
    assert "Anyone with this link drives the class" in note
    link = teacher.evaluate("navigator.clipboard.readText()")
    assert urlsplit(link).fragment == "key=" + key and f"room={code}" in link
    other = pages.new(viewport={"width": 1280, "height": 720})
    other.goto(link)
    wait_js(other, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
    assert other.evaluate("window.gradtraceRoom.role") == "instructor"
    assert "key" not in other.url and urlsplit(other.url).fragment == ""  # read, then taken out
    other.click("#room-end")


def later_rows_shown(page: Any) -> list[str]:
    """The grad table's rows after the current step that can be seen, and its footer's."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll(
                '#grad-table tbody tr.later, #grad-table tfoot tr')]
              .filter((tr) => tr.getClientRects().length > 0)
              .map((tr) => tr.dataset.step || 'foot')"""
        )
    )


def test_with_a_question_open_no_screen_shows_a_later_row_or_the_answers(
    pages: Pages, base_url: str
):
    teacher = pages.new(viewport={"width": 1280, "height": 720})
    teacher.goto(base_url + page_path(SCALED, 2) + "&present=1")  # x.grad: 3, then 12
    wait_js(teacher, "window.gradtraceRoom !== undefined")
    teacher.click("#room-start")
    wait_js(teacher, "window.gradtraceRoom.status === 'live'")
    student = pages.new(**PHONE)
    frames: list[str] = []
    student.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
    student.goto(base_url + "/r/" + str(teacher.evaluate("window.gradtraceRoom.code")))
    wait_js(student, f"window.gradtraceRoom.status === 'live' && {ST}.step === 2")
    assert later_rows_shown(teacher) and later_rows_shown(student)  # no question: all rows
    teacher.click("#room-ask-grad")
    student.wait_for_selector("#room-q-input")
    wait_js(teacher, "document.body.classList.contains('room-asking')")
    wait_js(student, "document.body.classList.contains('room-asking')")
    assert later_rows_shown(teacher) == [] and later_rows_shown(student) == []
    student.fill("#room-q-input", "6")  # 3 + 3: the local derivative without × upstream 3
    student.click("#room-q-send")
    wait_text(teacher, "#room-total", "1 answer")
    # a student cannot step ahead: a key, the button, the End key, all taken back
    student.locator("#graph").click(position={"x": 5, "y": 5})
    for press in ("ArrowRight", "End"):
        student.keyboard.press(press)
        student.wait_for_timeout(150)
        assert student.evaluate(f"{ST}.step") == 2, press
    student.click("#btn-next")
    student.wait_for_timeout(150)
    assert student.evaluate(f"{ST}.step") == 2 and later_rows_shown(student) == []
    assert student.evaluate("window.gradtraceRoom.following")  # taken back, not paused
    assert teacher.locator(".room-bar-row").count() == 0 and teacher.is_visible("#room-live-hidden")
    teacher.screenshot(path="/tmp/room-asking-projector.png")
    student.screenshot(path="/tmp/room-asking-phone.png")
    student.locator("#grad-table").scroll_into_view_if_needed()
    student.locator("#grad-table").screenshot(path="/tmp/room-asking-phone-table.png")
    before_reveal = list(frames)
    assert before_reveal and not any("named" in f or "hidden" in f for f in before_reveal)
    assert not any('"answer":' in f for f in before_reveal)
    teacher.click("#room-reveal")
    student.wait_for_selector("#room-verdict")
    assert student.get_attribute("#room-verdict", "data-why") == "chain"  # named at the reveal
    wait_js(student, "!document.body.classList.contains('room-asking')")
    assert later_rows_shown(student) and later_rows_shown(teacher)
    teacher.click("#room-end")


def test_rejoining_keeps_the_member_and_its_answer(pages: Pages, base_url: str):
    teacher = pages.new(viewport={"width": 1280, "height": 720})
    teacher.goto(base_url + page_path(FAN, 0))
    wait_js(teacher, "window.gradtraceRoom !== undefined")
    teacher.click("#room-start")
    wait_js(teacher, "window.gradtraceRoom.status === 'live'")
    student = pages.new(**PHONE)
    student.goto(base_url + "/r/" + str(teacher.evaluate("window.gradtraceRoom.code")))
    wait_js(student, "window.gradtraceRoom.status === 'live'")
    teacher.click("#room-ask-grad")
    student.wait_for_selector("#room-q-input")
    student.fill("#room-q-input", "3")
    student.click("#room-q-send")
    wait_js(student, f"{SENT} === 'sent'")
    member = student.evaluate(MEMBER)
    wait_text(teacher, "#room-total", "1 answer")
    student.reload()  # a rejoin: the same member, the answer still there and still "Sent"
    wait_js(student, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
    wait_js(student, f"{SENT} === 'sent'")
    assert "Sent: 3" in (student.text_content("#room-sent") or "")
    assert student.input_value("#room-q-input") == "3"
    assert member == student.evaluate(MEMBER)
    student.fill("#room-q-input", "4")  # changed after the rejoin: replaces, never adds
    student.click("#room-q-send")
    teacher.click("#room-show-live")
    wait_text(teacher, '.room-bar-row[data-value="4"] .room-bar-n', "1 (100%)")
    assert teacher.text_content("#room-total") == "1 answer"
    wait_js(teacher, "document.querySelector('#room-count').textContent.startsWith('1 ')")
    teacher.click("#room-end")


@pytest.mark.parametrize("how", ["address", "browser"])
def test_a_chinese_student_stays_in_chinese(pages: Pages, base_url: str, how: str):
    teacher = pages.new(viewport={"width": 1280, "height": 720})
    teacher.goto(base_url + page_path(FAN, 0))
    wait_js(teacher, "window.gradtraceRoom !== undefined")
    teacher.click("#room-start")
    wait_js(teacher, "window.gradtraceRoom.status === 'live'")
    code = str(teacher.evaluate("window.gradtraceRoom.code"))
    if how == "address":
        student = pages.new(**PHONE)
        student.goto(base_url + "/r/" + code + "?lang=zh")
    else:  # a phone whose browser asks for Chinese (Accept-Language: zh-CN), a plain join link
        student = pages.new(**PHONE, locale="zh-CN")
        student.goto(base_url + "/r/" + code)
    wait_js(student, "window.gradtraceRoom.status === 'live'")
    teacher.locator("#graph").click(position={"x": 5, "y": 5})
    teacher.keyboard.press("ArrowRight")
    wait_js(student, f"{ST}.step === 1")
    assert student.evaluate(f"{ST}.lang") == "zh"
    assert student.get_attribute("html", "lang") == "zh-CN"
    assert student.text_content("#room-status") == "已连接"
    teacher.click("#room-ask-grad")
    wait_text(student, "#room-q-text", "下一步之后 x.grad 是多少？")
    assert teacher.evaluate(f"{ST}.lang") == "en"
    teacher.click(".lang button[data-lang='zh']")  # the instructor switches: the student stays
    teacher.click(".lang button[data-lang='en']")
    student.wait_for_timeout(300)
    assert student.evaluate(f"{ST}.lang") == "zh"
    teacher.click("#room-end")


def test_axe_finds_nothing_serious_in_the_room_s_cards(pages: Pages, base_url: str):
    from tests.test_accessibility import serious

    teacher = pages.new(viewport={"width": 1280, "height": 720}, bypass_csp=True)  # axe's script
    teacher.goto(base_url + page_path(FAN, 1))
    wait_js(teacher, "window.gradtraceRoom !== undefined")
    teacher.click("#room-start")
    wait_js(teacher, "window.gradtraceRoom.status === 'live'")
    student = pages.new(**PHONE, bypass_csp=True)
    student.goto(base_url + "/r/" + str(teacher.evaluate("window.gradtraceRoom.code")))
    wait_js(student, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
    wait_js(student, f"{ST}.step === 1")
    assert serious(teacher) == []  # the card with the code, the link and the QR
    teacher.click("#room-ask-grad")
    student.wait_for_selector("#room-q-input")
    assert serious(student) == []
    student.fill("#room-q-input", "4")
    student.click("#room-q-send")
    wait_text(teacher, "#room-total", "1 answer")
    teacher.click("#room-reveal")
    student.wait_for_selector("#room-verdict.right")
    assert serious(teacher) == [] and serious(student) == []
    teacher.click("#room-end")
    wait_js(student, "window.gradtraceRoom.status === 'ended'")


# --- the class through Redis, when Redis fails ---------------------------------------------


@pytest.fixture(scope="module")
def redis_app() -> Iterator[tuple[Redis, str]]:
    """The app with its rooms in a real Redis that a test pauses or restarts empty."""
    if not have_redis():
        pytest.skip("redis-server is not installed")
    redis = Redis()
    redis.start()
    replica = Replica(load.free_port(), {"GRADTRACE_REDIS_URL": redis.url}, [])
    try:
        replica.start()
        yield redis, replica.url
    finally:
        replica.stop()
        redis.close()


def watch_status(page: Any) -> None:
    """Keep every status the room's chip shows in window.statuses."""
    page.evaluate(
        """() => { window.statuses = [];
        const el = document.querySelector('#room-status');
        new MutationObserver(() => window.statuses.push(el.dataset.status))
          .observe(el, { attributes: true, attributeFilter: ['data-status'] }); }"""
    )


def a_class_with_an_answer(pages: Pages, base: str) -> tuple[Any, Any]:
    teacher = pages.new(viewport={"width": 1280, "height": 720})
    teacher.goto(base + page_path(FAN, 0))
    wait_js(teacher, "window.gradtraceRoom !== undefined")
    teacher.click("#room-start")
    wait_js(teacher, "window.gradtraceRoom.status === 'live'")
    student = pages.new(**PHONE)
    student.goto(base + "/r/" + str(teacher.evaluate("window.gradtraceRoom.code")))
    wait_js(student, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
    teacher.click("#room-ask-grad")
    student.wait_for_selector("#room-q-input")
    return teacher, student


def test_with_redis_paused_the_page_shows_an_answer_as_sent_only_once_it_is_stored(
    pages: Pages, redis_app: tuple[Redis, str]
):
    redis, base = redis_app
    teacher, student = a_class_with_an_answer(pages, base)
    redis.pause()
    try:
        student.fill("#room-q-input", "3")
        student.click("#room-q-send")
        seen = set()
        t = time.monotonic()
        while time.monotonic() - t < 6:  # paused: never "Sent"
            seen.add(student.evaluate(SENT))
            student.wait_for_timeout(200)
        student.screenshot(path="/tmp/room-paused-phone.png")
        paused_text = student.text_content("#room-sent")
    finally:
        redis.resume()
    wait_js(student, f"{SENT} === 'sent'", timeout=15)
    wait_text(teacher, "#room-total", "1 answer")
    assert seen <= {"sending", "retrying"} and "retrying" in seen, seen
    assert paused_text == "Not stored yet: sending 3 again…", paused_text
    assert student.evaluate("window.gradtraceRoom.status") == "live"
    teacher.click("#room-end")


def test_redis_restarted_empty_the_instructor_s_page_puts_the_class_back(
    pages: Pages, redis_app: tuple[Redis, str]
):
    redis, base = redis_app
    teacher, student = a_class_with_an_answer(pages, base)
    code = teacher.evaluate("window.gradtraceRoom.code")
    student.fill("#room-q-input", "3")
    student.click("#room-q-send")
    wait_js(student, f"{SENT} === 'sent'")
    wait_text(teacher, "#room-total", "1 answer")
    watch_status(student)
    watch_status(teacher)
    redis.restart_empty()
    t = time.monotonic()
    back_live = "window.statuses.includes('reconnecting') && window.gradtraceRoom.status === 'live'"
    wait_js(teacher, back_live, timeout=15)
    teacher.locator("#graph").click(position={"x": 5, "y": 5})
    teacher.keyboard.press("ArrowRight")
    wait_js(student, f"{ST}.step === 1", timeout=15)
    back = time.monotonic() - t
    wait_text(teacher, "#room-total", "1 answer")  # the student's page sent its answer again
    wait_js(student, f"{SENT} === 'sent'")
    assert teacher.evaluate("window.gradtraceRoom.code") == code
    assert "ended" not in student.evaluate("window.statuses")  # never told "expired"
    status, _, body = http("GET", f"{base}/api/rooms/{code}")
    assert status == 200 and json.loads(body)["state"]["step"] == 1
    sys.stderr.write(f"\nMEASURED Redis restarted empty (browser): on after {back:.2f} s\n")
    teacher.click("#room-end")


def test_a_late_student_is_told_when_to_retry_and_gets_in_once_there_is_a_place(pages: Pages):
    """A full room refuses for now (1013, with when to retry): the page says so and tries
    again, never giving up while the class goes on (it once stopped retrying for good)."""
    replica = Replica(load.free_port(), {"GRADTRACE_MAX_STUDENTS_PER_ROOM": "1"}, [])
    replica.start()
    try:
        base = replica.url
        room = json.loads(http("POST", base + "/api/rooms", {"state": {"source": FAN}})[2])
        first = pages.new(**PHONE)
        first.goto(base + "/r/" + room["room"])
        wait_js(first, "window.gradtraceRoom && window.gradtraceRoom.status === 'live'")
        late = pages.new(**PHONE)
        late.goto(base + "/r/" + room["room"])
        wait_js(late, "window.gradtraceRoom && window.gradtraceRoom.status === 'waiting'")
        text = late.text_content("#room-status") or ""
        assert text.startswith("No place yet: trying again in ") and text.endswith(" s"), text
        first.close()  # a place frees up
        wait_js(late, "window.gradtraceRoom.status === 'live'", timeout=20)
        late.close()  # before its server stops: a page would try to reconnect to it
    finally:
        replica.stop()
