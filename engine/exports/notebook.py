"""Jupyter display: a traced program, the last expression of a cell, shows as the stepper.

    from engine import run
    run("x*y + x", values={"x": 2, "y": 3})                  # the interactive stepper
    run("x*y + x", values={"x": 2, "y": 3}).show(step=1, lang="zh")

`Trace` (engine/tracing/record.py) takes these methods from `NotebookDisplay`; Jupyter asks for them:
- `_repr_html_`: the static SVG of the step, then a script that swaps it for the interactive
  stepper (drawing, controls, table, explanations, both languages) in an iframe. Everything is
  inline and nothing is fetched. Where scripts do not run (an untrusted notebook, GitHub, a
  static HTML export) the script is removed or inert and the SVG stays.
- `_repr_svg_`: the same step as SVG, for renderers that take images only.
- `__repr__`, `_repr_pretty_`: one line of text (the output, sizes, grads), not every node.

Nothing here runs when `engine` is imported: the drawing code is loaded on first display.
"""

from __future__ import annotations

from typing import Any


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

    def _data(self) -> dict[str, Any]:
        data: dict[str, Any] = self.trace.to_dict()
        return data

    def _repr_svg_(self) -> str:
        from engine.drawing import draw
        from engine.exports import files as export

        try:
            svg = export.step_svg(
                self._data(), self.step, lang=self.lang, legend=self.legend, collapse=self.collapse
            )
        except export.ExportError as err:
            return draw.message_svg("gradtrace", [str(err)])
        return svg.removeprefix(export.XML_DECLARATION).strip()

    def _repr_html_(self) -> str:
        from engine.exports import files as export

        try:
            return export.notebook_html(
                self._data(),
                step=self.step,
                lang=self.lang,
                legend=self.legend,
                collapse=self.collapse,
            )
        except export.ExportError:
            # No page assets here (an installation without static/): the drawing alone.
            return f'<div class="gradtrace-output">{self._repr_svg_()}</div>'

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

    def _repr_html_(self) -> str:
        return Diagram(self)._repr_html_()

    def _repr_svg_(self) -> str:
        return Diagram(self)._repr_svg_()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(summary_text(self))

    def __repr__(self) -> str:
        return summary_text(self)


def summary_text(trace: Any) -> str:
    """`<Trace out = 8: 4 nodes, 3 steps; x.grad = 4, y.grad = 2>` (grads of up to 6 leaves)."""
    from engine.drawing.draw import fmt

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
