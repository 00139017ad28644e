"""Finishing the laid-out SVG: ids and classes on every text and cell the page restyles per
step, heat maps drawn into their slots, readable titles, nothing that could link out; and
`message_svg`, the small picture that says why there is no drawing.

Graphviz's SVG is worked on as the text it is (one element a line; a node or an edge is one
`<g>` with nothing nested in it): a streaming rewrite, faster than parsing a tree and writing
it out again."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from engine.drawing.geometry import put_texts
from engine.drawing.numbers import shape_text
from engine.drawing.steps import edge_terms, step_count
from engine.drawing.style import FONT, GRAD_FILL, HEAT_CELL, HEAT_FILL, MATRIX_PAD, STYLE
from engine.drawing.text import escape_attr, escape_html, shorten, text_width
from engine.words import words

if TYPE_CHECKING:
    from engine.drawing.dot import Drawing

SVG_NS = "http://www.w3.org/2000/svg"
_UNSAFE_ATTR_RE = re.compile(r'\s(?:[\w:-]*href|on[\w:-]*)="[^"]*"', re.IGNORECASE)


def _safe(line: str) -> str:
    """Drop any attribute that could link out or run script (Graphviz writes none of ours,
    but the drawing is inlined into a page, so nothing is trusted)."""
    lower = line.lower()
    if "href" not in lower and " on" not in lower:
        return line
    end = line.find(">")
    if end < 0:
        return line
    return _UNSAFE_ATTR_RE.sub("", line[:end]) + line[end:]


def _add_attrs(line: str, extra: str) -> str:
    """`line` (one element as Graphviz writes it, `<tag a="..." ...`) with `extra` attributes
    (already escaped) added after the tag's name: for attributes Graphviz never writes."""
    cut = line.index(" ")
    return line[:cut] + extra + line[cut:]


def finish_svg(
    svg: str,
    drawing: Drawing,
    trace: Mapping[str, Any] | None = None,
    *,
    step: int | None = None,
    lang: str = "en",
) -> str:
    """Tag the laid-out SVG: ids and classes on the texts the page rewrites per step (`nX-grad`,
    `nX-head`, `nX-g-3` ...), the outline and grad cell of each node, edge labels; heat maps
    drawn into their reserved cells; future edge labels hidden. Drops Graphviz's prologue,
    comments and `<title>`s (node and graph names) in favour of readable titles (the whole
    picture's: svg_name of `step`, in `lang`), and any attribute that could link out."""
    by_id = {n["id"]: n for n in (trace or {}).get("nodes", [])}
    terms = edge_terms(trace) if trace else {}  # once: per edge it made this quadratic
    lines = svg.split("\n")
    out: list[str] = []
    graph_texts: list[int] = []  # where in `out` the graph's own texts are
    i, n = 0, len(lines)
    while i < n and not lines[i].startswith("<svg"):
        i += 1  # the XML declaration, DOCTYPE and Graphviz's comments
    if i < n:
        i = _open_svg(lines, i, escape_html(svg_name(trace, step, lang)), out)
    while i < n:
        line = lines[i]
        i += 1
        if line.startswith("<!--"):
            while "-->" not in line and i < n:
                line = lines[i]
                i += 1
            continue
        if line.startswith("<g "):
            # Ids and classes are ours ([A-Za-z0-9_-]); Graphviz writes `-` as `&#45;`.
            line = _safe(line.replace("&#45;", "-"))
            found = _G_RE.match(line)
            cls = found.group(2).split() if found else []
            if "node" in cls or "edge" in cls:
                assert found is not None
                group = [line]
                while i < n and not lines[i].startswith("</g>"):
                    group.append(_safe(lines[i]))
                    i += 1
                i += 1  # the group's </g>
                gid = found.group(1)
                if drawing.texts:
                    put_texts(group, drawing.texts.get(gid, []))
                if "node" in cls:
                    _finish_node(group, gid, cls, drawing, by_id.get(gid))
                else:
                    _finish_edge(group, gid, cls, terms)
                out.extend(group)
                out.append("</g>")
                continue
        if line and line != _DOT_TITLE:
            if line.startswith("<text"):
                graph_texts.append(len(out))
            out.append(_safe(line))
    if drawing.texts:  # the legend's texts: in the graph itself, outside any node
        _put_graph_texts(out, graph_texts, drawing.texts.get("graph0", []))
    return "\n".join(out) + "\n"


