"""The own-engine page in real Chromium: the student's engine runs on Pyodide in a Web Worker
of the page, from this origin; gradtrace steps their backward and points at the wrong node.

micrograd's engine.py as published (read from the installed package) runs, steps, and agrees
with gradtrace's own engine on its README's example; each planted bug is pointed at its node
with its name; a MiniTorch-style ScalarFunction engine works; an infinite loop is stopped within
the limit and the page stays usable; code from a link waits for Run; every request the page
and its worker make stays on the app's origin; the page's CSP adds only 'wasm-unsafe-eval'
(and worker-src 'self') to the main page's. One context for the file: Pyodide's snapshot,
kept in its IndexedDB, makes every start after the first a warm one.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

import engine
from app.main import app
from engine.own import OwnLimits, own_limits
from tests.browser_kit import wait_js
from tests.test_own_engine import PLANTED, README, README_GRADTRACE, example

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "docs" / "screenshots"
PYODIDE = ROOT / "static" / "pyodide" / ".version"
BOOT = 90.0  # seconds: a hang bound for Pyodide's first start on a busy 2-core machine

if not PYODIDE.exists():
    pytest.skip("Pyodide is not installed (scripts/pyodide)", allow_module_level=True)


class Requests:
    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.seen: list[str] = []
        self.errors: list[str] = []

    def foreign(self) -> list[str]:
        return [u for u in self.seen if not u.startswith((self.origin + "/", "data:", "blob:"))]


@pytest.fixture(scope="module")
def own(browser: Any, base_url: str) -> Iterator[tuple[Any, Requests]]:
    """One context and one page for the file, every request it makes (the worker's too)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    watch = Requests(base_url)
    context.on("request", lambda r: watch.seen.append(r.url))
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and watch.errors.append(m.text))
    page.on("pageerror", lambda e: watch.errors.append(str(e)))
    yield page, watch
    context.close()
    assert not watch.foreign(), watch.foreign()
    assert not watch.errors, watch.errors


def open_own(page: Any, base_url: str, query: str = "") -> None:
    page.goto(base_url + "/own" + query)
    wait_js(page, "window.gradtraceOwn && window.gradtraceOwn.ready", timeout=BOOT)


def run(page: Any, source: str | None = None, timeout: float = 30.0) -> dict[str, Any] | None:
    """Press Run (with `source` in the editor) and wait for the answer or the error box."""
    if source is not None:
        page.fill("#own-source", source)
    before = page.evaluate("() => window.gradtraceOwn.answer")
    page.click("#own-run")
    wait_js(
        page,
        "(window.gradtraceOwn.answer && window.gradtraceOwn.answer !== window.__last) || "
        "!document.querySelector('#error-box').hidden",
        timeout=timeout,
    )
    page.evaluate("() => { window.__last = window.gradtraceOwn.answer; }")
    answer = page.evaluate("() => window.gradtraceOwn.answer")
    return answer if answer != before else None


def labels(answer: dict[str, Any]) -> dict[str, str]:
    return {n["id"]: n["label"] for n in answer["trace"]["nodes"]}


def test_micrograd_as_published_runs_steps_and_agrees_with_gradtrace(own, base_url) -> None:
    page, watch = own
    mg = pytest.importorskip("micrograd.engine")
    open_own(page, base_url)
    answer = run(page, inspect.getsource(mg) + README)
    assert answer is not None
    assert page.text_content("#own-printed") == "24.7041\n138.8338\n645.5773"
    ours = engine.run(README_GRADTRACE).to_dict()["grads"]
    by_label = {n["label"]: n for n in answer["trace"]["nodes"]}
    assert by_label["a"]["grad"] == pytest.approx(ours["a"], rel=1e-12)
    assert by_label["b"]["grad"] == pytest.approx(ours["b"], rel=1e-12)
    assert answer["findings"] == [] and answer["reference"]["agree"]
    assert "agrees" in page.text_content("#own-findings") or page.locator(".own-ok").count() == 1
    # It steps like the main page: the keys, the label, the table's current row, the drawing.
    n = len(answer["trace"]["steps"]) - 1
    page.locator("#step-slider").focus()
    page.keyboard.press("Home")
    assert page.text_content("#step-label") == f"Step 0 of {n}"
    page.keyboard.press("ArrowRight")
    assert page.text_content("#step-label") == f"Step 1 of {n}"
    assert page.locator("#grad-table tbody tr[aria-current='step']").count() == 1
    first = answer["trace"]["steps"][1]
    assert page.locator(f"#graph svg g.node#{first['node']}.current").count() == 1
    assert page.text_content("#own-explain") == first["words"]
    ref_rows = page.locator("#own-ref tbody tr")
    assert ref_rows.count() == len(answer["reference"]["grads"])
    assert page.locator("#own-ref tbody tr.own-differs").count() == 0
    assert any("/static/pyodide/pyodide.asm.wasm" in u for u in watch.seen)  # the worker's, seen


