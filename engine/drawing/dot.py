"""Trace → DOT text, a pure function of the trace JSON (docs/trace-format.md).

`to_dot(trace, step)` is the DOT; `build(trace, step)` is the Drawing: the DOT plus what
finishing the laid-out SVG needs (svg.py), and the same DOT with every text a placeholder,
which is what Graphviz lays out (geometry.py). `step=None` draws the finished trace without
marks (the page restyles it per step); an int draws that step's marks, with the same layout.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from engine.drawing.cells import box_width, font, room, room_for
from engine.drawing.collapse import LOOP_BOX, collapse_plan
from engine.drawing.errors import DrawError
from engine.drawing.geometry import without_texts
from engine.drawing.nodes import node_dot
from engine.drawing.numbers import fmt, shape_text
from engine.drawing.steps import (
    StepView,
    clamp_step,
    edge_id,
    edge_terms,
    grad_history,
    step_count,
    step_view,
)
from engine.drawing.style import (
    COPY_FANOUT,
    EDGE_FONT_SIZE,
    EDGE_LABEL_LIMIT,
    FONT,
    FONT_SIZE,
    MAX_DRAWN_NODES,
    STYLE,
)
from engine.drawing.tensors import as_array
from engine.drawing.text import escape_html, shorten, text_width
from engine.words import words

_ID_RE = re.compile(r"^n[0-9]+$")


@dataclass
class Drawing:
    """DOT text plus what post-processing needs: per node, the role of each <text> in order."""

    dot: str
    roles: dict[str, list[str]] = field(default_factory=dict)
    heat: dict[str, list[tuple[str, list[list[str]]]]] = field(default_factory=dict)
    cells: dict[str, int] = field(default_factory=dict)  # node id -> width of a matrix cell
    geometry: str = ""  # the DOT with every text a placeholder: what Graphviz lays out
    texts: dict[str, list[str]] = field(default_factory=dict)  # group id -> its texts, in order
    drawn: int = 0


@functools.lru_cache(maxsize=4)
def strings(lang: str) -> Mapping[str, str]:
    """The drawing's words in `lang` (``zh``, else English): engine/words' `svg_…` keys, picked
    out once per language (every drawing asks)."""
    table = words(lang)
    picked = {key[len("svg_") :]: text for key, text in table.items() if key.startswith("svg_")}
    return MappingProxyType(picked)


def check_size(trace: Mapping[str, Any], max_nodes: int = MAX_DRAWN_NODES, hidden: int = 0) -> None:
    """Refuse to lay out more than `max_nodes` trace nodes (copies of shared values are small
    and do not count; nodes inside a collapsed loop are not drawn)."""
    n = len(trace["nodes"]) - hidden
    if n > max_nodes:
        raise DrawError("limit_max_drawn_nodes", "too_large", "max_drawn_nodes", n=n, max=max_nodes)


def _node_id(nid: str) -> str:
    """`nid`, refused unless it is a trace id (``n12``): ids reach DOT and SVG unquoted."""
    if not _ID_RE.match(nid):
        raise DrawError("bad_node_id", "bad_trace", id=repr(nid)[:40])
    return nid


def to_dot(trace: Mapping[str, Any], step: int | None = None, **options: Any) -> str:
    """DOT text for the trace. `step=None` draws the finished trace without marks (the page
    restyles it per step); an int draws that step's marks, with the same layout. `options` are
    build's: rankdir, lang, legend, max_nodes, collapse."""
    return build(trace, step, **options).dot


# An edge to draw: tail, head, edge id, source node, argument index.
_Edge = tuple[str, str, str, str, int]