def _put_graph_texts(out: list[str], at: list[int], texts: list[str]) -> None:
    """The graph's own texts (the legend's), put into its lines `at` in `out`."""
    own = [out[k] for k in at]
    put_texts(own, texts)
    for k, line in zip(at, own, strict=True):
        out[k] = line


def _open_svg(lines: list[str], i: int, name: str, out: list[str]) -> int:
    """The <svg> open tag at `lines[i]`, named (role="img", aria-label, then a <title> as its
    first child), onto `out`; returns where the lines after it start. Graphviz breaks the tag
    in two."""
    line = _add_attrs(lines[i], f' role="img" aria-label="{name}"')
    i += 1
    while not line.endswith(">") and i < len(lines):
        out.append(_safe(line))
        line = lines[i]
        i += 1
    out.extend((_safe(line), f"<title>{name}</title>"))
    return i


def svg_name(trace: Mapping[str, Any] | None, step: int | None = None, lang: str = "en") -> str:
    """The drawing's accessible name: the value the program computes (`out = x*y + x`), and
    the step drawn when there is one."""
    table = words(lang)
    if not trace:
        return table["svg_name"].format(program="gradtrace")
    out = next((n for n in trace.get("nodes", []) if n["id"] == trace.get("output")), None)
    program = str((out or {}).get("label") or trace.get("output") or "gradtrace")
    if out and out.get("text") and out["text"] != program:
        program += f" = {out['text']}"
    program = shorten(program, 80)
    if step is None:
        return table["svg_name"].format(program=program)
    return table["svg_name_step"].format(program=program, k=step, n=step_count(trace) - 1)


_G_RE = re.compile(r'<g id="([^"]*)" class="([^"]*)"')
_DOT_TITLE = "<title>gradtrace</title>"  # the graph's name in DOT: _open_svg writes the real one
_POINT_X_RE = re.compile(r"(-?[0-9.]+),-?[0-9.]+")
_SHAPE_RE = re.compile(r' (?:d|points)="([^"]*)"')
_CENTRED = ("constlabel", "copylabel", "loophead")  # labels that are one text in a box
_X_RE = re.compile(r' x="([^"]*)"')
_POINTS_RE = re.compile(r' points="([^"]*)"')


def _retitle(group: list[str], title: str) -> None:
    """Replace the group's `<title>` (Graphviz's node name) with `title`."""
    for k, line in enumerate(group):
        if line.startswith("<title>"):
            group[k] = f"<title>{escape_attr(title)}</title>"
            return


def _finish_edge(
    group: list[str], gid: str, cls: list[str], terms: Mapping[str, Mapping[str, Any]]
) -> None:
    """Tag an edge's label (hidden while its gradient is still to come) and title it."""
    extra = f' class="elabel" id="{gid}-label"' + (
        ' visibility="hidden"' if "future" in cls else ""
    )
    for k, line in enumerate(group):
        if line.startswith("<text"):
            group[k] = _add_attrs(line, extra)
    _retitle(group, _edge_title(gid, terms))


def _edge_title(eid: str, terms: Mapping[str, Mapping[str, Any]]) -> str:
    """An edge's tooltip: the chain-rule term it carried."""
    term = terms.get(eid)
    if not term:
        return eid
    return f"{term.get('rule', '')} = {term.get('contribution')}"


