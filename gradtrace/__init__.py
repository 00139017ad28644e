"""What authors import: the command line, files for notes and slides, notebook displays.

    from gradtrace import run
    run("x*y + x", values={"x": 2, "y": 3})      # in Jupyter: the interactive stepper
    widget("x*y + x", values={"x": 2, "y": 3})   # the live widget: the engine in the kernel

- `gradtrace.cli`: the `gradtrace` command (`trace`, `render`);
- `gradtrace.files`: a step as SVG or PNG, every step as numbered files;
- `gradtrace.tables`: the per-step grad table as Markdown or HTML;
- `gradtrace.standalone`: the interactive stepper in one HTML file;
- `gradtrace.notebook`: the stepper as a Jupyter output (installed when gradtrace is imported);
- `gradtrace.widget(...)`: the live notebook widget (anywidget, imported only when one is made);
- `gradtrace.figure`: a directive's or fence's figures, named by content and stamped with
  `gradtrace.__version__` and Graphviz's (gradtrace.version), for `gradtrace.sphinx` (the
  Sphinx and MyST directive) and `gradtrace.mkdocs` (the MkDocs plugin).

Nothing here is the engine: `engine/` computes traces and never imports this package.
"""

from engine.program import run
from gradtrace import notebook as _notebook  # noqa: F401 (installs the Jupyter stepper)
from gradtrace.version import __version__
from gradtrace.widget import widget  # the function; its module stays gradtrace.widget

__all__ = ["__version__", "run", "widget"]