def build(
    trace: Mapping[str, Any],
    step: int | None = None,
    *,
    rankdir: str = "LR",
    lang: str = "en",
    legend: bool = False,
    max_nodes: int = MAX_DRAWN_NODES,
    collapse: bool = False,
) -> Drawing:
    """The Drawing of the trace (to_dot's DOT and what finishing its SVG needs). `rankdir`:
    ``LR`` or ``TB``; `lang`: the legend's (and the loop box's) language; `legend`: a legend
    of the marks under a step's drawing; `max_nodes`: refuse more (DrawError "too_large");
    `collapse`: a long unrolled loop drawn as its first and last iterations and one box."""
    nodes = trace["nodes"]
    by_id = {n["id"]: n for n in nodes}
    topo = set(trace.get("topo") or [])
    plan = collapse_plan(trace) if collapse else None
    hidden = set(plan["members"]) if plan else set()
    check_size(trace, max_nodes, hidden=len(hidden))
    sv = step_view(trace, clamp_step(trace, step)) if step is not None else None
    terms = edge_terms(trace)
    hist = grad_history(trace)
    edges = _edges(nodes, hidden)
    uses: dict[str, int] = {}
    for tail, _, _, _, _ in edges:
        uses[tail] = uses.get(tail, 0) + 1
    drawn = len(nodes) - len(hidden) + sum(n for n in uses.values() if n > COPY_FANOUT)
    drawing = Drawing(dot="", drawn=drawn)
    out = _graph_header(rankdir, drawn)
    for node in nodes:
        _node_id(node["id"])
        if node["id"] not in hidden:
            out.append("  " + node_dot(node, sv, hist, topo, drawing))
    if plan:
        out.append("  " + _loop_box_dot(plan, hidden, sv, lang, drawing))
    edge_labels = drawn <= EDGE_LABEL_LIMIT
    arrow = "↑" if rankdir == "TB" else "←"  # the way a gradient goes back: left, or up
    for tail, head, eid, src, arg in edges:
        if tail != LOOP_BOX and uses.get(tail, 0) > COPY_FANOUT:
            tail = f"{src}-copy-{eid}"
            out.append("  " + _copy_dot(tail, src, by_id.get(src, {}), drawing))
        term = None if LOOP_BOX in (tail, head) else terms.get(eid)
        shape = by_id.get(src, {}).get("shape")
        line = _edge_dot(tail, head, eid, src, arg, term, sv, edge_labels, shape, arrow=arrow)
        if LOOP_BOX in (tail, head):
            line = line.replace('class="', 'class="loop-edge ', 1)
        out.append("  " + line)
    if legend and sv is not None:
        out.append("  " + _legend_dot(trace, sv, lang))
    out.append("}")
    drawing.dot = "\n".join(out) + "\n"
    drawing.geometry, drawing.texts = without_texts(drawing.dot)
    return drawing


def _edges(nodes: Sequence[Mapping[str, Any]], hidden: set[str]) -> list[_Edge]:
    """The edges to draw: every use, except inside the collapsed iterations; a use that crosses
    into or out of them runs to the loop's box instead (once per outside node)."""
    edges: list[_Edge] = []
    seen_box_edges: set[tuple[str, str]] = set()
    for node in nodes:
        for arg, src in enumerate(node.get("inputs") or []):
            _node_id(src)
            tail = LOOP_BOX if src in hidden else src
            head = LOOP_BOX if node["id"] in hidden else node["id"]
            if tail == head == LOOP_BOX:
                continue
            if LOOP_BOX in (tail, head):
                if (tail, head) in seen_box_edges:
                    continue
                seen_box_edges.add((tail, head))
            edges.append((tail, head, edge_id(node["id"], arg), src, arg))
    return edges


def _graph_header(rankdir: str, drawn: int) -> list[str]:
    """The digraph's first lines: the graph's, every node's and every edge's defaults. Top to
    bottom is packed tighter (its edge labels sit beside the edges, not in the ranks' gaps)
    and says so in its class, which the page reads to know the direction on show."""
    big = drawn > 100
    tb = rankdir == "TB"
    spacing = "nodesep=0.18 ranksep=0.25" if tb else "nodesep=0.25 ranksep=0.45"
    return [
        "digraph gradtrace {",
        f'  graph [rankdir={"TB" if tb else "LR"} bgcolor="white" '
        f'{spacing} fontname="{FONT}" fontsize=10 '
        f'id="graph0" class="{"gradtrace tb" if tb else "gradtrace"}"'
        + (
            # Crossing minimisation is what a large, densely shared graph spends its time on
            # (a 500-node one: 5.5 s at mclimit=0.5, under 3 s at 0.05).
            f" nslimit=1 nslimit1=1 mclimit={0.05 if drawn > 250 else 0.5} searchsize=10"
            if big
            else " nslimit=4 mclimit=2"
        )
        + "];",
        f'  node [shape=plaintext fontname="{FONT}" fontsize={FONT_SIZE} '
        f'fontcolor="{STYLE["ink"]}" margin=0];',
        f'  edge [fontname="{FONT}" fontsize={EDGE_FONT_SIZE} color="{STYLE["ink"]}" '
        "arrowsize=0.7];",
    ]


def _copy_dot(copy_id: str, src: str, node: Mapping[str, Any], drawing: Drawing) -> str:
    """A small copy of a heavily shared value, drawn at one of its uses."""
    text = shorten(node.get("label") or src, 12)
    drawing.roles[copy_id] = ["copylabel"]
    return (
        f'"{copy_id}" [id="{copy_id}" class="copy copy-of-{src}" shape=box '
        f'style="rounded,dashed" fontsize=9 height=0.2 margin="0.04,0.02" '
        f"width={box_width(text, 9, 0.04)} label=<{escape_html(text)}>];"
    )


