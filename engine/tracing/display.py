"""How a trace shows itself in Jupyter: one line of text, the step as SVG, and the stepper.

    from gradtrace import run                                # installs the stepper
    run("x*y + x", values={"x": 2, "y": 3})                  # the interactive stepper
    run("x*y + x", values={"x": 2, "y": 3}).show(step=1, lang="zh")

`Trace` (engine/tracing/record.py) takes these methods from `NotebookDisplay`; Jupyter asks for
them:
- `_repr_svg_`: the step as SVG, drawn by engine.drawing, for renderers that take images only.
- `_repr_html_`: the interactive stepper (drawing, controls, table, explanations, both
  languages), when a package outside the engine has installed one with `install_html`
  (`gradtrace.notebook` does, on import): the stepper is the app's page, and the engine never
  reads templates or scripts. Without one, None: Jupyter shows the SVG.
- `__repr__`, `_repr_pretty_`: one line of text (the output, sizes, grads), not every node.

Nothing here runs when `engine` is imported: the drawing code is loaded on first display.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# The HTML form of a Diagram, installed from outside the engine (a list: set once, read often).
_HTML_VIEW: list[Callable[[Diagram], str]] = []


def install_html(view: Callable[[Diagram], str]) -> None:
    """Make `view(diagram)` the HTML every trace and diagram shows in Jupyter."""
    _HTML_VIEW[:] = [view]


class Diagram:
    """A trace as Jupyter shows it, at one step and in one language."""

    def __init__(
        self,
        trace: Any,
        step: int | None = None,
        *,
        lang: str = "en",
        legend: bool = True,
        collapse: bool = False,
    ) -> None:
        self.trace = trace
        self.step = step
        self.lang = "zh" if lang == "zh" else "en"
        self.legend = legend
        self.collapse = collapse

    def data(self) -> dict[str, Any]:
        """The trace's JSON (docs/trace-format.md)."""
        data: dict[str, Any] = self.trace.to_dict()
        return data

    def _repr_svg_(self) -> str:
        return step_svg_or_message(
            self.data(), self.step, lang=self.lang, legend=self.legend, collapse=self.collapse
        )

    def _repr_html_(self) -> str | None:
        return _HTML_VIEW[0](self) if _HTML_VIEW else None

    def __repr__(self) -> str:
        return f"<gradtrace diagram, step {self.step if self.step is not None else 'last'}>"


class NotebookDisplay:
    """Jupyter's display methods for a trace (mixed into engine.tracing.record.Trace)."""

    def show(
        self,
        step: int | None = None,
        *,
        lang: str = "en",
        legend: bool = True,
        collapse: bool = False,
    ) -> Diagram:
        """The stepper opened at `step` (None: the last), in English or Chinese ("zh")."""
        return Diagram(self, step, lang=lang, legend=legend, collapse=collapse)

    def _repr_html_(self) -> str | None:
        return Diagram(self)._repr_html_()

    def _repr_svg_(self) -> str:
        return Diagram(self)._repr_svg_()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(summary_text(self))

    def __repr__(self) -> str:
        return summary_text(self)


def step_svg_or_message(
    data: Mapping[str, Any], step: int | None, *, lang: str, legend: bool, collapse: bool
) -> str:
    """Step `step` of a trace's JSON (None: the last) as SVG text, or a small SVG that says why
    it cannot be drawn (too large, no Graphviz): a notebook output is never an exception."""
    from engine import drawing as draw

    k = draw.clamp_step(data, step)
    try:
        svg, _ = draw.render_folded(
            data,
            k,
            draw.collapse_plan(data),
            collapse=collapse,
            lang=lang,
            legend=legend,
            rankdir="LR",
        )
    except draw.DrawError as err:
        return draw.message_svg("gradtrace", [err.message])
    return svg.strip()


def summary_text(trace: Any) -> str:
    """`<Trace out = 8: 4 nodes, 3 steps; x.grad = 4, y.grad = 2>` (grads of up to 6 leaves)."""
    from engine.drawing import fmt

    data = trace.to_dict()
    out = next((n for n in data["nodes"] if n["id"] == data["output"]), None)
    label = out["label"] if out else data["output"]
    value = (
        fmt(data["value"])
        if not data.get("shape")
        else "[" + "×".join(str(s) for s in data["shape"]) + "]"
    )
    grads = [
        f"{k}.grad = {fmt(v) if not isinstance(v, list) else '[…]'}"
        for k, v in list(data["grads"].items())[:6]
    ]
    more = ", …" if len(data["grads"]) > 6 else ""
    text = f"<Trace {label} = {value}: {len(data['nodes'])} nodes, {len(data['steps'])} steps"
    return text + ("; " + ", ".join(grads) + more if grads else "") + ">"
