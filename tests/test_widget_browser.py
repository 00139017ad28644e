"""The widget's front end in a real JupyterLab (its own server, started here, with no network)
driven by Chromium: the example notebook runs, the widget draws the step Python set, a click
on "next step" redraws it and the kernel reads the new step, the keys step it, and a program
that cannot run shows its error. It also takes the docs' screenshot of the widget."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anywidget")
pytest.importorskip("jupyterlab")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "examples" / "notebooks" / "gradtrace-widget.ipynb"
SCREENSHOT = ROOT / "docs" / "screenshots" / "integration-widget.png"
TOKEN = "gradtrace-test-token"
# JupyterLab's own calls out (news, update checks, the extension manager's index) are off, and
# everything it keeps goes under the test's folder.
LAB_ARGS = [
    "--no-browser",
    "--allow-root",
    "--ip=127.0.0.1",
    f"--IdentityProvider.token={TOKEN}",
    "--LabApp.news_url=None",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    "--LabApp.extension_manager=readonly",
    "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: "run all cells", as the menu
    "--ServerApp.terminals_enabled=False",
]
NO_NEWS = {"fetchNews": "false", "checkForUpdates": False}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Lab:
    url: str
    folder: Path


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A JupyterLab server serving a copy of the example notebook, stopped afterwards."""
    tmp = tmp_path_factory.mktemp("lab")
    (tmp / "root").mkdir()
    shutil.copy(NOTEBOOK, tmp / "root" / NOTEBOOK.name)
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(NO_NEWS))
    dirs = {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTER_DATA_DIR": "data",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "JUPYTERLAB_SETTINGS_DIR": "settings",
        "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
        "IPYTHONDIR": "ipython",
    }
    env = {**os.environ, **{k: str(tmp / v) for k, v in dirs.items()}, "PYTHONPATH": str(ROOT)}
    port = free_port()
    jupyter = Path(sys.executable).with_name("jupyter")
    command = [str(jupyter), "lab", f"--port={port}", f"--ServerApp.root_dir={tmp / 'root'}"]
    log = (tmp / "lab.log").open("w")
    server = subprocess.Popen(
        command + LAB_ARGS, env=env, cwd=tmp, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 40
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "JupyterLab did not start: " + (tmp / "lab.log").read_text()
                    ) from None
                time.sleep(0.2)
        yield Lab(url, tmp)
    finally:
        server.terminate()  # the server shuts its kernels down as it stops
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def widget_state(page: Any, nth: int) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate(
        """(n) => {
          const w = document.querySelectorAll('.gradtrace-widget')[n];
          const texts = [...w.querySelectorAll('.gtw-graph svg text')].map(t => t.textContent);
          const error = w.querySelector('.gtw-error');
          return {
            label: w.querySelector('.gtw-label').textContent,
            svg: texts.join(' '),
            sentence: w.querySelector('.gtw-sentence').textContent,
            row: [...w.querySelectorAll('.gtw-table tbody td')].map(td => td.textContent),
            error: error.hidden ? null : error.innerText,
          };
        }""",
        nth,
    )
    return state


def kernel_idle(page: Any) -> None:
    page.wait_for_function(
        """() => {
          const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
          const kernel = panel && panel.sessionContext && panel.sessionContext.session
            && panel.sessionContext.session.kernel;
          return kernel && kernel.status === 'idle';
        }""",
        timeout=60_000,
    )


