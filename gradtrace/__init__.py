"""What authors import: the command line, files for notes and slides, notebook displays.

    from gradtrace import run
    run("x*y + x", values={"x": 2, "y": 3})      # in Jupyter: the interactive stepper

- `gradtrace.cli`: the `gradtrace` command (`trace`, `render`);
- `gradtrace.files`: a step as SVG or PNG, every step as numbered files;
- `gradtrace.tables`: the per-step grad table as Markdown or HTML;
- `gradtrace.standalone`: the interactive stepper in one HTML file;
- `gradtrace.notebook`: the stepper as a Jupyter output (installed when gradtrace is imported).

Nothing here is the engine: `engine/` computes traces and never imports this package.
"""

from engine.program import run
from gradtrace import notebook as _notebook  # noqa: F401 (installs the Jupyter stepper)

__all__ = ["run"]