def _finish_node(
    group: list[str],
    gid: str,
    cls: list[str],
    drawing: Drawing,
    node: Mapping[str, Any] | None,
) -> None:
    """Tag a node's texts, outline, grad cell and heat maps, and title it."""
    roles = drawing.roles.get(gid)
    texts = [k for k, line in enumerate(group) if line.startswith("<text")]
    if roles and len(roles) == len(texts):
        _tag_texts(group, texts, roles, gid, drawing.cells.get(gid))
    shapes = [k for k, line in enumerate(group) if line.startswith(("<polygon", "<path"))]
    if roles and roles[0] in _CENTRED and shapes and len(texts) == 1:
        _centre_label(group, texts[0], shapes[-1])
    placeholders = _tag_shapes(group, shapes, gid, cls)
    heat = drawing.heat.get(gid) or []
    for k, (kind, colours) in zip(placeholders, heat, strict=False):
        group[k] = _heat_group(group[k], gid, kind, colours)
    if node is not None:
        _retitle(group, node_title(node))


def _tag_texts(
    group: list[str], texts: list[int], roles: list[str], gid: str, cell: int | None
) -> None:
    """Give each of the node's texts its role's class and id (`nX-head`, `nX-g-3` ...)."""
    for k, role in zip(texts, roles, strict=True):
        line = group[k]
        element = role[:2] in ("v-", "g-")
        extra = f' class="{role[0] if element else role}"'
        if role != "caption":
            extra += f' id="{gid}-{role}"'
        if element and cell and ' text-anchor="start"' in line:
            x = _X_RE.search(line)
            if x:
                # Matrix numbers are laid out from their cell's left edge (Graphviz does
                # not measure our font) and right-aligned here: anchored at the cell's
                # right edge, so a page that rewrites them per step keeps the column.
                right = float(x.group(1)) + cell - 2 * MATRIX_PAD
                line = line[: x.start()] + f' x="{right:.2f}"' + line[x.end() :]
                line = line.replace(' text-anchor="start"', ' text-anchor="end"', 1)
        group[k] = _add_attrs(line, extra)


def _centre_label(group: list[str], text: int, outline_at: int) -> None:
    """A label that is only text is placed by Graphviz's guess of its width: centre it on its
    box instead, so it sits right in our font whatever it says."""
    outline = _SHAPE_RE.search(group[outline_at])
    xs = [float(x) for x in _POINT_X_RE.findall(outline.group(1) if outline else "")]
    if xs:
        x = _X_RE.search(group[text])
        if x:
            line = group[text][: x.start()] + f' x="{(min(xs) + max(xs)) / 2:.2f}"'
            line += group[text][x.end() :]
            group[text] = line.replace(' text-anchor="start"', ' text-anchor="middle"', 1)


def _tag_shapes(group: list[str], shapes: list[int], gid: str, cls: list[str]) -> list[int]:
    """Colour and tag the grad cell and the outline; the heat maps' slots, where they are."""
    changed = "changed" in cls
    placeholders: list[int] = []
    for k in shapes:
        line = group[k]
        if f'fill="{GRAD_FILL}"' in line:
            fill = STYLE["changed_bg"] if changed else STYLE["grad_bg"]
            line = line.replace(f'fill="{GRAD_FILL}"', f'fill="{fill}"', 1)
            if changed:
                line = line.replace(
                    ' stroke="transparent"', f' stroke="{STYLE["ink"]}" stroke-width="2"', 1
                )
            group[k] = _add_attrs(line, f' class="gcell" id="{gid}-gcell"')
        elif f'fill="{HEAT_FILL}"' in line:
            placeholders.append(k)
    last = group[shapes[-1]] if shapes else ""
    if last and ' class="' not in last and f'fill="{HEAT_FILL}"' not in last:
        # Not the grad cell, nor a map: the outline. A step's marks change no box's size, so
        # every step of a program has one layout: the running node's thick outline and a
        # changed grad's border are strokes drawn here, not borders Graphviz makes room for.
        extra = ' class="outline"' + (' stroke-width="3"' if "current" in cls else "")
        group[shapes[-1]] = _add_attrs(last, extra)
    return placeholders


def node_title(node: Mapping[str, Any]) -> str:
    """A node's tooltip: its label and source text, its shape, or its value and grad."""
    parts = [str(node.get("label") or node["id"])]
    if node.get("text") and node.get("text") != node.get("label"):
        parts[0] += f" = {node['text']}"
    shape = node.get("shape") or []
    if shape:
        parts.append("shape " + shape_text(shape))
    else:
        parts.append(f"value {node.get('value')!r}")
        if node.get("grad") is not None:
            parts.append(f"grad {node.get('grad')!r}")
    return "\n".join(parts)


