"""Fixtures shared by the test files: one headless Chromium for the whole session (Debian's
`chromium`, driven by Playwright's sync API; never a browser download)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("GRADTRACE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def have_chromium() -> bool:
    return bool(shutil.which(CHROMIUM) or Path(CHROMIUM).exists())


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One Chromium for every test that asks for it, started on first use."""
    if not have_chromium():
        pytest.skip("Chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
