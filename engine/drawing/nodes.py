"""One trace node as one Graphviz node: an HTML-like table of its op, label, value and grad.

Each text the table holds gets a role (``head``, ``grad``, ``v-3`` ...), in the order Graphviz
draws them, kept in the Drawing: finishing the SVG (svg.py) gives each text its id by it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from engine.drawing.cells import (
    box_width,
    caption_row,
    empty_cell,
    font,
    heat_colours,
    heat_td,
    mini_table,
    room,
    room_for,
    td,
)
from engine.drawing.numbers import fmt, shape_text
from engine.drawing.steps import StepView
from engine.drawing.style import GRAD_FILL, PAD, STYLE
from engine.drawing.tensors import heat_grid, is_empty, is_small, matrix, max_abs
from engine.drawing.text import css_class, escape_html, shorten, text_width

if TYPE_CHECKING:
    from engine.drawing.dot import Drawing

History = Mapping[str, list[Any]]  # node id -> every grad it takes over the steps
_Rows = tuple[list[str], list[str]]  # the roles of a node's texts, in order; its table rows


class _Look(NamedTuple):
    """How a node looks at the step drawn."""

    label: str
    current: bool  # running its local backward: ▶ and a bold head
    changed: bool  # its grad changed on this step: bold
    grad: Any  # its grad after this step


def _node_classes(node: Mapping[str, Any], sv: StepView | None, topo: set[str]) -> list[str]:
    """The node's classes: kind, op, tensor, off the path; at a step, current and changed."""
    cls = [node.get("kind") or "op"]
    if node.get("op"):
        cls.append("op-" + css_class(node["op"]))
    if node.get("shape"):
        cls.append("tensor")
    if node["id"] not in topo or node.get("grad") is None:
        cls.append("offpath")
    if sv is not None:
        if node["id"] == sv.current:
            cls.append("current")
        if node["id"] in sv.changed:
            cls.append("changed")
    return cls


def node_dot(
    node: Mapping[str, Any],
    sv: StepView | None,
    hist: History,
    topo: set[str],
    drawing: Drawing,
) -> str:
    """The node's DOT statement, at step `sv` (None: unmarked); its texts' roles, a matrix's
    cell width and a heat map's colours go into `drawing`."""
    nid = node["id"]
    kind = node.get("kind") or "op"
    classes = _node_classes(node, sv, topo)
    attrs = f'id="{nid}" class="{" ".join(classes)}"'
    if kind == "const":
        drawing.roles[nid] = ["constlabel"]
        return _const_dot(node, attrs)

    current = "current" in classes
    grad_now = sv.grads.get(nid, node.get("grad")) if sv is not None else node.get("grad")
    look = _Look(shorten(node.get("label") or nid), current, "changed" in classes, grad_now)
    if not node.get("shape"):
        roles, rows = _scalar_rows(node, look, hist)
    else:
        roles, rows = _tensor_rows(node, look, hist, drawing)
        # The head cell spans the caption column too.
        rows[0] = rows[0].replace("<TD ", '<TD COLSPAN="2" ', 1)
    op_cell = ""
    if kind == "op":
        roles.insert(0, "op")
        op_cell = _op_cell(node, len(rows))
    drawing.roles[nid] = roles
    muted = "offpath" in classes
    colour = STYLE["active"] if current else (STYLE["offpath"] if muted else STYLE["ink"])
    fontcolor = f' fontcolor="{STYLE["offpath"]}"' if muted else ""
    return f"{nid} [{attrs}{fontcolor} label=<{_table(kind, rows, op_cell, colour)}>];"


def _const_dot(node: Mapping[str, Any], attrs: str) -> str:
    """A constant: a small dashed box with its value (or its shape), and its name if it has
    one."""
    shape = list(node.get("shape") or [])
    text = fmt(node["value"]) if not shape else f"const {shape_text(shape)}"
    if node.get("name"):
        text = f"{shorten(node['name'], 12)} = {text}"
    return (
        f'{node["id"]} [{attrs} shape=box style="rounded,dashed" fontsize=9 height=0.2 '
        f'width={box_width(text, 9, 0.05, 0.3)} margin="0.05,0.02" color="{STYLE["const"]}" '
        f'fontcolor="{STYLE["const"]}" label=<{escape_html(text)}>];'
    )