@pytest.mark.browser
@pytest.mark.slow
def test_the_widget_steps_in_jupyterlab_and_the_kernel_sees_the_step(
    lab: Lab, browser: Any
) -> None:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    requests: list[str] = []
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.extend([m.text] if m.type == "error" else []))
        page.goto(f"{lab.url}/lab/tree/{NOTEBOOK.name}?token={TOKEN}")
        kernel_idle(page)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(
            "() => document.querySelectorAll('.gradtrace-widget').length === 3 && "
            "document.querySelector('.gradtrace-widget .gtw-label').textContent === 'Step 1 of 2'",
            timeout=60_000,
        )
        kernel_idle(page)
        # Python made it at step 0, then set the step to 1 and y to 4: the drawing follows.
        first = widget_state(page, 0)
        assert "Step 1 of 2" in first["svg"] and "x*y = 8" in first["svg"]
        assert first["row"] == ["1", "0", "1", "1"]  # x, y, x*y, out
        assert first["error"] is None

        page.locator(".gradtrace-widget .gtw-next").first.click()
        page.wait_for_function(
            "() => document.querySelector('.gradtrace-widget .gtw-label').textContent "
            "=== 'Step 2 of 2'"
        )
        now = widget_state(page, 0)
        assert "Step 2 of 2" in now["svg"] and now["svg"] != first["svg"]
        assert now["sentence"].startswith("x*y sends ū·y = 1·4 = 4 to x; x.grad: 1 → 5")
        assert now["row"] == ["5", "2", "1", "1"]
        output = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea")
        output.screenshot(path=str(SCREENSHOT))  # the docs' picture: the widget at step 2

        # The kernel has the step the reader chose: run the cell that reads it again.
        cell = page.locator(".jp-Notebook .jp-Cell").nth(3)
        assert cell.locator(".jp-InputArea-editor").inner_text().strip() == "w.step"
        cell.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        page.wait_for_function(
            "() => { const out = document.querySelectorAll('.jp-Notebook .jp-Cell')[3]"
            ".querySelector('.jp-OutputArea-output');"
            " return !!out && out.textContent.trim() === '2'; }",
            timeout=20_000,
        )

        # The keys step it once it has the focus; JupyterLab leaves them to the widget.
        page.locator(".gradtrace-widget").first.focus()
        page.keyboard.press("Home")
        page.wait_for_function(
            "() => document.querySelector('.gradtrace-widget .gtw-label').textContent "
            "=== 'Step 0 of 2'"
        )
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "() => document.querySelector('.gradtrace-widget .gtw-label').textContent "
            "=== 'Step 1 of 2'"
        )
        assert widget_state(page, 0)["sentence"].startswith("out = x*y + x sends ū = 1 to x*y")

        bad = widget_state(page, 1)
        assert bad["error"] is not None and "Line 2, column 8" in bad["error"]
        assert bad["row"] == [] and bad["svg"] == ""

        # A long loop's frames come one at a time: "back" asks the kernel for step 35; "next"
        # shows step 36 again from what the widget kept.
        loop = page.locator(".gradtrace-widget").nth(2)
        assert widget_state(page, 2)["label"] == "Step 36 of 36"
        loop.locator(".gtw-back").click()
        page.wait_for_function(
            "() => { const w = document.querySelectorAll('.gradtrace-widget')[2];"
            " return w.querySelector('.gtw-label').textContent === 'Step 35 of 36'"
            " && !w.classList.contains('gtw-waiting'); }",
            timeout=20_000,
        )
        assert "Step 35 of 36" in widget_state(page, 2)["svg"]
        # Clicked and read in one script, so no answer from the kernel can come between.
        shown = page.evaluate(
            """() => { const w = document.querySelectorAll('.gradtrace-widget')[2];
                      w.querySelector('.gtw-next').click();
                      return [...w.querySelectorAll('.gtw-graph svg text')]
                        .map(t => t.textContent).join(' '); }"""
        )
        assert "Step 36 of 36" in shown

        assert not errors, errors
        outside = {u for u in requests if not u.startswith((lab.url, "blob:", "data:", "about:"))}
        assert not outside, outside  # nothing fetched from the network
    finally:
        context.close()


SAID = [  # (program, values, accumulate): numbers, the = bug, tensors, a tensor output
    ("x*y + x", {"x": 2, "y": 3}, "add"),
    ("x*y + x", {"x": 2, "y": 3}, "assign"),
    ("W = randn(2, 3)\nx = randn(3)\nsum(tanh(W @ x))", {}, "add"),
    ("a = [1.0, -2.0]\nb = relu(a) * 3\nb", {}, "add"),
]


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_widget_says_each_step_as_the_page_does(
    browser: Any, tmp_path: Path, lang: str
) -> None:
    """The kernel's sentences (gradtrace/widget_frames.py) against the page's own
    (static/js/explain.js), read from the standalone stepper at every step."""
    from gradtrace import widget_frames as wf
    from gradtrace.files import Program
    from gradtrace.standalone import standalone_html

    context = browser.new_context(offline=True)
    try:
        page = context.new_page()
        for i, (source, values, accumulate) in enumerate(SAID):
            program = Program(source, values, accumulate)
            trace = program.trace()
            path = tmp_path / f"said-{lang}-{i}.html"
            path.write_text(standalone_html(trace, program=program, lang=lang), "utf-8")
            page.goto(path.as_uri())
            page.wait_for_function("() => window.gradtrace && window.gradtrace.state")
            for k in range(len(trace["steps"])):
                page.evaluate("(k) => window.gradtrace.setPos(k)", k)
                page.wait_for_function("(k) => window.gradtrace.state.step === k", arg=k)
                said = page.text_content("#explain")
                assert said == wf.sentence(trace, k, lang), (source, accumulate, k)
    finally:
        context.close()
