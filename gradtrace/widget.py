"""`gradtrace.widget(program, ...)`: a program's backward pass as a live notebook widget.

    import gradtrace
    w = gradtrace.widget("x*y + x", values={"x": 2, "y": 3})
    w                      # step with the buttons, the slider or the arrow keys
    w.step = 1             # or from Python; w.step reads what the reader chose
    w.values = {"x": 5, "y": 3}   # runs again in the kernel and redraws

The widget is an anywidget (gradtrace/widget_model.py, its front end widget.js), so it runs
wherever Jupyter widgets do (JupyterLab, Notebook 7, VS Code, Colab); where they do not (GitHub,
a static export) the output shows the step as a static SVG. anywidget is optional
(`pip install 'gradtrace[notebook]'`): it is imported when a widget is made, never by
`import gradtrace`.

Why `gradtrace.run(...)` still shows the stepper HTML and not the widget: whether a front end
runs widgets cannot be told from the kernel (a kernel serves JupyterLab, nbconvert and VS Code
alike), and an output meant for a widget that never loads shows an error where the stepper
would have worked. The stepper HTML needs only scripts, and its SVG stays where even those do
not run. The widget is asked for by name: the engine lives in the kernel, so a reader can change
the values from Python and see the new trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gradtrace.widget_model import GradtraceWidget


def widget(
    program: str,
    values: dict[str, Any] | None = None,
    *,
    step: int | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    lang: str = "en",
    legend: bool = True,
    collapse: bool = False,
) -> GradtraceWidget:
    """The live stepper of `program` at `step` (None: the last; negative counts from the end).
    Its traits (`program`, `values`, `step`, `accumulate`, `order`, `lang`, `collapse`) can be
    set later; `trace` is the trace JSON (docs/trace-format.md) and `error` the program's error
    (message, line, column) when it cannot run. Needs anywidget."""
    try:
        from gradtrace.widget_model import GradtraceWidget
    except ImportError as err:
        if err.name not in ("anywidget", "ipywidgets", "traitlets"):
            raise
        raise ImportError(
            "gradtrace.widget needs anywidget: pip install 'gradtrace[notebook]' "
            f"(missing: {err.name})"
        ) from err
    return GradtraceWidget(
        program,
        values=values,
        step=step,
        accumulate=accumulate,
        order=order,
        lang=lang,
        legend=legend,
        collapse=collapse,
    )