def _loop_box_dot(
    plan: Mapping[str, Any], hidden: set[str], sv: StepView | None, lang: str, drawing: Drawing
) -> str:
    """The box that stands for the collapsed iterations, marked when one of them runs."""
    k, n = plan["collapsed"], len(hidden)
    text = strings(lang)["loop_collapsed"].format(k=k, n=n)
    cls = ["collapsed"]
    if sv is not None and sv.current in hidden:
        cls.append("current")
        text = "▶ " + text
    if sv is not None and sv.changed & hidden:
        cls.append("changed")
    drawing.roles[LOOP_BOX] = ["loophead"]
    pen = 3 if "current" in cls else 1.5
    return (
        f'"{LOOP_BOX}" [id="{LOOP_BOX}" class="{" ".join(cls)}" shape=box '
        f'style="rounded,dashed" penwidth={pen} margin="0.15,0.1" '
        f"width={box_width(text, FONT_SIZE, 0.15)} label=<{escape_html(text)}>];"
    )


def _edge_dot(
    tail: str,
    head: str,
    eid: str,
    src: str,
    arg: int,
    term: Mapping[str, Any] | None,
    sv: StepView | None,
    with_label: bool,
    shape: Sequence[int] | None = None,
    arrow: str = "←",
) -> str:
    """`shape`: the source's, which an empty gradient's JSON value cannot tell in full.
    `arrow`: the way the gradient goes back along the edge, to its input (← when inputs are on
    the left, ↑ when they are on top)."""
    cls = ["from-" + src, "to-" + head, f"arg-{arg}"]
    attrs = [f'id="{eid}"']
    text = ""
    if term is None:
        cls.append("nograd")
        attrs.append(f'style=dashed color="{STYLE["muted"]}"')
    else:
        cls.append(f"step-{term['step']}")
        text = f"{arrow} " + _amount(term.get("contribution"), shape)
    state = ""
    if sv is not None and term is not None:
        if eid in sv.active:
            state = "active"
            attrs.append(f'penwidth=3 color="{STYLE["active"]}" fontcolor="{STYLE["active"]}"')
        elif eid in sv.sent:
            state = "sent"
            attrs.append(f'color="{STYLE["sent"]}" fontcolor="{STYLE["sent"]}"')
        else:
            state = "future"
        cls.append(state)
    if text and with_label:
        # A cell of the label's own size: Graphviz's layout reserves exactly that room.
        roomy = f"{arrow} " + room_for(text[2:]) if term is not None else text
        width = room(text_width(roomy, EDGE_FONT_SIZE) + 2, EDGE_FONT_SIZE)
        attrs.append(
            'label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR>'
            f'<TD ALIGN="LEFT" FIXEDSIZE="TRUE" WIDTH="{width}" '
            f'HEIGHT="{EDGE_FONT_SIZE + 3}">{font(escape_html(text), bold=state == "active")}'
            "</TD></TR></TABLE>>"
        )
    attrs.insert(1, f'class="{" ".join(cls)}"')
    return f'"{tail}" -> "{head}" [{" ".join(attrs)}];'


def _amount(v: Any, shape: Sequence[int] | None = None) -> str:
    """An edge's label: the gradient it carries, or a tensor's shape."""
    a = as_array(v)
    if a.ndim == 0:
        return fmt(float(a))
    if a.size == 0 and shape and math.prod(int(s) for s in shape) == 0:
        return shape_text(shape)  # JSON writes zeros(2, 0, 3) as [[], []]: 2×0
    return shape_text(list(a.shape))


def _legend_dot(trace: Mapping[str, Any], sv: StepView, lang: str) -> str:
    """The legend of the marks, under the graph: the same size at every step."""
    s = strings(lang)
    n = step_count(trace) - 1
    title = s["step"].format(k=sv.index, n=n)
    longest = s["step"].format(k=n, n=n)  # the same room at every step: the same layout
    texts = [longest, s["legend_current"], s["legend_active"], s["legend_changed"]]
    texts.append(s["legend_sent"])
    width = math.ceil(max(text_width(t, EDGE_FONT_SIZE) for t in texts)) + 6
    cell = f'<TD ALIGN="LEFT" WIDTH="{width}"'
    rows = [
        f"<TR>{cell}><B>{escape_html(title)}</B></TD></TR>",
        f"<TR>{cell}>{escape_html(s['legend_current'])}</TD></TR>",
        f'<TR>{cell}><FONT COLOR="{STYLE["active"]}"><B>'
        f"{escape_html(s['legend_active'])}</B></FONT></TD></TR>",
        f'<TR>{cell} BGCOLOR="{STYLE["changed_bg"]}"><B>'
        f"{escape_html(s['legend_changed'])}</B></TD></TR>",
        f'<TR>{cell}><FONT COLOR="{STYLE["sent"]}">'
        f"{escape_html(s['legend_sent'])}</FONT></TD></TR>",
    ]
    table = (
        '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">'
        + "".join(rows)
        + "</TABLE>"
    )
    return f"graph [labelloc=b labeljust=l fontsize=10 label=<{table}>];"
