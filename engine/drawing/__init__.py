"""The drawing: DOT from a trace, laid out by Graphviz, finished as SVG.

The data flows one way through its modules: the trace (steps.py) → DOT text, a pure function
(dot.py, with nodes.py and cells.py for the boxes, collapse.py for long loops) → the layout,
with every text a placeholder (geometry.py), run by Graphviz (graphviz.py, the only place it
runs, within budget.py's bounds) and cached by shape (render.py) → the SVG, tagged so a page
can restyle it for every step without a new layout (svg.py). numbers.py holds the one number
format; style.py the fonts, colours and drawing limits.

What the app, the exports and the bench use is here:
"""

from engine.drawing.collapse import AUTO_COLLAPSE_NODES, LOOP_BOX, collapse_plan, wants_collapse
from engine.drawing.dot import build, to_dot
from engine.drawing.errors import DrawError
from engine.drawing.numbers import fmt, shape_text
from engine.drawing.render import render_folded, render_svg, to_svg
from engine.drawing.steps import clamp_step, step_count
from engine.drawing.style import MAX_DRAWN_NODES
from engine.drawing.svg import finish_svg, message_svg

__all__ = [
    "AUTO_COLLAPSE_NODES",
    "LOOP_BOX",
    "MAX_DRAWN_NODES",
    "DrawError",
    "build",
    "clamp_step",
    "collapse_plan",
    "fmt",
    "finish_svg",
    "message_svg",
    "render_folded",
    "render_svg",
    "shape_text",
    "step_count",
    "to_dot",
    "to_svg",
    "wants_collapse",
]
