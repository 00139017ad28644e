"""Fixtures shared by the test files: one headless Chromium for the whole session (Debian's
`chromium`, driven by Playwright's sync API; never a browser download), and one real uvicorn
server on loopback for the page tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bench.chromium import ARGS as CHROMIUM_ARGS
from bench.chromium import CHROMIUM, have_chromium


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def base_url() -> Iterator[str]:
    """The app served by a real uvicorn on a free 127.0.0.1 port, for the whole session."""
    import uvicorn

    from app.main import app

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=5)
