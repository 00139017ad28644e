"""The per-step grad table (engine/tracing/table.py) as Markdown or HTML, in the page's words.

One row per step, one column per node that gets a grad; the cells a step changed are bold. The
cells read as the page's table shows them (4 significant digits, a large tensor by its shape).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine import drawing as draw
from engine.tracing.table import grad_table
from engine.words import words


def _word(lang: str, key: str, **params: str) -> str:
    text = words(lang).get(key) or words("en")[key]
    return re.sub(r"\{(\w+)\}", lambda m: params.get(m.group(1), m.group(0)), text)


def cell_text(value: Any) -> str:
    """A grad as the page's table shows it: 4 significant digits; a tensor of at most four
    numbers in full, a larger one as its shape and first numbers."""
    if value is None:
        return "—"
    if not isinstance(value, list):
        return draw.fmt(value)
    array = np.asarray(value, dtype=float)
    shape = list(array.shape)
    flat = [float(x) for x in array.ravel()]
    if len(flat) <= 4:
        return "[" + ", ".join(draw.fmt(x) for x in flat) + "]"
    return draw.shape_text(shape) + " " + ", ".join(draw.fmt(x) for x in flat[:3]) + ", …"


@dataclass(frozen=True)
class TableRow:
    """One step's row: what ran and every column's cell."""

    step: int
    what: tuple[str, str, str]  # (template key, node label, op symbol)
    cells: list[tuple[str, bool]]  # (text, changed in this step)


def table_rows(trace: Mapping[str, Any]) -> tuple[list[str], list[TableRow]]:
    """Column labels (nodes that get a grad, in creation order, as `gradtrace trace` prints
    them) and one row per step."""
    columns, rows = grad_table(dict(trace))
    by_id = {n["id"]: n for n in trace["nodes"]}
    out = []
    for row in rows:
        node = by_id[row.node]
        if row.step == 0:
            key = "seed_row_ones" if trace.get("seeded_with_ones") else "seed_row"
        else:
            key = "backward_row"
        what = (key, str(node["label"]), str(node.get("symbol") or node.get("op") or ""))
        cells = [(cell_text(row.grads[c["id"]]), c["id"] in row.changed) for c in columns]
        out.append(TableRow(row.step, what, cells))
    return [f"{c['label']}.grad" for c in columns], out


def _md_code(text: str) -> str:
    text = text.replace("`", "'").replace("|", "\\|")
    return f"`{text}`"


def table_markdown(trace: Mapping[str, Any], *, lang: str = "en") -> str:
    """The per-step grad table as a Markdown (GFM) table; changed cells in bold."""
    heads, rows = table_rows(trace)
    lines = [
        "| " + " | ".join([_word(lang, "step_col")] + [_md_code(h) for h in heads]) + " |",
        "|:--" + "|--:" * len(heads) + "|",
    ]
    for r in rows:
        key, label, op = r.what
        what = _word(lang, key, node=_md_code(label), op=_md_code(op)).replace("|", "\\|")
        cells = [f"**{t}**" if changed else t for t, changed in r.cells]
        lines.append("| " + " | ".join([f"{r.step} · {what}"] + cells) + " |")
    return "\n".join(lines) + "\n"


def table_html(trace: Mapping[str, Any], *, lang: str = "en", step: int | None = None) -> str:
    """The per-step grad table as an HTML fragment (`<table class="gradtrace-table">`). Changed
    cells are bold with class `changed`; with `step`, that row has aria-current="step"."""
    heads, rows = table_rows(trace)
    e = html.escape
    current = draw.clamp_step(trace, step) if step is not None else None
    lang_attr = "zh-CN" if lang == "zh" else "en"
    out = [f'<table class="gradtrace-table" lang="{lang_attr}">']
    out.append(f"<caption>{e(_word(lang, 'grad_table_caption'))}</caption>")
    out.append(
        '<thead><tr><th scope="col">'
        + e(_word(lang, "step_col"))
        + "</th>"
        + "".join(f'<th scope="col"><code>{e(h)}</code></th>' for h in heads)
        + "</tr></thead>"
    )
    out.append("<tbody>")
    for r in rows:
        key, label, op = r.what
        what = _word(lang, key, node=label, op=op)
        mark = ' aria-current="step"' if r.step == current else ""
        tds = "".join(
            f'<td class="changed"><b>{e(t)}</b></td>' if changed else f"<td>{e(t)}</td>"
            for t, changed in r.cells
        )
        out.append(f'<tr{mark}><th scope="row">{r.step} · {e(what)}</th>{tds}</tr>')
    out.append("</tbody></table>")
    return "\n".join(out) + "\n"
