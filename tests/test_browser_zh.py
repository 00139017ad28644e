"""The page in 中文 in real Chromium: an error is told in Chinese with its line and column, a
switch of language tells it again in the other, and the "last program that ran" note sits
under the drawing, never over it. Fixtures: tests/conftest.py and tests/test_browser.py."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import pytest

from bench.chromium import have_chromium

pytestmark = pytest.mark.browser

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

from tests import test_browser as browser_tests  # noqa: E402

ctx = browser_tests.ctx  # the fixture: one context, no console errors, no other origin
open_page, wait_js = browser_tests.open_page, browser_tests.wait_js

LESSON = "/?source=x*y%2Bx&values=x=2,y=3&step=1"
CJK = re.compile(r"[\u4e00-\u9fff]")


def type_program(page: Any, source: str, expect: str) -> str:
    """Type `source` in the editor; the error box's text once its message holds `expect`."""
    page.fill("#source", source)
    page.wait_for_selector("#error-box:not([hidden])")
    wait_js(page, f"document.querySelector('#error-box .msg').textContent.includes({expect!r})")
    return str(page.text_content("#error-box"))


def box(page: Any, selector: str) -> dict[str, float]:
    return page.evaluate(
        """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }""",
        selector,
    )


def test_a_misspelt_function_is_told_in_chinese_with_its_line_and_column(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&lang=zh")
    text = type_program(page, "x*y + tanhh(x)", "tanhh")
    assert "程序无法运行" in text and "第 1 行,第 7 列" in text
    assert "未知函数 'tanhh'——你是不是想写 'tanh'?" in text
    assert "unknown function" not in text and "did you mean" not in text
    assert page.text_content("#editor-hl mark.err") == "tanhh"
    page.screenshot(path="/tmp/zh_error.png")


def test_a_syntax_error_and_a_limit_are_told_in_chinese(ctx, base_url):
    page = open_page(ctx, base_url, LESSON + "&lang=zh")
    text = type_program(page, "x = (1", "(")
    assert "语法错误:'(' 没有闭合" in text and "第 1 行,第 5 列" in text
    text = type_program(page, "for i in range(100000000):\n    y = i", "max_loop")
    assert "这个循环会运行 100,000,000 次" in text and "(max_loop_iterations)" in text


def test_switching_language_tells_the_error_again_in_the_other(ctx, base_url):
    page = open_page(ctx, base_url, LESSON)
    text = type_program(page, "x*y + tanhh(x)", "tanhh")
    assert "unknown function 'tanhh' — did you mean 'tanh'?" in text
    page.click(".lang button[data-lang='zh']")
    wait_js(page, "document.querySelector('#error-box .msg').textContent.includes('未知函数')")
    assert "第 1 行,第 7 列" in str(page.text_content("#error-box"))
    page.click(".lang button[data-lang='en']")
    wait_js(page, "document.querySelector('#error-box .msg').textContent.includes('unknown')")


def test_a_page_opened_in_chinese_at_a_broken_program_shows_the_chinese_error(ctx, base_url):
    page = open_page(ctx, base_url, "/?lang=zh&source=" + quote("x = 1\ny = x(2)"))
    page.wait_for_selector("#error-box:not([hidden])")
    text = str(page.text_content("#error-box"))
    assert "第 2 行,第 5 列" in text and "'x' 是一个值,不是函数" in text


@pytest.mark.parametrize("width", [1280, 390])
def test_the_last_program_note_sits_under_the_drawing_not_over_it(ctx, base_url, width):
    context, _ = ctx
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(base_url + LESSON + "&lang=zh")
    wait_js(page, "window.gradtrace !== undefined")
    type_program(page, "x*y + tanhh(x)", "tanhh")
    page.wait_for_selector("#stale-note:not([hidden])")
    note, graph = box(page, "#stale-note"), box(page, "#graph")
    assert note["top"] >= graph["bottom"] - 0.5, (note, graph)  # below the drawing's box
    assert CJK.search(str(page.text_content("#stale-note")))
    nodes = page.evaluate(
        """() => [...document.querySelectorAll('#graph g.node')].map(n => {
        const r = n.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; })"""
    )
    assert nodes and all(n["bottom"] <= note["top"] + 0.5 for n in nodes)
    page.locator(".graph-frame").screenshot(path=f"/tmp/zh_stale_{width}.png")
