"""Which Chromium the tests and the bench drive, and how: Debian's `chromium` (never a browser
download), headless through Playwright, with the flags a sandboxed CI machine needs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM = os.environ.get("GRADTRACE_CHROMIUM", "/usr/bin/chromium")
ARGS = [
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
