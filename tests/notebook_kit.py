"""Run a notebook's cells in a real kernel, as Jupyter would, for the tests of what gradtrace
shows there (tests/test_notebook.py, tests/test_widget.py).

nbclient runs in its own process: its asyncio loop and Playwright's (one browser per session)
must not share a thread. A kernel spec of our own runs this interpreter, whatever else is
installed, and nbclient saves the widgets' last state in the notebook it writes back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[1]
RUNNER = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=60, kernel_name="gradtrace-test",
               resources={"metadata": {"path": sys.argv[2]}}).execute()
nbformat.write(nb, sys.argv[1])
"""


def execute(cells: list[str], tmp: Path, name: str = "notebook.ipynb") -> Any:
    """A notebook of `cells`, run in a fresh kernel in `tmp`: the notebook as saved after."""
    spec = tmp / "jupyter" / "kernels" / "gradtrace-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "gradtrace test", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    path = tmp / name
    nbformat.write(nb, path)
    env = {
        **os.environ,
        "JUPYTER_PATH": str(tmp / "jupyter"),
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "IPYTHONDIR": str(tmp / "ipython"),
    }
    subprocess.run(
        [sys.executable, "-c", RUNNER, str(path), str(ROOT)],
        env=env,
        cwd=tmp,
        check=True,
        timeout=120,
        capture_output=True,
    )
    return nbformat.read(path, as_version=4)