@pytest.mark.parametrize("name", [*sorted(PLANTED), "assign"])
def test_each_planted_bug_is_pointed_at_its_node(own, base_url, name: str) -> None:
    page, _ = own
    open_own(page, base_url, f"?example={name}")
    answer = run(page)
    assert answer is not None
    first = answer["findings"][0]
    names = labels(answer)
    if name == "assign":
        ran = [names[s["node"]] for s in answer["trace"]["steps"][1:]]
        want = ("overwrite", max(("d", "e"), key=ran.index))
    else:
        want = PLANTED[name]
    assert (first["code"], names[first["node"]]) == want
    # The page opens at the step that shows it, with the node marked in the drawing and table.
    assert page.evaluate("() => window.gradtrace.state.step") == first["step"]
    marked = page.eval_on_selector_all("#graph g.node.own-wrong", "els => els.map(e => e.id)")
    assert first["node"] in marked
    assert page.locator(f"#grad-table th.own-wrong[data-node='{first['node']}']").count() == 1
    item = page.locator("#own-findings li").first
    assert first["name"] in item.text_content()
    if name == "upstream":
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(SHOTS / "own-bug.png"), full_page=False)


def test_a_minitorch_style_scalar_function_engine_works(own, base_url) -> None:
    page, _ = own
    open_own(page, base_url, "?example=minitorch")
    answer = run(page)
    assert answer is not None and answer["findings"] == []
    assert all(row["ok"] for row in answer["end_to_end"])
    assert page.locator("#own-check tbody tr").count() == len(answer["end_to_end"]) >= 3
    assert page.locator("#own-check tr.own-differs").count() == 0


def test_an_infinite_loop_is_stopped_within_the_limit_and_the_page_stays_usable(
    own, base_url
) -> None:
    page, _ = own
    app.dependency_overrides[own_limits] = lambda: OwnLimits(max_own_run_seconds=2.0)
    try:
        open_own(page, base_url)
    finally:
        app.dependency_overrides.pop(own_limits, None)
    page.fill("#own-source", "while True:\n    pass\n")
    t0 = time.monotonic()
    page.click("#own-run")
    # The page answers while the worker spins: a step of the language switch, at once.
    t1 = time.monotonic()
    page.click(".lang button[data-lang='zh']")
    page.click(".lang button[data-lang='en']")
    assert time.monotonic() - t1 < 1.5
    wait_js(page, "!document.querySelector('#error-box').hidden", timeout=10)
    stopped = time.monotonic() - t0
    assert stopped < 2.0 + 2.0, stopped  # the limit, and a generous margin for a busy machine
    text = page.text_content("#error-box")
    assert "2 s" in text and "max_own_run_seconds" in text
    wait_js(page, "window.gradtraceOwn.ready", timeout=BOOT)  # a new worker, warm
    page.select_option("#own-example", "micrograd")
    answer = run(page)
    assert answer is not None and answer["findings"] == []
    assert page.locator("#error-box").is_hidden()


def test_code_from_a_link_runs_only_after_run_is_pressed(own, base_url) -> None:
    page, _ = own
    code = example("micrograd").replace("print(x1.grad", "print('ran', x1.grad")
    open_own(page, base_url, "?source=" + quote(code))
    assert page.locator("#own-from-link").is_visible()
    assert page.input_value("#own-source") == code
    page.wait_for_timeout(1500)
    assert page.evaluate("() => window.gradtraceOwn.runs.length") == 0
    assert page.evaluate("() => window.gradtraceOwn.recording") is None
    answer = run(page)
    assert answer is not None and page.text_content("#own-printed").startswith("ran ")


def test_the_findings_follow_the_language(own, base_url) -> None:
    page, _ = own
    open_own(page, base_url, "?example=upstream")
    run(page)
    page.click(".lang button[data-lang='zh']")
    wait_js(page, "document.querySelector('#own-findings').textContent.includes('漏乘上游梯度')")
    assert page.text_content("#own-run") == "运行"
    assert "。" in page.text_content("#own-explain")
    page.click(".lang button[data-lang='en']")
    wait_js(page, "document.querySelector('#own-findings').textContent.includes('upstream')")


def directives(csp: str) -> dict[str, set[str]]:
    out = {}
    for part in csp.split(";"):
        name, *sources = part.split()
        out[name] = set(sources)
    return out


def test_the_pages_csp_adds_only_wasm_unsafe_eval(base_url) -> None:
    main = directives(httpx.get(base_url + "/").headers["content-security-policy"])
    for path in ("/own", "/static/js/own/worker.js"):
        got = directives(httpx.get(base_url + path).headers["content-security-policy"])
        assert got["script-src"] == main["script-src"] | {"'wasm-unsafe-eval'"}
        assert got["connect-src"] == {"'self'"}
        assert got.get("worker-src") == {"'self'"}
        rest = {k: v for k, v in got.items() if k not in ("script-src", "worker-src")}
        assert rest == {k: v for k, v in main.items() if k != "script-src"}
        assert (
            "'unsafe-eval'" not in got["script-src"] and "'unsafe-inline'" not in got["script-src"]
        )
    # Every other page keeps its policy without it.
    assert "'wasm-unsafe-eval'" not in main["script-src"]


def test_axe_finds_nothing_serious_on_the_page_with_a_bug_found(own, base_url) -> None:
    from tests.test_accessibility import serious

    page, _ = own
    open_own(page, base_url, "?example=exp")
    assert run(page) is not None
    assert serious(page) == []
    page.click(".lang button[data-lang='zh']")
    wait_js(page, "document.querySelector('#own-findings').textContent.includes('局部梯度错误')")
    assert serious(page) == []
    page.click(".lang button[data-lang='en']")
