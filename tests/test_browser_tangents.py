"""A forward-mode transform's tangent pass on the page, in real Chromium (issue 25 item 1):
with "Forward pass first", each node of `jax.jvp(f, …)` is said with its tangent beside its
value, as the forward-mode lesson writes it (ẋ seeded, d(…) = its JVP rule = the number)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bench.chromium import have_chromium
from tests.browser_kit import wait_js, watched_page

pytestmark = pytest.mark.browser

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

ST = "window.gradtrace.state"
SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
JVP = (
    "import jax\n"
    "import jax.numpy as jnp\n"
    "def f(x, y):\n"
    "    return jnp.sin(x) * y + x\n"
    "out = jax.jvp(f, (1.0, 2.0), (1.0, 0.5))"
)


def test_the_forward_pass_says_each_nodes_tangent(browser: Any, base_url: str) -> None:
    with watched_page(browser, viewport={"width": 1280, "height": 720}) as page:
        page.goto(base_url + "/?" + urlencode({"source": JVP}))
        wait_js(page, "window.gradtrace !== undefined && document.querySelector('#graph svg')")
        wait_js(page, f"!{ST}.running", timeout=20)
        page.check("#forward-mode")
        wait_js(page, f"{ST}.forwardMode && {ST}.fwd === 0")
        said = []
        n = page.evaluate(f"{ST}.trace.topo.length")
        for k in range(n):
            wait_js(page, f"{ST}.fwd === {k}")
            said.append(page.text_content("#explain") or "")
            if k < n - 1:
                page.click("#btn-next")
        assert said[0].startswith("Forward: x = 1")
        assert "Tangent, as given to the forward-mode transform: x\u0307 = 1" in said[0]
        assert "d(jnp.sin(x)) = cos x·x\u0307 = 0.54" in said[1]
        assert "y\u0307 = 0.5" in said[2]
        assert "= d(jnp.sin(x) * y) + x\u0307 = 2.50" in said[-1]
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "jvp-tangent-pass.png"))


def test_jacfwd_says_a_tangent_per_pass(browser: Any, base_url: str) -> None:
    src = "import jax\nimport jax.numpy as jnp\nx = jnp.array([1.0, 2.0])\n"
    src += "out = jax.jacfwd(jnp.sin)(x)"
    with watched_page(browser, viewport={"width": 1280, "height": 720}) as page:
        page.goto(base_url + "/?" + urlencode({"source": src}))
        wait_js(page, "window.gradtrace !== undefined && document.querySelector('#graph svg')")
        wait_js(page, f"!{ST}.running", timeout=20)
        page.check("#forward-mode")
        wait_js(page, f"{ST}.forwardMode && {ST}.fwd === 0")
        assert "x\u0307 = [1, 0]; [0, 1]." in (page.text_content("#explain") or "")
        page.click("#btn-next")
        wait_js(page, f"{ST}.fwd === 1")
        said = page.text_content("#explain") or ""
        assert "cos x·x\u0307 = [0.5403, 0]; [0, -0.4161]" in said, said
