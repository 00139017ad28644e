"""Draw a backward trace as a Graphviz graph, micrograd style.

`to_dot(trace, step)` is a pure function of the trace JSON (docs/trace-format.md) that returns
DOT text; `to_svg(dot)` is the one place Graphviz runs; `render_svg(trace, step)` does both and
then tags the laid-out SVG so a page can restyle it for every step without a new layout.

Graphviz lays out boxes, not words: every box and label is sized here (our monospace font's
advance, in steps of ROOM_CHARS characters, with room for NUMBER_ROOM-character numbers), and
`render_svg` hands Graphviz the DOT with each text replaced by a placeholder (`_geometry`),
then puts the texts back into the SVG. So the layout never depends on how Graphviz would
measure text, and the same program with other numbers is the same layout (cached by `to_svg`).

What the drawing shows (the legend, in words):

- every trace node is ONE Graphviz node whose id is its trace id (``n0`` ...): an op cell with
  the op's symbol (op nodes only), the label and forward value, and the grad underneath;
  leaves have rounded corners, constants are small dashed boxes (class ``const``);
- every use of a value is its own edge, id ``e-<consumer>-<arg>``, labelled with the gradient
  it carries back (``← 3``);
- at a step: the node running its local backward has a thick outline and a ``▶`` before its
  label (class ``current``); the edges carrying gradient on this step are thick and bold
  (class ``active``), the ones that already carried it are thin and grey (``sent``), the ones
  still to come have no label (``future``); a grad that changed on this step is bold on a
  yellow cell with a thick border (class ``changed``). Colour is never the only signal.
- a value used more than ``COPY_FANOUT`` times is drawn once with its numbers and again as a
  small copy (class ``copy``) at each use, which keeps the layout fast and readable.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import subprocess
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

from engine.drawing import layout
from engine.limits import Limits, current_deadline

# Drawing limits. Each is a setting, not a law of nature; see the README.
MAX_DRAWN_NODES = (
    500  # trace nodes; above this the page says "too large to draw" instead of laying out
)
COPY_FANOUT = 8  # a value with more uses than this is drawn as a small copy at each use
EDGE_LABEL_LIMIT = 200  # above this many drawn nodes, edges carry no text (labels cost layout time)
SMALL_TENSOR = 16  # at most this many elements (2-d, ≤ SMALL_COLS wide): print the numbers
SMALL_COLS = 4
SMALL_VECTOR = 6  # a 1-d tensor of at most this many elements: print it as a row
HEAT_ROWS, HEAT_COLS, HEAT_CELL = 8, 16, 8  # a larger tensor: heat map of at most 8×16 cells
LABEL_CHARS = 24  # longer labels (anonymous ops are labelled by their source text) are cut
# Layouts run in two lanes, each with its own slots and Graphviz helpers: a small picture is
# never queued behind a large layout that may take its whole budget (max_layout_seconds).
MAX_CONCURRENT_LAYOUTS = 2  # large layouts at once; more callers wait (see SLOT_WAIT_BUDGETS)
SMALL_LAYOUT_LINES = 160  # DOT statements (nodes + edges) of a small layout: about 60 nodes
MAX_SMALL_LAYOUTS = 2  # small layouts at once, in their own lane
# A caller waits for a slot at most this many layout budgets: every layout holds its slot for at
# most one budget of CPU time, so about one budget of wall time on a machine that is not
# overloaded, and a waiter behind a full lane still gets its turn; else it answers "busy". (On
# an overloaded one a layout holds its slot up to its wall ceiling, layout.wall_ceiling.)
SLOT_WAIT_BUDGETS = 2.0
REMEMBERED_TIMEOUTS = 1_024  # shapes whose layout ran out of its budget (16-byte hashes)

FONT = "DejaVu Sans Mono"
FONT_SIZE = 11
EDGE_FONT_SIZE = 10
CHAR_W = 0.6021 * FONT_SIZE  # advance of one monospace character, in points
WIDE_W = 1.0 * FONT_SIZE  # a CJK (east-asian wide) character
PAD = 3  # CELLPADDING
MATRIX_PAD = 1  # CELLPADDING of a matrix's numbers
ROOM_CHARS = 3  # boxes grow in steps of this many characters (see _room)
NUMBER_ROOM = 6  # a scalar's value, grad and edge amount get room for this many characters

# One place for every colour and pen. The page's CSS uses the same classes.
STYLE: dict[str, str] = {
    "ink": "#222222",
    "muted": "#8a8a8a",
    "op_bg": "#e9ecef",
    "grad_bg": "#ffffff",
    "changed_bg": "#ffd43b",
    "active": "#d9480f",
    "sent": "#9a9a9a",
    "const": "#6c757d",
    "offpath": "#adb5bd",
}
# Fills Graphviz never chooses by itself: post-processing finds these cells by them.
_GRAD_CELL = "#fffffd"
_HEAT_CELL = "#fffffc"

_ID_RE = re.compile(r"^n[0-9]+$")
_SAFE_CLASS_RE = re.compile(r"[^A-Za-z0-9_-]")
SVG_NS = "http://www.w3.org/2000/svg"


class DrawError(Exception):
    """The graph could not be drawn: too large, Graphviz too slow, or Graphviz failed. `limit`
    names the setting that stopped it, if one did."""

    def __init__(self, message: str, code: str, limit: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.limit = limit


# --------------------------------------------------------------------------------------------
# Numbers and strings


@functools.lru_cache(maxsize=8192)
def fmt(x: float | int | None) -> str:
    """The one display precision: 4 significant digits, trailing zeros dropped, an exponent
    outside 1e-4 ≤ |x| < 1e4 (as printf's %.4g). Rounds ties away from zero on the exact
    binary value, as JavaScript's toExponential does, so static/app.js prints the same digits."""
    if x is None:
        return "—"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    ax = abs(x)
    near = f"{ax:.6e}"
    if near[5:8] != "500":
        # Not a tie, so printf's rounding (half to even) is the same as ours: C speed.
        sci = f"{ax:.3e}"
        digits, e = sci[0] + sci[2:5], int(sci[6:])
    else:  # maybe exactly halfway: round the exact binary value half away from zero
        d = Decimal(ax)
        e = d.adjusted()
        mant = d.scaleb(-e).quantize(Decimal("1.000"), rounding=ROUND_HALF_UP)
        if mant >= 10:
            mant, e = Decimal("1.000"), e + 1
        digits = str(mant).replace(".", "")  # four digits
    if -4 <= e < 4:
        if e >= 0:
            whole, frac = digits[: e + 1], digits[e + 1 :]
        else:
            whole, frac = "0", "0" * (-e - 1) + digits
        frac = frac.rstrip("0")
        return sign + whole + ("." + frac if frac else "")
    frac = digits[1:].rstrip("0")
    return f"{sign}{digits[0]}{'.' + frac if frac else ''}e{e}"


def _clean(text: str) -> str:
    """Drop control characters (a label is one line of visible text)."""
    text = str(text)
    if text.isprintable():  # no control (nor format, nor separator) characters: as it is
        return text
    return "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)


def escape_html(text: str) -> str:
    """Escape a user string for a Graphviz HTML-like label (and for XML text)."""
    return (
        _clean(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def escape_dot(text: str) -> str:
    """Escape a user string for a double-quoted DOT string (without the quotes). Backslashes
    are doubled so Graphviz's escapes (``\\N``, ``\\G``, ``\\l``) cannot fire."""
    return _clean(text).replace("\\", "\\\\").replace('"', '\\"')


def _css_class(text: str) -> str:
    return _SAFE_CLASS_RE.sub("_", str(text))[:40]


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """Width in points of `text` in the monospace font (wide characters count double)."""
    scale = size / FONT_SIZE
    if text.isascii():
        return scale * CHAR_W * len(text)
    # Nothing before U+0378 is east-Asian wide: one column each, without asking.
    wide = sum(1 for c in text if c >= "\u0378" and unicodedata.east_asian_width(c) in "WF")
    return scale * (CHAR_W * (len(text) - wide) + WIDE_W * wide)


def shorten(text: str, limit: int = LABEL_CHARS) -> str:
    text = _clean(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shape_text(shape: Sequence[int]) -> str:
    """A shape badge: ``[3]``, ``[2×3]``; a scalar has none."""
    return "[" + "×".join(str(int(s)) for s in shape) + "]" if shape else ""


# --------------------------------------------------------------------------------------------
# Reading the trace


@dataclass
class StepView:
    """What the drawing needs to know about one step: running grads and the marks."""

    index: int
    grads: dict[str, Any]  # node id -> grad after this step (running merge)
    current: str | None
    changed: set[str]
    active: set[str]  # edge ids carrying gradient on this step
    sent: set[str]  # edge ids that carried gradient on an earlier step


def edge_id(consumer: str, arg: int) -> str:
    return f"e-{consumer}-{arg}"


def step_count(trace: Mapping[str, Any]) -> int:
    return len(trace.get("steps") or [])


def clamp_step(trace: Mapping[str, Any], step: int | None) -> int:
    """`step` absent means the last; out of range clamps."""
    n = step_count(trace)
    if n == 0:
        return 0
    if step is None:
        return n - 1
    return max(0, min(int(step), n - 1))


def step_view(trace: Mapping[str, Any], step: int) -> StepView:
    steps = trace.get("steps") or []
    grads: dict[str, Any] = {}
    for node in trace["nodes"]:
        if node.get("grad") is not None:
            grads[node["id"]] = _zeros_like(node.get("shape") or [])
    sent: set[str] = set()
    active: set[str] = set()
    current = None
    changed: set[str] = set()
    for i, st in enumerate(steps[: step + 1]):
        grads.update(st.get("grads") or {})
        ids = {edge_id(st["node"], t["arg"]) for t in st.get("terms") or []}
        if i < step:
            sent |= ids
        else:
            active = ids
            current = st["node"]
            changed = set((st.get("grads") or {}).keys())
    return StepView(step, grads, current, changed, active, sent)


def _zeros_like(shape: Sequence[int]) -> Any:
    if not shape:
        return 0.0
    return np.zeros(tuple(shape)).tolist()


def edge_terms(trace: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Edge id -> the chain-rule term that edge carried (and the step it carried it on)."""
    out: dict[str, dict[str, Any]] = {}
    for i, st in enumerate(trace.get("steps") or []):
        for t in st.get("terms") or []:
            out[edge_id(st["node"], t["arg"])] = {**t, "step": i}
    return out


def grad_history(trace: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Node id -> every grad it takes over the steps (to size cells and heat-map scales)."""
    hist: dict[str, list[Any]] = {}
    for node in trace["nodes"]:
        if node.get("grad") is not None:
            hist[node["id"]] = [_zeros_like(node.get("shape") or []), node["grad"]]
    for st in trace.get("steps") or []:
        for nid, g in (st.get("grads") or {}).items():
            hist.setdefault(nid, []).append(g)
    return hist


# --------------------------------------------------------------------------------------------
# Tensors


def _as_array(v: Any) -> np.ndarray:
    return np.asarray(v if v is not None else 0.0, dtype=float)


def heat_grid(v: Any) -> np.ndarray:
    """A tensor as at most HEAT_ROWS × HEAT_COLS block means (rows = leading dims); an empty
    tensor has no blocks (0 × 0)."""
    a = _as_array(v)
    if a.size == 0:
        return np.zeros((0, 0))
    a = a.reshape(1, -1) if a.ndim <= 1 else a.reshape(-1, a.shape[-1])
    rows, cols = a.shape
    r = min(rows, HEAT_ROWS)
    c = min(cols, HEAT_COLS)
    out = np.zeros((r, c))
    rb = np.linspace(0, rows, r + 1).astype(int)
    cb = np.linspace(0, cols, c + 1).astype(int)
    for i in range(r):
        for j in range(c):
            out[i, j] = a[rb[i] : rb[i + 1], cb[j] : cb[j + 1]].mean()
    return out


def heat_colour(x: float, scale: float) -> str:
    """Diverging white-centred colour: blue for negative, red for positive."""
    t = 0.0 if scale <= 0 else max(-1.0, min(1.0, x / scale))
    target = (214, 96, 77) if t > 0 else (67, 147, 195)
    t = abs(t)
    rgb = [int(255 + (c - 255) * t + 0.5) for c in target]
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _max_abs(values: Iterable[Any]) -> float:
    m = 0.0
    for v in values:
        a = _as_array(v)
        if a.size:
            m = max(m, float(np.max(np.abs(a))))
    return m


def _is_empty(shape: Sequence[int], value: Any) -> bool:
    """A tensor without numbers. Its shape says so; its value may not tell (JSON writes
    zeros(2, 0, 3) as [[], []], a 2×0 matrix), so both are asked."""
    return math.prod(int(s) for s in shape) == 0 or _as_array(value).size == 0


def _is_small(shape: Sequence[int]) -> bool:
    """Few enough numbers to print: a vector of up to 6, a matrix of up to 4 columns."""
    if len(shape) == 1:
        return shape[0] <= SMALL_VECTOR
    return len(shape) == 2 and shape[1] <= SMALL_COLS and int(np.prod(shape)) <= SMALL_TENSOR


def _matrix(v: Any) -> list[list[float]]:
    a = _as_array(v)
    return a.reshape(1, -1).tolist() if a.ndim <= 1 else a.tolist()


# --------------------------------------------------------------------------------------------
# DOT


@dataclass
class _Layout:
    """DOT text plus what post-processing needs: per node, the role of each <text> in order."""

    dot: str
    roles: dict[str, list[str]] = field(default_factory=dict)
    heat: dict[str, list[tuple[str, list[list[str]]]]] = field(default_factory=dict)
    cells: dict[str, int] = field(default_factory=dict)  # node id -> width of a matrix cell
    geometry: str = ""  # the DOT with every text a placeholder: what Graphviz lays out
    texts: dict[str, list[str]] = field(default_factory=dict)  # group id -> its texts, in order
    drawn: int = 0


_EN = {
    "legend_current": "▶ thick outline: node running its backward",
    "legend_active": "thick arrow, bold label: gradient sent on this step",
    "legend_changed": "bold grad on yellow: changed on this step",
    "legend_sent": "grey label: sent on an earlier step",
    "step": "Step {k} of {n}",
    "seed": "seed",
}
_ZH = {
    "legend_current": "▶ 粗边框:正在执行 backward 的节点",
    "legend_active": "粗箭头、粗体数字:这一步传回的 gradient",
    "legend_changed": "黄底粗体 grad:这一步改过",
    "legend_sent": "灰色数字:之前的步骤已传回",
    "step": "第 {k} 步,共 {n} 步",
    "seed": "起点",
}


def strings(lang: str) -> dict[str, str]:
    return _ZH if lang == "zh" else _EN


def check_size(trace: Mapping[str, Any], max_nodes: int = MAX_DRAWN_NODES, hidden: int = 0) -> None:
    """Refuse to lay out more than `max_nodes` trace nodes (copies of shared values are small
    and do not count; nodes inside a collapsed loop are not drawn)."""
    n = len(trace["nodes"]) - hidden
    if n > max_nodes:
        raise DrawError(
            f"This graph has {n} nodes; the drawing stops at {max_nodes}. "
            "The steps and the table still work.",
            "too_large",
        )


def _node_id(nid: str) -> str:
    if not _ID_RE.match(nid):
        raise DrawError(f"unexpected node id {nid!r}", "bad_trace")
    return nid


def to_dot(
    trace: Mapping[str, Any],
    step: int | None = None,
    *,
    rankdir: str = "LR",
    lang: str = "en",
    legend: bool = False,
    max_nodes: int = MAX_DRAWN_NODES,
    collapse: bool = False,
) -> str:
    """DOT text for the trace. `step=None` draws the finished trace without marks (the page
    restyles it per step); an int draws that step's marks, with the same layout."""
    return _build(
        trace,
        step,
        rankdir=rankdir,
        lang=lang,
        legend=legend,
        max_nodes=max_nodes,
        collapse=collapse,
    ).dot


def _build(
    trace: Mapping[str, Any],
    step: int | None,
    *,
    rankdir: str = "LR",
    lang: str = "en",
    legend: bool = False,
    max_nodes: int = MAX_DRAWN_NODES,
    collapse: bool = False,
) -> _Layout:
    nodes = trace["nodes"]
    by_id = {n["id"]: n for n in nodes}
    topo = set(trace.get("topo") or [])
    plan = collapse_plan(trace) if collapse else None
    hidden = set(plan["members"]) if plan else set()
    check_size(trace, max_nodes, hidden=len(hidden))
    sv = step_view(trace, clamp_step(trace, step)) if step is not None else None
    terms = edge_terms(trace)
    hist = grad_history(trace)

    # The edges to draw: every use, except inside the collapsed iterations; a use that crosses
    # into or out of them runs to the loop's box instead (once per outside node).
    edges: list[tuple[str, str, str, str, int]] = []  # tail, head, edge id, source, arg
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
    uses: dict[str, int] = {}
    for tail, _, _, _, _ in edges:
        uses[tail] = uses.get(tail, 0) + 1
    drawn = len(nodes) - len(hidden) + sum(n for n in uses.values() if n > COPY_FANOUT)
    big = drawn > 100
    edge_labels = drawn <= EDGE_LABEL_LIMIT
    lay = _Layout(dot="", drawn=drawn)

    out = [
        "digraph gradtrace {",
        f'  graph [rankdir={"TB" if rankdir == "TB" else "LR"} bgcolor="white" '
        f'nodesep=0.25 ranksep=0.45 fontname="{FONT}" fontsize=10 '
        f'id="graph0" class="gradtrace"'
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
    for node in nodes:
        _node_id(node["id"])
        if node["id"] not in hidden:
            out.append("  " + _node_dot(node, sv, hist, topo, lay))
    if plan:
        out.append("  " + _loop_box_dot(plan, hidden, sv, lang, lay))
    for tail, head, eid, src, arg in edges:
        if tail != LOOP_BOX and uses.get(tail, 0) > COPY_FANOUT:
            copy_id = f"{src}-copy-{eid}"
            text = shorten(by_id.get(src, {}).get("label") or src, 12)
            lay.roles[copy_id] = ["copylabel"]
            out.append(
                f'  "{copy_id}" [id="{copy_id}" class="copy copy-of-{src}" shape=box '
                f'style="rounded,dashed" fontsize=9 height=0.2 margin="0.04,0.02" '
                f"width={_box_width(text, 9, 0.04)} label=<{escape_html(text)}>];"
            )
            tail = copy_id
        term = None if LOOP_BOX in (tail, head) else terms.get(eid)
        line = _edge_dot(
            tail, head, eid, src, arg, term, sv, edge_labels, by_id.get(src, {}).get("shape")
        )
        if LOOP_BOX in (tail, head):
            line = line.replace('class="', 'class="loop-edge ', 1)
        out.append("  " + line)
    if legend and sv is not None:
        out.append("  " + _legend_dot(trace, sv, lang))
    out.append("}")
    lay.dot = "\n".join(out) + "\n"
    lay.geometry, lay.texts = _geometry(lay.dot)
    return lay


LOOP_BOX = "loop-1"  # the id of the box that stands for the collapsed iterations
COLLAPSE_MIN_ITERATIONS = 4  # a loop of fewer iterations is never collapsed


def loop_iterations(trace: Mapping[str, Any]) -> list[list[str]]:
    """The iterations of the longest unrolled loop, found by source position: every node an
    iteration makes repeats the spans of the one before. [] when there is no loop."""
    occurrences: dict[tuple[Any, ...], list[str]] = {}
    for node in trace["nodes"]:
        span = node.get("span")
        if not span:
            continue
        key = (span.get("line"), span.get("column"), span.get("end_line"), span.get("end_column"))
        occurrences.setdefault(key, []).append(node["id"])
    sizes: dict[int, int] = {}
    for ids in occurrences.values():
        if len(ids) >= COLLAPSE_MIN_ITERATIONS:
            sizes[len(ids)] = sizes.get(len(ids), 0) + len(ids)
    if not sizes:
        return []
    count = max(sizes, key=lambda c: (sizes[c], c))
    iterations: list[list[str]] = [[] for _ in range(count)]
    for ids in occurrences.values():
        if len(ids) == count:
            for i, nid in enumerate(ids):
                iterations[i].append(nid)
    return iterations


AUTO_COLLAPSE_NODES = 200  # a loop's graph larger than this is drawn collapsed unless asked


def wants_collapse(
    trace: Mapping[str, Any], plan: Mapping[str, Any] | None, asked: bool | None
) -> bool:
    """Whether to draw the loop of `plan` collapsed: as asked (True or False), or, when not
    asked (None), if the graph has more than AUTO_COLLAPSE_NODES nodes: a long unrolled loop
    reads better as its first and last iterations, and is laid out in a fraction of the time."""
    if plan is None:
        return False
    if asked is None:
        return len(trace["nodes"]) > AUTO_COLLAPSE_NODES
    return asked


def collapse_plan(trace: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the loop's box stands for: every iteration but the first and the last."""
    its = loop_iterations(trace)
    if len(its) < COLLAPSE_MIN_ITERATIONS:
        return None
    return {
        "id": LOOP_BOX,
        "members": [nid for it in its[1:-1] for nid in it],
        "iterations": len(its),
        "collapsed": len(its) - 2,
    }


def _loop_box_dot(
    plan: Mapping[str, Any], hidden: set[str], sv: StepView | None, lang: str, lay: _Layout
) -> str:
    k, n = plan["collapsed"], len(hidden)
    text = (
        f"⋯ {k} 次迭代已折叠({n} 个节点)"
        if lang == "zh"
        else f"⋯ {k} iterations collapsed ({n} nodes)"
    )
    cls = ["collapsed"]
    if sv is not None and sv.current in hidden:
        cls.append("current")
        text = "▶ " + text
    if sv is not None and sv.changed & hidden:
        cls.append("changed")
    lay.roles[LOOP_BOX] = ["loophead"]
    pen = 3 if "current" in cls else 1.5
    return (
        f'"{LOOP_BOX}" [id="{LOOP_BOX}" class="{" ".join(cls)}" shape=box '
        f'style="rounded,dashed" penwidth={pen} margin="0.15,0.1" '
        f"width={_box_width(text, FONT_SIZE, 0.15)} label=<{escape_html(text)}>];"
    )


def _node_classes(node: Mapping[str, Any], sv: StepView | None, topo: set[str]) -> list[str]:
    cls = [node.get("kind") or "op"]
    if node.get("op"):
        cls.append("op-" + _css_class(node["op"]))
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


def _node_dot(
    node: Mapping[str, Any],
    sv: StepView | None,
    hist: Mapping[str, list[Any]],
    topo: set[str],
    lay: _Layout,
) -> str:
    nid = node["id"]
    kind = node.get("kind") or "op"
    shape = list(node.get("shape") or [])
    classes = _node_classes(node, sv, topo)
    attrs = f'id="{nid}" class="{" ".join(classes)}"'
    muted = "offpath" in classes

    if kind == "const":
        text = fmt(node["value"]) if not shape else f"const {shape_text(shape)}"
        if node.get("name"):
            text = f"{shorten(node['name'], 12)} = {text}"
        lay.roles[nid] = ["constlabel"]
        return (
            f'{nid} [{attrs} shape=box style="rounded,dashed" fontsize=9 height=0.2 '
            f'width={_box_width(text, 9, 0.05, 0.3)} margin="0.05,0.02" color="{STYLE["const"]}" '
            f'fontcolor="{STYLE["const"]}" label=<{escape_html(text)}>];'
        )

    current = "current" in classes
    changed = "changed" in classes
    label = shorten(node.get("label") or nid)
    roles: list[str] = []
    rows: list[str] = []
    grad_now = sv.grads.get(nid, node.get("grad")) if sv is not None else node.get("grad")
    has_grad = node.get("grad") is not None
    marker = "▶ " if current else ""
    n_cols = 1

    if not shape:
        head = f"{marker}{label} = {fmt(node['value'])}"
        head_w = text_width(f"▶ {label} = {_room_for(fmt(node['value']))}")
        roles.append("head")
        rows.append(_td(head, head_w, bold=current))
        if has_grad:
            gtexts = ["grad " + _room_for(fmt(g)) for g in hist.get(nid, [node["grad"]])]
            gw = max(text_width(t) for t in gtexts + [head])
            gw = max(gw, head_w)
            roles.append("grad")
            rows.append(
                _td(
                    "grad " + fmt(grad_now),
                    gw,
                    bold=changed,
                    bg=_GRAD_CELL,
                )
            )
    else:
        head = f"{marker}{label}  {shape_text(shape)}"
        roles.append("head")
        rows.append(_td(head, text_width(f"▶ {label}  {shape_text(shape)}"), bold=current))
        if _is_empty(shape, node["value"]):
            # No numbers (a 0-length axis): EMPTY where they would be. Graphviz refuses a table
            # without cells, so neither a matrix nor a heat map can stand in.
            roles += ["caption", "caption"]
            rows.append(_caption_row("data", _empty_cell()))
            n_cols = 2
            if has_grad:
                roles += ["caption", "caption"]
                rows.append(_caption_row("grad", _empty_cell(), bg=_GRAD_CELL))
        elif _is_small(shape):
            vals = _matrix(node["value"])
            cells = [fmt(x) for r in vals for x in r]
            gall = [fmt(x) for g in hist.get(nid, []) for r in _matrix(g) for x in r]
            cw = _room(max(text_width(t) for t in cells + gall + ["0"]) + 2 * PAD)
            roles.append("caption")
            roles += [f"v-{i}" for i in range(len(cells))]
            rows.append(_caption_row("data", _mini_table(vals, cw)))
            lay.cells[nid] = math.ceil(cw)
            n_cols = 2
            if has_grad:
                roles.append("caption")
                roles += [f"g-{i}" for i in range(len(cells))]
                rows.append(
                    _caption_row(
                        "grad",
                        _mini_table(_matrix(grad_now), cw, bold=changed),
                        bg=_GRAD_CELL,
                    )
                )
        else:
            vgrid = heat_grid(node["value"])
            vscale = _max_abs([node["value"]])
            roles.append("caption")
            rows.append(_caption_row("data", _heat_td(vgrid)))
            heat = [("v", _heat_colours(vgrid, vscale))]
            n_cols = 2
            if has_grad:
                ggrid = heat_grid(grad_now)
                gscale = _max_abs(hist.get(nid, []))
                roles.append("caption")
                rows.append(
                    _caption_row(
                        "grad",
                        _heat_td(ggrid),
                        bg=_GRAD_CELL,
                    )
                )
                heat.append(("g", _heat_colours(ggrid, gscale)))
            lay.heat[nid] = heat

    if n_cols == 2:
        # The head cell spans the caption column too.
        rows[0] = rows[0].replace("<TD ", '<TD COLSPAN="2" ', 1)
    op_cell = ""
    if kind == "op":
        symbol = node.get("symbol") or node.get("op") or "?"
        roles.insert(0, "op")
        symbol = shorten(symbol, 14)
        op_cell = (
            f'<TD ROWSPAN="{len(rows)}" ALIGN="LEFT" BGCOLOR="{STYLE["op_bg"]}" '
            f'CELLPADDING="{PAD + 2}" '
            f'WIDTH="{math.ceil(text_width(symbol) + 2 * (PAD + 2) + 1)}">'
            f"{_font(escape_html(symbol), bold=True)}</TD>"
        )
    table_rows = [f"<TR>{op_cell if i == 0 else ''}{r}</TR>" for i, r in enumerate(rows)]
    border = 1  # the current node's thick outline is drawn in finish_svg: same layout
    colour = STYLE["active"] if current else (STYLE["offpath"] if muted else STYLE["ink"])
    style = ' STYLE="rounded"' if kind == "leaf" else ""
    lay.roles[nid] = roles
    table = (
        f'<TABLE BORDER="{border}" COLOR="{colour}" CELLBORDER="0" '
        f'CELLSPACING="{2 if kind == "leaf" else 0}" CELLPADDING="{PAD}"{style}>'
        + "".join(table_rows)
        + "</TABLE>"
    )
    fontcolor = f' fontcolor="{STYLE["offpath"]}"' if muted else ""
    return f"{nid} [{attrs}{fontcolor} label=<{table}>];"


def _box_width(text: str, size: float, margin: float, least: float = 0.0) -> str:
    """A box's width in inches for Graphviz: the text in our font plus the side margins."""
    return f"{max(least, _room(text_width(text, size), size) / 72 + 2 * margin + 0.02):.3f}"


def _room_for(number: str) -> str:
    """A number padded to NUMBER_ROOM characters: the room a box keeps for it, so that most
    new numbers fit the box the old one had."""
    return number.ljust(NUMBER_ROOM, "0")


def _room(width: float, size: float = FONT_SIZE) -> int:
    """Room for text `width` points wide, rounded up to whole ROOM_CHARS characters: a box
    keeps its size (and the drawing its layout) when a number in it gets a digit longer."""
    quantum = ROOM_CHARS * CHAR_W * size / FONT_SIZE
    return math.ceil(math.ceil(width / quantum - 1e-9) * quantum)


def _font(text: str, bold: bool = False) -> str:
    return f"<B>{text}</B>" if bold else text


def _td(
    text: str, width: float, *, bold: bool = False, bg: str | None = None, border: int = 0
) -> str:
    extra = f' BGCOLOR="{bg}"' if bg else ""
    if border:
        extra += f' BORDER="{border}" COLOR="{STYLE["ink"]}"'
    return (
        f'<TD ALIGN="LEFT" WIDTH="{_room(width + 2 * PAD + 2)}"{extra}>'
        f"{_font(escape_html(text), bold)}</TD>"
    )


def _caption_row(caption: str, inner: str, bg: str | None = None, border: int = 0) -> str:
    extra = f' BGCOLOR="{bg}"' if bg else ""
    if border:
        extra += f' BORDER="{border}" COLOR="{STYLE["ink"]}"'
    width = math.ceil(text_width(caption, 9) + 2 * PAD + 2)
    return (
        f'<TD ALIGN="LEFT" VALIGN="MIDDLE" WIDTH="{width}">'
        f'<FONT POINT-SIZE="9" COLOR="{STYLE["muted"]}">'
        f'{caption}</FONT></TD><TD ALIGN="LEFT"{extra}>{inner}</TD>'
    )


def _mini_table(rows: list[list[float]], cell_w: float, bold: bool = False) -> str:
    body = "".join(
        "<TR>"
        + "".join(
            f'<TD ALIGN="LEFT" WIDTH="{math.ceil(cell_w)}">{_font(escape_html(fmt(x)), bold)}</TD>'
            for x in r
        )
        + "</TR>"
        for r in rows
    )
    return (
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="{MATRIX_PAD}">'
        f"{body}</TABLE>"
    )


EMPTY = "∅"  # what an empty tensor shows for its numbers


def _empty_cell() -> str:
    return f'<FONT COLOR="{STYLE["muted"]}">{EMPTY}</FONT>'


def _heat_td(grid: np.ndarray) -> str:
    r, c = grid.shape
    return (
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR>'
        f'<TD FIXEDSIZE="TRUE" WIDTH="{c * HEAT_CELL}" HEIGHT="{r * HEAT_CELL}" '
        f'BGCOLOR="{_HEAT_CELL}"></TD></TR></TABLE>'
    )


def _heat_colours(grid: np.ndarray, scale: float) -> list[list[str]]:
    return [[heat_colour(float(x), scale) for x in row] for row in grid]


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
) -> str:
    """`shape`: the source's, which an empty gradient's JSON value cannot tell in full."""
    cls = ["from-" + src, "to-" + head, f"arg-{arg}"]
    attrs = [f'id="{eid}"']
    text = ""
    if term is None:
        cls.append("nograd")
        attrs.append(f'style=dashed color="{STYLE["muted"]}"')
    else:
        cls.append(f"step-{term['step']}")
        text = "← " + _amount(term.get("contribution"), shape)
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
        room = "← " + _room_for(text[2:]) if term is not None else text
        width = _room(text_width(room, EDGE_FONT_SIZE) + 2, EDGE_FONT_SIZE)
        attrs.append(
            'label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR>'
            f'<TD ALIGN="LEFT" FIXEDSIZE="TRUE" WIDTH="{width}" '
            f'HEIGHT="{EDGE_FONT_SIZE + 3}">{_font(escape_html(text), bold=state == "active")}'
            "</TD></TR></TABLE>>"
        )
    attrs.insert(1, f'class="{" ".join(cls)}"')
    return f'"{tail}" -> "{head}" [{" ".join(attrs)}];'


def _amount(v: Any, shape: Sequence[int] | None = None) -> str:
    a = _as_array(v)
    if a.ndim == 0:
        return fmt(float(a))
    if a.size == 0 and shape and math.prod(int(s) for s in shape) == 0:
        return shape_text(shape)  # JSON writes zeros(2, 0, 3) as [[], []]: 2×0
    return shape_text(list(a.shape))


def _legend_dot(trace: Mapping[str, Any], sv: StepView, lang: str) -> str:
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


# --------------------------------------------------------------------------------------------
# Graphviz


_large_slots = threading.BoundedSemaphore(MAX_CONCURRENT_LAYOUTS)
_small_slots = threading.BoundedSemaphore(MAX_SMALL_LAYOUTS)
# The verdicts: the hash of a DOT text whose layout ran out of its budget -> that budget. Keyed
# like to_svg's cache (the DOT with placeholders for texts), so it is the graph's shape. Only a
# budget of CPU time run out is kept: that is the layout's own cost, the same at any load.
_timed_out: OrderedDict[bytes, float] = OrderedDict()
_timed_out_lock = threading.Lock()


@functools.cache
def default_layout_seconds() -> float:
    """The layout budget of a caller that names none: max_layout_seconds, with the
    environment's override (GRADTRACE_MAX_LAYOUT_SECONDS) read once."""
    return Limits().with_env().max_layout_seconds


def _shape_key(dot_text: str) -> bytes:
    return hashlib.blake2b(dot_text.encode("utf-8"), digest_size=16).digest()


def _ran_out(key: bytes, budget: float) -> bool:
    """Did a layout of this shape already run out of a budget at least as large?"""
    with _timed_out_lock:
        failed = _timed_out.get(key)
        if failed is None or budget > failed:
            return False
        _timed_out.move_to_end(key)
        return True


def _remember_ran_out(key: bytes, budget: float) -> None:
    with _timed_out_lock:
        _timed_out[key] = max(budget, _timed_out.get(key, 0.0))
        _timed_out.move_to_end(key)
        while len(_timed_out) > REMEMBERED_TIMEOUTS:
            _timed_out.popitem(last=False)


def forget_layout_timeouts() -> None:
    """Forget every remembered verdict (tests, and a budget raised at run time)."""
    with _timed_out_lock:
        _timed_out.clear()


def is_small_layout(dot_text: str) -> bool:
    """A layout for the small lane. Our DOT has one statement a line; other DOT (one line of
    `a -> b; ...`) is counted by its edges."""
    return max(dot_text.count("\n"), dot_text.count("->")) <= SMALL_LAYOUT_LINES


@functools.lru_cache(maxsize=64)
def to_svg(dot_text: str, timeout: float | None = None) -> str:
    """Lay out DOT text with Graphviz `dot -Tsvg`, bounded in time. The only Graphviz call.

    `timeout` is the layout's budget of CPU time in seconds (None: max_layout_seconds, see
    default_layout_seconds). A layout past its budget is stopped (its helper process killed) and
    its shape remembered, so the same DOT is refused at once from then on ("layout_timeout").
    Its wall-clock time is bounded too, by what is left of the request's deadline
    (max_request_seconds: "timeout") and by layout.wall_ceiling(budget) (a machine too busy to
    give it its CPU time: "busy"); neither is remembered, as neither says anything of the graph.
    Small layouts have their own slots (is_small_layout); waiting for a slot is bounded by
    SLOT_WAIT_BUDGETS budgets and the deadline, then answers "busy"."""
    budget = default_layout_seconds() if timeout is None else timeout
    deadline = current_deadline()
    key = _shape_key(dot_text)

    def out_of_budget() -> DrawError:
        return DrawError(
            f"Laying out this graph takes longer than {budget:g} s (max_layout_seconds); it is "
            "too large to draw.",
            "layout_timeout",
            "max_layout_seconds",
        )

    def out_of_request() -> DrawError:
        assert deadline is not None
        return DrawError(
            f"Laying out this graph would take longer than the {deadline.seconds:g} s a "
            f"request may take ({deadline.setting}); it is too large to draw.",
            "timeout",
            deadline.setting,
        )

    def overloaded(ceiling: float) -> DrawError:
        return DrawError(
            f"The server is too busy to lay out this graph now: in {ceiling:g} s it got less "
            f"than the {budget:g} s of computing time a layout may use (max_layout_seconds). "
            "Try again in a moment.",
            "busy",
            "max_layout_seconds",
        )

    def left() -> float:
        return math.inf if deadline is None else deadline.left()

    if _ran_out(key, budget):
        raise out_of_budget()
    if left() <= 0:
        raise out_of_request()
    slots = _small_slots if is_small_layout(dot_text) else _large_slots
    if not slots.acquire(timeout=max(min(SLOT_WAIT_BUDGETS * budget, left()), 0.0)):
        raise DrawError("The server is busy drawing other graphs; try again.", "busy")
    try:
        if _ran_out(key, budget):  # found out by another caller while this one waited
            raise out_of_budget()
        ceiling = layout.wall_ceiling(budget)
        wall = min(ceiling, left())
        if wall <= 0:
            raise out_of_request()
        try:
            # `dot -Tsvg`, in a warm helper process: a new `dot` costs ~12 ms of start-up alone.
            proc = layout.run_dot(dot_text.encode("utf-8"), timeout=budget, wall=wall)
        except layout.CpuTimeExpired as exc:  # its own cost: the graph's, whatever the load
            _remember_ran_out(key, budget)
            raise out_of_budget() from exc
        except subprocess.TimeoutExpired as exc:  # held up: says nothing of the shape
            if wall < ceiling:
                raise out_of_request() from exc
            raise overloaded(ceiling) from exc
        except OSError as exc:  # Graphviz missing
            raise DrawError("Graphviz (dot) is not available on the server.", "graphviz") from exc
    finally:
        slots.release()
    if proc.returncode != 0 or not proc.stdout:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DrawError("Graphviz failed: " + (err[-1] if err else "no output"), "graphviz")
    return proc.stdout.decode("utf-8")


_UNSAFE_ATTR_RE = re.compile(r'\s(?:[\w:-]*href|on[\w:-]*)="[^"]*"', re.IGNORECASE)


def escape_attr(text: str) -> str:
    """Escape text for an XML attribute value or text node."""
    return (
        str(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
    )


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


def finish_svg(svg: str, lay: _Layout, trace: Mapping[str, Any] | None = None) -> str:
    """Tag the laid-out SVG: ids and classes on the texts the page rewrites per step (`nX-grad`,
    `nX-head`, `nX-g-3` ...), the outline and grad cell of each node, edge labels; heat maps
    drawn into their reserved cells; future edge labels hidden. Drops Graphviz's prologue,
    comments and `<title>`s (node names) in favour of readable titles, and any attribute that
    could link out.

    Works on Graphviz's SVG as the text it is (one element a line; a node or an edge is one
    `<g>` with nothing nested in it): a streaming rewrite, faster than parsing a tree and
    writing it out again."""
    by_id = {n["id"]: n for n in (trace or {}).get("nodes", [])}
    terms = edge_terms(trace) if trace else {}  # once: per edge it made this quadratic
    lines = svg.split("\n")
    out: list[str] = []
    graph_texts: list[int] = []  # where in `out` the graph's own texts are
    i, n = 0, len(lines)
    while i < n and not lines[i].startswith("<svg"):
        i += 1  # the XML declaration, DOCTYPE and Graphviz's comments
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
                if lay.texts:
                    _put_texts(group, lay.texts.get(gid, []))
                if "node" in cls:
                    _finish_node(group, gid, cls, lay, by_id.get(gid))
                else:
                    _finish_edge(group, gid, cls, terms)
                out.extend(group)
                out.append("</g>")
                continue
        if line:
            if line.startswith("<text"):
                graph_texts.append(len(out))
            out.append(_safe(line))
    if lay.texts:  # the legend's texts: in the graph itself, outside any node
        own = [out[k] for k in graph_texts]
        _put_texts(own, lay.texts.get("graph0", []))
        for k, line in zip(graph_texts, own, strict=True):
            out[k] = line
    return "\n".join(out) + "\n"


_G_RE = re.compile(r'<g id="([^"]*)" class="([^"]*)"')
_POINT_X_RE = re.compile(r"(-?[0-9.]+),-?[0-9.]+")
_SHAPE_RE = re.compile(r' (?:d|points)="([^"]*)"')
_CENTRED = ("constlabel", "copylabel", "loophead")  # labels that are one text in a box
_X_RE = re.compile(r' x="([^"]*)"')
_POINTS_RE = re.compile(r' points="([^"]*)"')


def _retitle(group: list[str], title: str) -> None:
    for k, line in enumerate(group):
        if line.startswith("<title>"):
            group[k] = f"<title>{escape_attr(title)}</title>"
            return


def _finish_edge(
    group: list[str], gid: str, cls: list[str], terms: Mapping[str, Mapping[str, Any]]
) -> None:
    extra = f' class="elabel" id="{gid}-label"' + (
        ' visibility="hidden"' if "future" in cls else ""
    )
    for k, line in enumerate(group):
        if line.startswith("<text"):
            group[k] = _add_attrs(line, extra)
    _retitle(group, _edge_title(gid, terms))


def _edge_title(eid: str, terms: Mapping[str, Mapping[str, Any]]) -> str:
    term = terms.get(eid)
    if not term:
        return eid
    return f"{term.get('rule', '')} = {term.get('contribution')}"


def _finish_node(
    group: list[str],
    gid: str,
    cls: list[str],
    lay: _Layout,
    node: Mapping[str, Any] | None,
) -> None:
    roles = lay.roles.get(gid)
    texts = [k for k, line in enumerate(group) if line.startswith("<text")]
    if roles and len(roles) == len(texts):
        for k, role in zip(texts, roles, strict=True):
            line = group[k]
            element = role[:2] in ("v-", "g-")
            extra = f' class="{role[0] if element else role}"'
            if role != "caption":
                extra += f' id="{gid}-{role}"'
            cell = lay.cells.get(gid)
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
    shapes = [k for k, line in enumerate(group) if line.startswith(("<polygon", "<path"))]
    if roles and roles[0] in _CENTRED and shapes and len(texts) == 1:
        # A label that is only text is placed by Graphviz's guess of its width: centre it
        # on its box instead, so it sits right in our font whatever it says.
        outline = _SHAPE_RE.search(group[shapes[-1]])
        xs = [float(x) for x in _POINT_X_RE.findall(outline.group(1) if outline else "")]
        if xs:
            k = texts[0]
            x = _X_RE.search(group[k])
            if x:
                line = group[k][: x.start()] + f' x="{(min(xs) + max(xs)) / 2:.2f}"'
                line += group[k][x.end() :]
                group[k] = line.replace(' text-anchor="start"', ' text-anchor="middle"', 1)
    changed = "changed" in cls
    placeholders: list[int] = []
    for k in shapes:
        line = group[k]
        if f'fill="{_GRAD_CELL}"' in line:
            fill = STYLE["changed_bg"] if changed else STYLE["grad_bg"]
            line = line.replace(f'fill="{_GRAD_CELL}"', f'fill="{fill}"', 1)
            if changed:
                line = line.replace(
                    ' stroke="transparent"', f' stroke="{STYLE["ink"]}" stroke-width="2"', 1
                )
            group[k] = _add_attrs(line, f' class="gcell" id="{gid}-gcell"')
        elif f'fill="{_HEAT_CELL}"' in line:
            placeholders.append(k)
    last = group[shapes[-1]] if shapes else ""
    if last and ' class="' not in last and f'fill="{_HEAT_CELL}"' not in last:
        # Not the grad cell, nor a map: the outline. A step's marks change no box's size, so
        # every step of a program has one layout: the running node's thick outline and a
        # changed grad's border are strokes drawn here, not borders Graphviz makes room for.
        extra = ' class="outline"' + (' stroke-width="3"' if "current" in cls else "")
        group[shapes[-1]] = _add_attrs(last, extra)
    heat = lay.heat.get(gid) or []
    for k, (kind, colours) in zip(placeholders, heat, strict=False):
        group[k] = _heat_group(group[k], gid, kind, colours)
    if node is not None:
        _retitle(group, node_title(node))


def node_title(node: Mapping[str, Any]) -> str:
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


_LABEL_TEXT_RE = re.compile(r">([^<>]*[^<>\s][^<>]*)<")
_DOT_ID_RE = re.compile(r'\bid="([^"]*)"')
PLACEHOLDER = "x"


def _geometry(dot: str) -> tuple[str, dict[str, list[str]]]:
    """The DOT with every text in a label replaced by a placeholder, and the texts, by the id
    of the node, edge or graph they belong to, in the order Graphviz draws them.

    Every box and label is sized by us (WIDTH, FIXEDSIZE, `width`), never by its text, so
    the layout depends on the shape of the program and the size of its boxes, not on what
    they say: a new number in the same box is laid out (and cached, `to_svg`) once."""
    texts: dict[str, list[str]] = {}
    lines = dot.split("\n")
    for k, line in enumerate(lines):
        start = line.find("label=<")
        if start < 0:
            continue
        end = line.rfind(">")
        found = _DOT_ID_RE.search(line)
        gid = found.group(1) if found and not line.lstrip().startswith("graph ") else "graph0"
        own = texts.setdefault(gid, [])

        def hide(m: re.Match[str], own: list[str] = own) -> str:
            own.append(m.group(1))
            return ">" + PLACEHOLDER + "<"

        inner = line[start + len("label=<") : end]
        if not inner.startswith("<"):  # a label that is just text
            own.append(inner)
            lines[k] = line[:start] + "label=<" + PLACEHOLDER + line[end:]
            continue
        lines[k] = line[:start] + _LABEL_TEXT_RE.sub(hide, line[start:end]) + line[end:]
    return "\n".join(lines), texts


class _TextsMismatch(Exception):
    """The laid-out SVG has other texts than the DOT put in (see _geometry)."""


def _svg_text(text: str) -> str:
    """A label's text (escaped for an HTML-like label) as SVG text, as Graphviz writes it: a
    space after a space is a no-break space, so runs of spaces keep their width."""
    return re.sub(r"(?<= ) ", "&#160;", text) if "  " in text else text


def _put_texts(lines: list[str], texts: list[str] | None) -> None:
    """Put the real texts back into a group's `<text>` elements, in order."""
    if texts is None:
        return
    slots = [k for k, line in enumerate(lines) if line.startswith("<text")]
    if len(slots) != len(texts):
        raise _TextsMismatch
    for k, text in zip(slots, texts, strict=True):
        line = lines[k]
        lines[k] = line[: line.index(">") + 1] + _svg_text(text) + "</text>"


def render_svg(
    trace: Mapping[str, Any],
    step: int | None = None,
    *,
    rankdir: str = "LR",
    lang: str = "en",
    legend: bool = False,
    timeout: float | None = None,
    max_nodes: int = MAX_DRAWN_NODES,
    collapse: bool = False,
) -> str:
    """The drawing as SVG text. Raises DrawError when it cannot be drawn. `collapse` draws a
    long unrolled loop as its first and last iterations with one box between them. `timeout`
    is the layout's budget (max_layout_seconds; None: default_layout_seconds())."""
    lay = _build(
        trace,
        step,
        rankdir=rankdir,
        lang=lang,
        legend=legend,
        max_nodes=max_nodes,
        collapse=collapse,
    )
    try:
        return finish_svg(to_svg(lay.geometry or lay.dot, timeout), lay, trace)
    except _TextsMismatch:  # never seen; a drawing with the real texts is always right
        lay.texts = {}
        return finish_svg(to_svg(lay.dot, timeout), lay, trace)


def render_folded(
    trace: Mapping[str, Any],
    step: int | None,
    plan: dict[str, Any] | None,
    *,
    collapse: bool | None = None,
    **options: Any,
) -> tuple[str, dict[str, Any] | None]:
    """`render_svg` with the loop of `plan` (collapse_plan's) collapsed as `wants_collapse`
    decides, or anyway when the graph is too large to draw in full (too many nodes, or a layout
    past its budget). (SVG, the plan when the loop was drawn collapsed, else None). Raises
    DrawError as render_svg."""
    folded = wants_collapse(trace, plan, collapse)
    try:
        return render_svg(trace, step, collapse=folded, **options), plan if folded else None
    except DrawError as err:
        if err.code not in ("too_large", "layout_timeout") or folded or plan is None:
            raise
        return render_svg(trace, step, collapse=True, **options), plan


def message_svg(title: str, lines: Sequence[str] = (), *, width: int = 640) -> str:
    """A small SVG that shows a message (a broken image that says why). No Graphviz."""
    all_lines = [title, *lines]
    line_h = 20
    height = 24 + line_h * len(all_lines)
    body = []
    for i, line in enumerate(all_lines):
        weight = ' font-weight="bold"' if i == 0 else ""
        body.append(
            f'<text x="16" y="{32 + i * line_h}" xml:space="preserve"{weight}>'
            f"{escape_html(line)}</text>"
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" class="message">'
        f"<title>{escape_html(title)}</title>"
        f'<rect x="0.5" y="0.5" width="{width - 1}" height="{height - 1}" rx="6" '
        f'fill="#fff5f5" stroke="#c92a2a"/>'
        f'<g font-family="{FONT}, monospace" font-size="13" fill="#212529">'
        + "".join(body)
        + "</g></svg>"
    )