def _scalar_rows(node: Mapping[str, Any], look: _Look, hist: History) -> _Rows:
    """`label = value` and `grad g` beneath, each cell with room for the longest number it
    takes over the steps."""
    value = fmt(node["value"])
    head = f"{'▶ ' if look.current else ''}{look.label} = {value}"
    head_w = text_width(f"▶ {look.label} = {room_for(value)}")
    roles = ["head"]
    rows = [td(head, head_w, bold=look.current)]
    if node.get("grad") is None:
        return roles, rows
    gtexts = ["grad " + room_for(fmt(g)) for g in hist.get(node["id"], [node["grad"]])]
    gw = max(text_width(t) for t in gtexts + [head])
    gw = max(gw, head_w)
    roles.append("grad")
    rows.append(td("grad " + fmt(look.grad), gw, bold=look.changed, bg=GRAD_FILL))
    return roles, rows


def _tensor_rows(node: Mapping[str, Any], look: _Look, hist: History, drawing: Drawing) -> _Rows:
    """`label  [shape]` over captioned rows for the data and the grad: the numbers of a small
    tensor, EMPTY for one without numbers, else heat maps."""
    nid = node["id"]
    shape = list(node["shape"])
    has_grad = node.get("grad") is not None
    badge = shape_text(shape)
    head = f"{'▶ ' if look.current else ''}{look.label}  {badge}"
    roles = ["head"]
    rows = [td(head, text_width(f"▶ {look.label}  {badge}"), bold=look.current)]
    if is_empty(shape, node["value"]):
        # No numbers (a 0-length axis): EMPTY where they would be. Graphviz refuses a table
        # without cells, so neither a matrix nor a heat map can stand in.
        roles += ["caption", "caption"]
        rows.append(caption_row("data", empty_cell()))
        if has_grad:
            roles += ["caption", "caption"]
            rows.append(caption_row("grad", empty_cell(), bg=GRAD_FILL))
    elif is_small(shape):
        vals = matrix(node["value"])
        cells = [fmt(x) for r in vals for x in r]
        gall = [fmt(x) for g in hist.get(nid, []) for r in matrix(g) for x in r]
        cw = room(max(text_width(t) for t in cells + gall + ["0"]) + 2 * PAD)
        roles.append("caption")
        roles += [f"v-{i}" for i in range(len(cells))]
        rows.append(caption_row("data", mini_table(vals, cw)))
        drawing.cells[nid] = math.ceil(cw)
        if has_grad:
            roles.append("caption")
            roles += [f"g-{i}" for i in range(len(cells))]
            grads = mini_table(matrix(look.grad), cw, bold=look.changed)
            rows.append(caption_row("grad", grads, bg=GRAD_FILL))
    else:
        vgrid = heat_grid(node["value"])
        roles.append("caption")
        rows.append(caption_row("data", heat_td(vgrid)))
        heat = [("v", heat_colours(vgrid, max_abs([node["value"]])))]
        if has_grad:
            ggrid = heat_grid(look.grad)
            roles.append("caption")
            rows.append(caption_row("grad", heat_td(ggrid), bg=GRAD_FILL))
            heat.append(("g", heat_colours(ggrid, max_abs(hist.get(nid, [])))))
        drawing.heat[nid] = heat
    return roles, rows


def _op_cell(node: Mapping[str, Any], n_rows: int) -> str:
    """The op's symbol, on grey, down the left of the node's rows."""
    symbol = shorten(node.get("symbol") or node.get("op") or "?", 14)
    return (
        f'<TD ROWSPAN="{n_rows}" ALIGN="LEFT" BGCOLOR="{STYLE["op_bg"]}" '
        f'CELLPADDING="{PAD + 2}" '
        f'WIDTH="{math.ceil(text_width(symbol) + 2 * (PAD + 2) + 1)}">'
        f"{font(escape_html(symbol), bold=True)}</TD>"
    )


def _table(kind: str, rows: list[str], op_cell: str, colour: str) -> str:
    """The node's table: the op cell beside the first row; a leaf has rounded corners."""
    table_rows = [f"<TR>{op_cell if i == 0 else ''}{r}</TR>" for i, r in enumerate(rows)]
    border = 1  # the current node's thick outline is drawn in finish_svg: same layout
    style = ' STYLE="rounded"' if kind == "leaf" else ""
    return (
        f'<TABLE BORDER="{border}" COLOR="{colour}" CELLBORDER="0" '
        f'CELLSPACING="{2 if kind == "leaf" else 0}" CELLPADDING="{PAD}"{style}>'
        + "".join(table_rows)
        + "</TABLE>"
    )
