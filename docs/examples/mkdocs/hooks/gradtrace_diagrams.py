"""MkDocs hook: make the gradtrace diagrams before each build, and put grad tables into pages.

Each program in programs/*.txt (gradtrace's language; .txt so no Python formatter
rewrites x*y, which would change its label) becomes, in docs/diagrams/ (published):
  NAME-step-00.svg, NAME-step-01.svg, …   every step of its backward pass
  NAME.html                              the interactive stepper, one file, works offline
and generated/NAME-table.md, the per-step grad table, which a page puts in with the line
  <!-- gradtrace-table: NAME -->

gradtrace rewrites a file only when its bytes change, so `mkdocs serve` does not rebuild in a
loop and diagrams kept under version control do not churn.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "programs"
OUT = ROOT / "docs" / "diagrams"
TABLES = ROOT / "generated"  # outside docs/: MkDocs would make a page of a .md file there


def on_pre_build(config, **kwargs):
    for program in sorted(PROGRAMS.glob("*.txt")):
        name = program.stem
        subprocess.run(
            [
                "gradtrace",
                "render",
                f"@{program}",
                "--all-steps",
                str(OUT),
                "--prefix",
                f"{name}-step",
                "--html",
                str(OUT / f"{name}.html"),
                "--table",
                "md",
                "-o",
                str(TABLES / f"{name}-table.md"),
            ],
            check=True,
        )


def on_page_markdown(markdown, page, config, files, **kwargs):
    def table(line: str) -> str:
        marker = line.strip()
        if marker.startswith("<!-- gradtrace-table:") and marker.endswith("-->"):
            name = marker[len("<!-- gradtrace-table:") : -3].strip()
            return (TABLES / f"{name}-table.md").read_text(encoding="utf-8")
        return line

    return "\n".join(table(line) for line in markdown.split("\n"))
