"""The live notebook widget: an anywidget whose traits the kernel and the front end share.

The engine runs here, in the kernel. Setting `program`, `values`, `accumulate` or `order` runs
the program again (engine.program.run, under the engine's limits) and sends the new trace and
its frames (gradtrace/widget_frames.py); `lang`, `legend` and `collapse` draw it again. `step`
goes both ways: the front end's buttons, slider and keys set it, and so may Python
(`w.step = 3`). A program that cannot run sets `error` (message, line, column), which the
widget shows; nothing raises. Importing this module needs anywidget (gradtrace[notebook]).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from engine import drawing as draw
from engine.errors import ProgramError
from engine.program import run
from engine.words.messages import translate_error
from gradtrace import widget_frames as wf
from gradtrace.tables import cell_text

HERE = Path(__file__).resolve().parent


def plain_values(values: Any) -> dict[str, Any]:
    """`values` as JSON the front end can hold: NumPy arrays and scalars become lists and
    floats; anything that is not a number or a nested list of numbers is refused by name."""
    if not isinstance(values, dict):
        raise traitlets.TraitError(f"values must be a dict of name -> value, not {values!r}")
    out = {}
    for name, value in values.items():
        v = value.tolist() if hasattr(value, "tolist") else value
        try:
            json.dumps(v, allow_nan=False)
        except (TypeError, ValueError):
            raise traitlets.TraitError(
                f"the value for {name!r} must be a number or a nested list of numbers, "
                f"not {value!r}"
            ) from None
        out[str(name)] = v
    return out


class GradtraceWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """A program's backward pass, stepped in a live notebook (`gradtrace.widget(...)`)."""

    _esm = HERE / "widget.js"
    _css = HERE / "widget.css"

    # What runs: set any of these from Python and the kernel runs the program again.
    program = traitlets.Unicode("").tag(sync=True)
    values = traitlets.Dict().tag(sync=True)
    accumulate = traitlets.Enum(("add", "assign"), "add").tag(sync=True)
    order = traitlets.Enum(("dfs", "kahn"), "dfs").tag(sync=True)
    # How it is drawn.
    lang = traitlets.Enum(("en", "zh"), "en").tag(sync=True)
    legend = traitlets.Bool(True).tag(sync=True)
    collapse = traitlets.Bool(False).tag(sync=True)
    # The step on show: both ways. Out of range clamps; negative counts from the end.
    step = traitlets.Int(0).tag(sync=True)
    # What the kernel sends (read them; setting them does nothing useful).
    trace = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    error = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    n_steps = traitlets.Int(0).tag(sync=True)
    columns = traitlets.List(traitlets.Dict()).tag(sync=True)
    frames = traitlets.List(traitlets.Dict()).tag(sync=True)  # every step, while they fit
    frame = traitlets.Dict().tag(sync=True)  # else the step on show only
    rev = traitlets.Int(0).tag(sync=True)  # which drawing the frames belong to
    words = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        program: str = "",
        *,
        values: dict[str, Any] | None = None,
        step: int | None = None,
        accumulate: str = "add",
        order: str = "dfs",
        lang: str = "en",
        legend: bool = True,
        collapse: bool = False,
        **kwargs: Any,
    ) -> None:
        self._ran: tuple[str, ...] | None = None
        self._data: dict[str, Any] | None = None
        self._error: dict[str, Any] | None = None
        self._redrawing = False
        super().__init__(
            program=program,
            values=dict(values or {}),
            accumulate=accumulate,
            order=order,
            lang="zh" if lang == "zh" else "en",
            legend=legend,
            collapse=collapse,
            **kwargs,
        )
        self._rerun()
        self.step = self.n_steps - 1 if step is None else step

    @traitlets.validate("values")
    def _plain(self, proposal: Any) -> dict[str, Any]:
        return plain_values(proposal["value"])

    @traitlets.validate("step")
    def _clamp(self, proposal: Any) -> int:
        k, n = int(proposal["value"]), self.n_steps
        if k < 0:
            k += n
        return max(0, min(k, n - 1)) if n else 0

    @traitlets.observe("program", "values", "accumulate", "order")
    def _on_program(self, change: Any) -> None:
        self._rerun()

    @traitlets.observe("lang", "legend", "collapse")
    def _on_look(self, change: Any) -> None:
        self._redraw()

    @traitlets.observe("step")
    def _on_step(self, change: Any) -> None:
        if self._data is not None and not self.frames and not self._redrawing:
            self.frame = self._frame_at(self.step)

    def _options(self) -> dict[str, Any]:
        return {"lang": self.lang, "legend": self.legend, "collapse": self.collapse}

    def _frame_at(self, k: int) -> dict[str, Any]:
        assert self._data is not None
        return {**wf.frame(self._data, k, **self._options()), "rev": self.rev}

    def _rerun(self) -> None:
        """Run the program again if what it depends on changed (not otherwise: setting several
        traits under `hold_trait_notifications()` runs it once)."""
        key = (self.program, json.dumps(self.values, sort_keys=True), self.accumulate, self.order)
        if key == self._ran:
            return
        self._ran = key
        try:
            self._data = run(self.program, dict(self.values), self.accumulate, self.order).to_dict()
            self._error = None
        except ProgramError as err:
            self._data, self._error = None, err.to_dict()["error"]
        self._redraw()

    def _redraw(self) -> None:
        """Send the trace (or the error) and the frames, in one message."""
        if self._ran is None:
            return  # still in __init__: the first run sends everything
        with self.hold_sync():
            self.rev += 1
            self.words = {**wf.ui_words(self.lang), "step_of": wf.word(self.lang, "step_of")}
            if self._data is None:
                error = translate_error(self._error or {}, self.lang)
                self.set_trait("trace", None)
                self.columns, self.frames, self.frame = [], [], {}
                self.n_steps = 0
                self.step = 0
                self.error = {**error, "text": wf.error_text(error, self.lang)}
                return
            data = self._data
            self.set_trait("error", None)
            self.columns = wf.columns(data)
            self.n_steps = draw.step_count(data)
            frames = wf.frames(data, **self._options())
            self.frames = [{**f, "rev": self.rev} for f in frames] if frames else []
            self._redrawing = True  # the frame on show is sent below, once
            try:
                self.step = self.step  # clamped to the new range
            finally:
                self._redrawing = False
            self.frame = {} if frames else self._frame_at(self.step)
            self.trace = data

    def current_frame(self) -> dict[str, Any] | None:
        """The frame of the step on show (None when the program cannot run)."""
        if self._data is None:
            return None
        return self.frames[self.step] if self.frames else self._frame_at(self.step)

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """anywidget's view, with the step on show as HTML and SVG beside it (no script): what
        a viewer without widgets shows, and what a saved notebook keeps of it."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        one = self.current_frame()
        data = {**data, "text/html": wf.fallback_html(one, self.columns, self.lang, self.error)}
        if one is not None:
            data["image/svg+xml"] = one["svg"]
        return data, metadata

    def __repr__(self) -> str:
        if self._data is None:
            return f"<gradtrace widget: {wf.error_text(self.error or {'message': '?'}, 'en')}>"
        grads = ", ".join(
            f"{k}.grad = {cell_text(v)}" for k, v in list(self._data["grads"].items())[:6]
        )
        last = max(0, self.n_steps - 1)
        return f"<gradtrace widget, step {self.step} of {last}" + (f"; {grads}>" if grads else ">")