def _heat_group(placeholder: str, gid: str, kind: str, colours: list[list[str]]) -> str:
    """The heat map drawn over its reserved cell (a polygon Graphviz laid out): one rect a
    block, in a group the page finds by id."""
    found = _POINTS_RE.search(placeholder)
    points = found.group(1) if found else ""
    pts = [tuple(map(float, p.split(","))) for p in points.split()]
    if not pts:
        return placeholder
    x0 = min(p[0] for p in pts)
    y0 = min(p[1] for p in pts)
    width = len(colours[0]) * HEAT_CELL + 1 if colours else 0
    parts = [
        f'<g class="heat heat-{kind}" id="{gid}-{kind}heat">',
        f'<rect x="{x0 - 0.5:g}" y="{y0 - 0.5:g}" width="{width}" '
        f'height="{len(colours) * HEAT_CELL + 1}" fill="none" stroke="{STYLE["muted"]}" '
        f'stroke-width="0.5" class="heat-frame"/>',
    ]
    k = 0
    for i, row in enumerate(colours):
        for j, colour in enumerate(row):
            parts.append(
                f'<rect x="{x0 + j * HEAT_CELL:g}" y="{y0 + i * HEAT_CELL:g}" '
                f'width="{HEAT_CELL}" height="{HEAT_CELL}" fill="{colour}" '
                f'id="{gid}-{kind}h-{k}"/>'
            )
            k += 1
    parts.append("</g>")
    return "".join(parts)


MESSAGE_FONT = 13  # the message picture's type size, in px
MESSAGE_MARGIN = 16  # px of the picture's edge left on each side of its text
MESSAGE_LINES = 16  # the most lines it shows; a longer message ends with "…"


def wrap_text(text: str, width: float, size: float = MESSAGE_FONT) -> list[str]:
    """`text` in lines that each fit `width` px in the monospace font at `size` (measured as
    the drawing measures, wide characters counting double): broken at spaces, and a word
    longer than a line (a path, a run of Chinese) broken where it reaches the edge."""
    lines: list[str] = []
    cur = ""
    for word in text.split():
        candidate = f"{cur} {word}" if cur else word
        if text_width(candidate, size) <= width:
            cur = candidate
            continue
        if cur:
            lines.append(cur)
        cur = ""
        for ch in word:  # a word of its own: as much of it as fits, then the rest
            if cur and text_width(cur + ch, size) > width:
                lines.append(cur)
                cur = ""
            cur += ch
    lines.append(cur)
    return lines


def message_svg(title: str, lines: Sequence[str] = (), *, width: int = 640) -> str:
    """A small SVG that shows a message (a broken image that says why). No Graphviz. The title
    (in bold) and each line are wrapped to the picture's width, so no word is cut off at its
    edge; the picture is as tall as its lines."""
    room = width - 2 * MESSAGE_MARGIN
    shown: list[tuple[str, bool]] = []
    for i, paragraph in enumerate([title, *lines]):
        shown += [(line, i == 0) for line in wrap_text(str(paragraph), room)]
    if len(shown) > MESSAGE_LINES:
        shown = shown[: MESSAGE_LINES - 1] + [("…", False)]
    line_h = 20
    height = 24 + line_h * len(shown)
    body = []
    for i, (line, bold) in enumerate(shown):
        weight = ' font-weight="bold"' if bold else ""
        body.append(
            f'<text x="{MESSAGE_MARGIN}" y="{32 + i * line_h}" xml:space="preserve"{weight}>'
            f"{escape_html(line)}</text>"
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" class="message">'
        f"<title>{escape_html(title)}</title>"
        f'<rect x="0.5" y="0.5" width="{width - 1}" height="{height - 1}" rx="6" '
        f'fill="#fff5f5" stroke="#c92a2a"/>'
        f'<g font-family="{FONT}, monospace" font-size="{MESSAGE_FONT}" fill="#212529">'
        + "".join(body)
        + "</g></svg>"
    )
