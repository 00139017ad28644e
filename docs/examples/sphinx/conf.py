"""Sphinx configuration for course notes whose gradtrace diagrams are made at build time.

    pip install sphinx gradtrace      (gradtrace from its checkout: scripts/setup serve)
    sphinx-build -b html . _build/html

On `config-inited` (before any page is read, and before Sphinx checks html_extra_path) each
program in programs/*.txt (gradtrace's language; .txt so that no Python formatter rewrites
x*y, which would change its label) becomes, in _generated/: NAME-step-00.svg, … (every step),
NAME-table.html (the grad table) and pages/NAME.html (the interactive stepper in one file,
copied to the site's root by html_extra_path). gradtrace rewrites a file only when its bytes
change, so incremental builds stay incremental.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

project = "Backpropagation, step by step"
author = "Course staff"
html_theme = "alabaster"
exclude_patterns = ["_build", "_generated", "programs"]
html_extra_path = ["_generated/pages"]

HERE = Path(__file__).resolve().parent
GENERATED = HERE / "_generated"


def make_diagrams(app, config) -> None:
    for program in sorted((HERE / "programs").glob("*.txt")):
        name = program.stem
        subprocess.run(
            [
                "gradtrace",
                "render",
                f"@{program}",
                "--all-steps",
                str(GENERATED),
                "--prefix",
                f"{name}-step",
                "--html",
                str(GENERATED / "pages" / f"{name}.html"),
                "--table",
                "html",
                "-o",
                str(GENERATED / f"{name}-table.html"),
            ],
            check=True,
        )


def setup(app):
    app.connect("config-inited", make_diagrams)
