"""Jupyter outputs: a trace shows as the interactive stepper, over a static SVG that stays where
scripts do not run.

    from gradtrace import run                                # importing gradtrace installs it
    run("x*y + x", values={"x": 2, "y": 3})                  # the interactive stepper

The engine gives a trace its SVG and its one line of text (engine/tracing/display.py); the
stepper is the app's page (standalone.py), so the HTML is installed from here, on import.
Everything is inline and nothing is fetched. Where scripts do not run (an untrusted notebook,
GitHub, a static HTML export) the script is removed or inert and the SVG stays.

The live widget, whose engine runs in the kernel, is asked for by name: `gradtrace.widget(...)`
(gradtrace/widget.py says why a trace's own display stays this stepper).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from engine.tracing.display import Diagram, install_html, step_svg_or_message
from gradtrace.errors import ExportError
from gradtrace.files import Program
from gradtrace.script_json import json_for_script
from gradtrace.standalone import standalone_html


def notebook_html(
    trace: Mapping[str, Any],
    *,
    program: Program | None = None,
    step: int | None = None,
    lang: str = "en",
    legend: bool = True,
    collapse: bool = False,
) -> str:
    """A Jupyter HTML output: the static SVG of the step, then a script that swaps it for the
    interactive stepper in an iframe. Where scripts do not run (an untrusted notebook, a static
    viewer) the script is stripped or inert and the SVG stays; nothing is fetched either way."""
    static = step_svg_or_message(trace, step, lang=lang, legend=legend, collapse=collapse)
    page = standalone_html(
        trace,
        program=program,
        contrast=program.contrast() if program else None,
        step=step,
        lang=lang,
        collapse=collapse,
        compact=True,
    )
    key = "gt-" + hashlib.sha256(page.encode("utf-8")).hexdigest()[:16]
    script = _UPGRADE.replace("@KEY@", json_for_script(key)).replace(
        "@PAGE@", json_for_script(page)
    )
    return (
        f'<div class="gradtrace-output" data-gradtrace="{key}">'
        f'<div class="gradtrace-static" style="max-width:100%;overflow-x:auto">{static}</div>'
        f"<script>{script}</script></div>"
    )


# Finds every output of this key not yet live, puts the stepper in an iframe before the static
# drawing, and drops the drawing once the stepper has started (so a failure leaves the SVG).
_UPGRADE = """(function () {
  var KEY = @KEY@, PAGE = @PAGE@;
  var boxes = document.querySelectorAll('div.gradtrace-output[data-gradtrace="' + KEY + '"]');
  Array.prototype.forEach.call(boxes, function (box) {
    if (box.getAttribute("data-live")) return;
    box.setAttribute("data-live", "1");
    var still = box.querySelector(".gradtrace-static");
    var frame = document.createElement("iframe");
    frame.title = "gradtrace";
    frame.setAttribute("style", "display:block;width:100%;height:0;border:0");
    frame.addEventListener("load", function () {
      var win = frame.contentWindow, doc = frame.contentDocument;
      if (!win || !doc || !win.gradtrace) return;
      var fit = function () { frame.style.height = doc.documentElement.scrollHeight + "px"; };
      fit();
      if (win.ResizeObserver) new win.ResizeObserver(fit).observe(doc.body);
      if (still) still.remove();
    });
    frame.srcdoc = PAGE;
    box.insertBefore(frame, still);
  });
})();"""


def diagram_html(diagram: Diagram) -> str:
    """The HTML output of a trace or of `trace.show(...)`."""
    try:
        return notebook_html(
            diagram.data(),
            step=diagram.step,
            lang=diagram.lang,
            legend=diagram.legend,
            collapse=diagram.collapse,
        )
    except ExportError:
        # No page assets here (an installation without static/): the drawing alone.
        return f'<div class="gradtrace-output">{diagram._repr_svg_()}</div>'


install_html(diagram_html)
