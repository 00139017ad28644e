"""Files for course notes, slides and notebooks, made without a server.

- `step_svg(trace, k)`: step k as a standalone SVG file (the picture GET /api/svg answers);
- `svg_to_png(svg, scale)`: that SVG as PNG, drawn by librsvg's `rsvg-convert`;
- `all_steps(trace, directory)`: every step as numbered files;
- `table_markdown(trace)`, `table_html(trace)`: the per-step grad table;
- `standalone_html(trace, ...)`: the whole interactive stepper (drawing, controls, table,
  explanations, both languages) in one HTML file that opens from disk with no network;
- `notebook_html(trace)`: the stepper for a Jupyter output, over a static SVG that stays where
  scripts do not run.

Stable output: the same program and options give the same bytes on the same installation.
Nothing here writes a time, a random id or a path; Graphviz lays out the same DOT text the same
way; a PNG keeps only the chunks that describe its pixels (no tIME, no text). `write_if_changed`
leaves a file alone (and its mtime) when the bytes are the same, so docs builds do not churn.

The standalone page is the page itself: templates/ and static/ beside this package, rendered
with Jinja2 (imported only here, when a page is asked for: `import engine` stays light).
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import shutil
import struct
import subprocess
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from engine.drawing import draw
from engine.errors import ProgramError
from engine.program import run
from engine.tracing.table import grad_table

ROOT = Path(__file__).resolve().parents[1]
# A checkout (or an editable install) has these beside engine/; GRADTRACE_ASSETS points
# elsewhere (a folder holding static/ and templates/) for any other installation.
ASSETS = Path(os.environ.get("GRADTRACE_ASSETS") or ROOT)

RSVG = "rsvg-convert"  # Debian: librsvg2-bin; macOS: brew install librsvg
PNG_TIMEOUT = 60.0  # seconds for one rsvg-convert run
MAX_PNG_SIDE = 16000  # pixels; cairo's own limit is 32767
PNG_KEEP = {
    b"IHDR",
    b"PLTE",
    b"tRNS",
    b"gAMA",
    b"cHRM",
    b"sRGB",
    b"iCCP",
    b"pHYs",
    b"IDAT",
    b"IEND",
}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
FORMATS = ("svg", "png")
PX_PER_UNIT = {"pt": 96 / 72, "px": 1.0, "": 1.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4}


class ExportError(Exception):
    """An export could not be made: no PNG renderer, a drawing too large, assets missing."""


@dataclass(frozen=True)
class Program:
    """A program and the options it runs with: everything its trace depends on."""

    source: str
    values: Mapping[str, Any] = field(default_factory=dict)
    accumulate: str = "add"
    order: str = "dfs"

    def trace(self) -> dict[str, Any]:
        """The trace JSON (docs/trace-format.md). Raises ProgramError."""
        return run(self.source, dict(self.values), self.accumulate, self.order).to_dict()

    def contrast(self) -> dict[str, Any] | None:
        """What the other accumulation gives (the page's last table row), or None."""
        other = "assign" if self.accumulate == "add" else "add"
        try:
            alt = run(self.source, dict(self.values), other, self.order).to_dict()
        except ProgramError:
            return None
        grads = {n["id"]: n["grad"] for n in alt["nodes"] if n.get("grad") is not None}
        return {"accumulate": other, "grads": grads}


# --------------------------------------------------------------------------------------------
# Files on disk


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` unless the file already holds exactly it. True when written."""
    path = Path(path)
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return True


# --------------------------------------------------------------------------------------------
# Drawings


def drawing(
    trace: Mapping[str, Any],
    step: int | None,
    *,
    lang: str = "en",
    legend: bool = True,
    rankdir: str = "LR",
    collapse: bool = False,
) -> tuple[str, dict[str, Any] | None]:
    """(SVG text, the collapsed loop's plan or None). `step=None` is the page's unmarked layout.
    A loop too large to draw in full is collapsed without being asked, as the app does."""
    plan = draw.collapse_plan(trace)
    try:
        return draw.render_folded(
            trace, step, plan, collapse=collapse, lang=lang, legend=legend, rankdir=rankdir
        )
    except draw.DrawError as err:
        raise ExportError(err.message) from None


def step_svg(
    trace: Mapping[str, Any],
    step: int | None = None,
    *,
    lang: str = "en",
    legend: bool = True,
    rankdir: str = "LR",
    collapse: bool = False,
) -> str:
    """Step `step` (None: the last; out of range clamps) as the text of an .svg file."""
    k = draw.clamp_step(trace, step)
    svg, _ = drawing(trace, k, lang=lang, legend=legend, rankdir=rankdir, collapse=collapse)
    return XML_DECLARATION + svg + "\n"


def svg_pixel_size(svg: str) -> tuple[float, float]:
    """The SVG's width and height in CSS pixels (Graphviz writes points: 1pt = 4/3 px)."""
    m = re.search(r"<svg\b[^>]*>", svg)
    if not m:
        raise ExportError("not an SVG document")
    tag = m.group(0)

    def length(name: str) -> float:
        a = re.search(rf'\s{name}="([0-9.]+)\s*([a-z]*)"', tag)
        if not a or a.group(2) not in PX_PER_UNIT:
            raise ExportError(f"the SVG has no usable {name}")
        return float(a.group(1)) * PX_PER_UNIT[a.group(2)]

    return length("width"), length("height")


def png_size(svg: str, scale: float = 2.0) -> tuple[int, int]:
    """The PNG's size in pixels: the SVG's CSS-pixel size times `scale`, rounded up."""
    w, h = svg_pixel_size(svg)
    # A hair below the next integer is float noise, not a pixel.
    return math.ceil(w * scale - 1e-6), math.ceil(h * scale - 1e-6)


def svg_to_png(svg: str, scale: float = 2.0, timeout: float = PNG_TIMEOUT) -> bytes:
    """Render an SVG to PNG bytes with rsvg-convert, at `scale` pixels per CSS pixel, on white.
    The PNG keeps no time stamp or text, so the same SVG gives the same bytes."""
    if not (0 < scale <= 16):
        raise ExportError(f"scale must be between 0 and 16, not {scale:g}")
    exe = shutil.which(RSVG)
    if exe is None:
        raise ExportError(
            "PNG export needs rsvg-convert (Debian/Ubuntu: apt-get install librsvg2-bin; "
            "macOS: brew install librsvg). SVG export works without it."
        )
    w, h = png_size(svg, scale)
    if max(w, h) > MAX_PNG_SIDE:
        raise ExportError(
            f"the PNG would be {w}×{h} pixels (at most {MAX_PNG_SIDE} a side): use a smaller "
            "--scale, or SVG"
        )
    cmd = [exe, "--format", "png", "--width", str(w), "--height", str(h)]
    cmd += ["--background-color", "white"]
    try:
        proc = subprocess.run(
            cmd, input=svg.encode("utf-8"), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise ExportError(f"rsvg-convert took longer than {timeout:g} s") from None
    if proc.returncode != 0 or not proc.stdout.startswith(PNG_SIGNATURE):
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ExportError("rsvg-convert failed: " + (err[-1] if err else "no output"))
    return clean_png(proc.stdout)


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, body) of every chunk of a PNG file."""
    if not data.startswith(PNG_SIGNATURE):
        raise ExportError("not a PNG file")
    out, i = [], len(PNG_SIGNATURE)
    while i + 8 <= len(data):
        (n,) = struct.unpack(">I", data[i : i + 4])
        kind = data[i + 4 : i + 8]
        out.append((kind, data[i + 8 : i + 8 + n]))
        i += 12 + n
        if kind == b"IEND":
            break
    return out


def clean_png(data: bytes) -> bytes:
    """The same image without ancillary chunks that could hold a date or a path."""
    out = [PNG_SIGNATURE]
    for kind, body in png_chunks(data):
        if kind in PNG_KEEP:
            crc = struct.pack(">I", _crc32(kind + body))
            out.append(struct.pack(">I", len(body)) + kind + body + crc)
    return b"".join(out)


def _crc32(data: bytes) -> int:
    import zlib

    return zlib.crc32(data) & 0xFFFFFFFF


def read_png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR."""
    kind, body = png_chunks(data)[0]
    if kind != b"IHDR":
        raise ExportError("a PNG starts with IHDR")
    w, h = struct.unpack(">II", body[:8])
    return int(w), int(h)


def step_image(
    trace: Mapping[str, Any],
    step: int | None,
    fmt: str = "svg",
    *,
    scale: float = 2.0,
    **draw_options: Any,
) -> bytes:
    """Step `step` as the bytes of an .svg or .png file."""
    svg = step_svg(trace, step, **draw_options)
    if fmt == "svg":
        return svg.encode("utf-8")
    if fmt == "png":
        return svg_to_png(svg, scale)
    raise ExportError(f"format is svg or png, not {fmt!r}")


def step_file_name(prefix: str, k: int, last: int, fmt: str) -> str:
    """`step-03.svg`: zero-padded so the files sort in step order (at least two digits)."""
    return f"{prefix}-{k:0{max(2, len(str(last)))}d}.{fmt}"


def all_steps(
    trace: Mapping[str, Any],
    directory: Path,
    fmt: str = "svg",
    *,
    prefix: str = "step",
    scale: float = 2.0,
    on_progress: Callable[[int, int], None] | None = None,
    workers: int = 2,
    **draw_options: Any,
) -> list[Path]:
    """Every step as `directory/step-00.svg` … (or .png). Numbered files of the same pattern
    left over from a longer program are removed, so the folder holds exactly this program."""
    if fmt not in FORMATS:
        raise ExportError(f"format is svg or png, not {fmt!r}")
    if not re.fullmatch(r"[A-Za-z0-9._-]+", prefix):
        raise ExportError("the file prefix may hold only letters, digits, '.', '_' and '-'")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    n = max(1, draw.step_count(trace))
    paths = [directory / step_file_name(prefix, k, n - 1, fmt) for k in range(n)]
    done = 0
    if on_progress:
        on_progress(0, n)

    def one(k: int) -> None:
        write_if_changed(paths[k], step_image(trace, k, fmt, scale=scale, **draw_options))

    # Each step is its own `dot` (and rsvg-convert) process: two at a time use both cores.
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for fut in [pool.submit(one, k) for k in range(n)]:
            fut.result()
            done += 1
            if on_progress:
                on_progress(done, n)
    keep = {p.name for p in paths}
    pattern = re.compile(rf"{re.escape(prefix)}-[0-9]+\.{fmt}")
    for old in directory.iterdir():
        if pattern.fullmatch(old.name) and old.name not in keep and old.is_file():
            old.unlink()
    return paths


# --------------------------------------------------------------------------------------------
# The grad table


@lru_cache(maxsize=1)
def page_strings() -> dict[str, dict[str, str]]:
    """The page's words in every language (static/i18n.json); English table words without it."""
    try:
        data: dict[str, dict[str, str]] = json.loads(
            (ASSETS / "static" / "i18n.json").read_text("utf-8")
        )
        return data
    except OSError:
        return {"en": dict(_TABLE_WORDS)}


_TABLE_WORDS = {
    "step_col": "Step",
    "seed_row": "seed {node}.grad = 1",
    "seed_row_ones": "seed {node}.grad = ones",
    "backward_row": "{node}._backward() ({op})",
    "grad_table_caption": "One row per step, one column per grad; bold cells changed in that step.",
}


def _word(lang: str, key: str, **params: str) -> str:
    words = page_strings()
    text = words.get(lang, {}).get(key) or words.get("en", {}).get(key) or _TABLE_WORDS[key]
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


# --------------------------------------------------------------------------------------------
# The standalone stepper


def _asset(*parts: str) -> Path:
    path = ASSETS.joinpath(*parts)
    if not path.is_file():
        raise ExportError(
            f"the standalone page needs {Path(*parts)} from gradtrace's source tree; run from a "
            "checkout (scripts/setup installs one), or set GRADTRACE_ASSETS to a folder that "
            "holds static/ and templates/"
        )
    return path


@lru_cache(maxsize=1)
def _environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    _asset("templates", "standalone.html")
    return Environment(
        loader=FileSystemLoader(str(ASSETS / "templates")),
        autoescape=select_autoescape(["html"]),
        keep_trailing_newline=True,
    )


def json_for_script(data: Any) -> str:
    """JSON that is safe inside <script>: no `</`, no `<!--`, no line separators."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, esc)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _inline(text: str, tag: str) -> str:
    """Static text to put inside <script> or <style>: no early end tag, no comment opener."""
    return re.sub(rf"</(?={tag})", r"<\\/", text, flags=re.I).replace("<!--", "<\\!--")


def standalone_html(
    trace: Mapping[str, Any],
    *,
    program: Program | None = None,
    contrast: Mapping[str, Any] | None = None,
    step: int | None = None,
    lang: str = "en",
    collapse: bool = False,
    compact: bool = False,
    title: str | None = None,
) -> str:
    """The interactive stepper in one HTML file: the page's CSS, JS, words (both languages),
    the trace and its drawing are all inline; nothing is fetched, so it opens from disk or in a
    notebook's iframe. Editing is off (there is no server to re-run a program); stepping, the
    table, the explanations and the language switch all work. `compact` is the notebook form:
    no header, the height follows the drawing."""
    from markupsafe import Markup

    lang = "zh" if lang == "zh" else "en"
    strings = page_strings()
    t = strings.get(lang) or strings["en"]
    n_steps = max(0, draw.step_count(trace) - 1)
    k = draw.clamp_step(trace, step)
    svg: str | None = None
    draw_error = None
    plan = None
    try:
        svg, plan = drawing(trace, None, lang=lang, legend=False, collapse=collapse)
    except ExportError as err:
        draw_error = {"message": str(err), "code": "too_large"}
    source = program.source if program else ""
    options = trace.get("options") or {}
    accumulate, order = options.get("accumulate", "add"), options.get("order", "dfs")
    state: dict[str, Any] = {
        "version": 1,
        "embed": False,
        "standalone": True,
        "fit": "content" if compact else None,
        "query": {
            "source": source,
            "values": dict(program.values) if program else {},
            "accumulate": accumulate,
            "order": order,
            "step": k,
            "fwd": None,
            "lang": lang,
            "present": False,
            "collapse": bool(collapse),
        },
        "trace": trace,
        "contrast": contrast,
        "error": None,
        "draw_error": draw_error,
        "collapsible": draw.collapse_plan(trace) is not None,
        "collapsed": plan,
        "examples": [],
        "strings": strings,
    }
    values = program.values if program else {}
    values_text = ", ".join(f"{name} = {_value_text(v)}" for name, v in values.items())
    context = {
        "t": t,
        "lang": lang,
        "compact": compact,
        "title": title or (t.get("title", "gradtrace")),
        "css": Markup(_inline(_asset("static", "app.css").read_text("utf-8"), "style")),
        "js": Markup(_inline(_asset("static", "app.js").read_text("utf-8"), "script")),
        "state_json": Markup(json_for_script(state)),
        "svg": svg,  # from engine.drawing.draw: escaped there, safe to inline
        "draw_error": draw_error,
        "source": source,
        "values_text": values_text,
        "accumulate": accumulate,
        "order": order,
        "step": k,
        "n_steps": n_steps,
        "step_label": t.get("step_of", "Step {k} of {n}").format(k=k, n=n_steps),
    }
    page: str = _environment().get_template("standalone.html").render(**context)
    return page


def _value_text(v: Any) -> str:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))
    return json.dumps(v)


# --------------------------------------------------------------------------------------------
# Notebooks


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
    try:
        static = step_svg(trace, step, lang=lang, legend=legend, collapse=collapse)
        static = static.removeprefix(XML_DECLARATION).strip()
    except ExportError as err:
        static = draw.message_svg("gradtrace", [str(err)])
    page = standalone_html(
        trace,
        program=program,
        contrast=program.contrast() if program else None,
        step=step,
        lang=lang,
        collapse=collapse,
        compact=True,
    )
    import hashlib

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
