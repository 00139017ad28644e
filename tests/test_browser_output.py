"""The Output panel in real Chromium: a torch program typed into the editor shows what its
print(x.grad) prints, with its line number; a `yy` typed beside `y` shows a warning at its
line and column, and clicking it selects `yy` in the editor; a program that says nothing
has no panel; the warning is worded in Chinese when the page is; axe-core finds nothing
serious in the panel and its text reads at AA."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tests.browser_kit import watched_page
from tests.test_accessibility import contrast, open_at, serious
from tests.test_browser import ctx, open_page, wait_js  # noqa: F401 (ctx: a fixture)

pytestmark = pytest.mark.browser

TORCH = """import torch
x = torch.tensor(2.0, requires_grad=True)
y = x ** 2
y.backward()
print(x.grad)"""
TYPO = "y = 2*x\nL = yy*y + x\nL"


def type_program(page: Any, source: str) -> None:
    editor = page.locator("#source")
    editor.fill("")
    editor.type(source, delay=0)


def test_a_typed_torch_program_prints_its_grad_in_the_output_panel(ctx, base_url):  # noqa: F811
    page = open_page(ctx, base_url, "/?source=" + quote("x*y + x"))
    assert page.locator("#output").is_hidden()  # nothing printed, nothing to warn about
    type_program(page, TORCH)
    wait_js(page, "!document.querySelector('#output').hidden")
    rows = page.locator("#output-printed .out-line")
    assert rows.count() == 1
    assert rows.locator(".out-ln").text_content() == "5"
    assert rows.locator(".out-text").text_content() == "tensor(4.)"
    family = page.eval_on_selector(".out-text", "el => getComputedStyle(el).fontFamily")
    assert "Mono" in family or "monospace" in family
    assert page.locator("#output-warnings").is_hidden()
    assert page.text_content("#h-output") == "Output"


def test_a_typo_warns_and_clicking_the_warning_selects_it(ctx, base_url):  # noqa: F811
    page = open_page(ctx, base_url, "/?source=" + quote(TYPO))
    wait_js(page, "!document.querySelector('#output').hidden")
    warning = page.locator("#output-warnings .out-warn")
    assert warning.count() == 1
    text = warning.text_content() or ""
    assert text.startswith("Line 2, column 5: "), text
    assert "'yy' is never assigned" in text and "did you mean 'y'?" in text
    assert page.locator("#output-printed").is_hidden()
    warning.click()
    picked = page.evaluate(
        """() => { const ta = document.querySelector('#source');
        return [document.activeElement === ta,
                ta.value.slice(ta.selectionStart, ta.selectionEnd)]; }"""
    )
    assert picked == [True, "yy"]
    # Fixed, the warning goes and so does the panel.
    type_program(page, "y = 2*x\nL = y*y + x\nL")
    wait_js(page, "document.querySelector('#output').hidden")
    assert page.evaluate("window.gradtrace.state.trace.warnings") == []


def test_the_position_counts_characters_not_utf16_units(ctx, base_url):  # noqa: F811
    # 𝑥 is one character and two UTF-16 units: the selection still lands on the name.
    source = "# 𝑥 and 𝑦\nab = 2*x\nL = abb * ab\nL"
    page = open_page(ctx, base_url, "/?source=" + quote(source))
    wait_js(page, "!document.querySelector('#output').hidden")
    page.locator("#output-warnings .out-warn").click()
    picked = page.evaluate(
        """() => { const ta = document.querySelector('#source');
        return ta.value.slice(ta.selectionStart, ta.selectionEnd); }"""
    )
    assert picked == "abb"


def test_the_warning_is_worded_in_chinese_on_the_chinese_page(ctx, base_url):  # noqa: F811
    page = open_page(ctx, base_url, "/?lang=zh&source=" + quote(TYPO))
    wait_js(page, "!document.querySelector('#output').hidden")
    text = page.text_content("#output-warnings .out-warn") or ""
    assert text.startswith("第 2 行,第 5 列"), text
    assert "'yy' 从未被赋值" in text and "'y'" in text
    assert page.text_content("#h-output") == "输出"
    page.click(".lang button[data-lang='en']")
    wait_js(page, "document.querySelector('#h-output').textContent === 'Output'")
    assert "'yy' is never assigned" in (page.text_content("#output-warnings .out-warn") or "")


@pytest.fixture
def axe_page(browser: Any, base_url: str) -> Iterator[Any]:
    """A page whose CSP lets axe-core's script in (as tests/test_accessibility.py's)."""
    with watched_page(browser, viewport={"width": 1280, "height": 800}, bypass_csp=True) as p:
        yield p


def test_the_panel_passes_axe_and_its_text_reads_at_aa(axe_page, base_url):
    page = axe_page
    open_at(page, base_url, "/?source=" + quote(TORCH + "\nL = yy * y"))
    wait_js(page, "!document.querySelector('#output').hidden")
    assert page.locator("#output-warnings .out-warn").count() == 1
    assert serious(page, "#output") == []
    colours = page.evaluate(
        """() => [...document.querySelectorAll(
                '#output .where, #output .msg, #output .out-ln, #output .out-text')].map(el => {
            let bg = el, c = 'rgba(0, 0, 0, 0)';
            while (bg && (c = getComputedStyle(bg).backgroundColor) === 'rgba(0, 0, 0, 0)')
                bg = bg.parentElement;
            return [getComputedStyle(el).color, c]; })"""
    )
    assert len(colours) == 4
    for fg, bg in colours:
        assert contrast(fg, bg) >= 4.5, (fg, bg)
