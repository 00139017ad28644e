"""What every browser test uses: waiting on the page's state, and pages watched for console
errors (a test fails on any)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def wait_js(page: Any, expr: str, timeout: float = 8.0) -> Any:
    """Wait until a JS expression is truthy. The function form matters: Playwright evaluates a
    bare expression string with eval(), which the page's CSP (script-src 'self') forbids."""
    return page.wait_for_function(f"() => ({expr})", timeout=timeout * 1000).json_value()


def watch_errors(page: Any, errors: list[str]) -> Any:
    """`page`, with its console errors and uncaught exceptions collected into `errors`."""
    page.on("console", lambda m: errors.extend([m.text] if m.type == "error" else []))
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page


@contextmanager
def watched_page(browser: Any, **context_options: Any) -> Iterator[Any]:
    """A page in a context of its own; on leaving, the context is closed and the test fails if
    the page logged a console error."""
    context = browser.new_context(**context_options)
    errors: list[str] = []
    try:
        yield watch_errors(context.new_page(), errors)
    finally:
        context.close()
    assert not errors, f"console errors: {errors}"
