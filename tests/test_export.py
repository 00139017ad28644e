"""`gradtrace render`: every export's content, the standalone page opened from disk in Chromium
with no network, PNG sizes, and byte-identical repeats."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from gradtrace import png as png_export
from gradtrace import tables
from gradtrace.cli import main
from gradtrace.files import Program

SVG = "{http://www.w3.org/2000/svg}"
LESSON = ["x*y + x", "--values", "x=2,y=3"]
# Grads after each step of the lesson, by label: the lesson's Figure 2.
LESSON_GRADS = [
    {"x": 0, "y": 0, "x*y": 0, "out": 1},
    {"x": 1, "y": 0, "x*y": 1, "out": 1},
    {"x": 4, "y": 2, "x*y": 1, "out": 1},
]
NEURON = (
    "# one neuron\nx1 = 2.0\nx2 = 0.0\nw1 = -3.0\nw2 = 1.0\nb = 6.8813735870195432\n"
    "n = x1*w1 + x2*w2 + b\no = tanh(n)\n"
)
SOFTMAX = "W = randn(3, 4)\nx = randn(4)\nz = W @ x\nL = cross_entropy(z, 2)"
RNN = (
    "Wh = randn(3, 3)\nWx = randn(3, 2)\nxs = randn(6, 2)\nh = zeros(3)\n"
    "for t in range(6):\n    h = tanh(Wh @ h + Wx @ xs[t])\nL = h.sum()"
)

needs_rsvg = pytest.mark.skipif(
    shutil.which("rsvg-convert") is None and not os.environ.get("CI"),
    reason="rsvg-convert is not installed (scripts/setup installs librsvg2-bin)",
)


def render(*args: str) -> int:
    return main(["render", *args])


def svg_texts(path: Path) -> dict[str, str]:
    """Text of every <text> with an id (`n0-grad`, `n0-head`, …), from a file that must parse."""
    root = ET.parse(path).getroot()
    assert root.tag == SVG + "svg"
    return {t.get("id", ""): "".join(t.itertext()) for t in root.iter(SVG + "text") if t.get("id")}


def node_classes(path: Path) -> dict[str, list[str]]:
    root = ET.parse(path).getroot()
    return {
        g.get("id", ""): (g.get("class") or "").split()
        for g in root.iter(SVG + "g")
        if "node" in (g.get("class") or "").split()
    }


def all_text(path: Path) -> str:
    return " ".join("".join(t.itertext()) for t in ET.parse(path).getroot().iter(SVG + "text"))


# ---- one step as SVG -----------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, 1, 2])
def test_a_step_as_svg_parses_and_shows_that_steps_grads(tmp_path: Path, k: int) -> None:
    out = tmp_path / "deep" / f"s{k}.svg"  # folders are made as needed
    assert render(*LESSON, "--step", str(k), "-o", str(out)) == 0
    assert out.read_text("utf-8").startswith('<?xml version="1.0" encoding="UTF-8"?>\n<svg')
    texts = svg_texts(out)
    ids = {"x": "n0", "y": "n1", "x*y": "n2", "out": "n3"}
    for label, grad in LESSON_GRADS[k].items():
        assert texts[f"{ids[label]}-grad"] == f"grad {grad}"
    assert texts["n2-head"].endswith("x*y = 6") and texts["n3-head"].endswith("out = 8")
    running = "n3" if k < 2 else "n2"
    assert "current" in node_classes(out)[running]
    assert texts[f"{running}-head"].startswith("▶ ")
    assert f"Step {k} of 2" in all_text(out)  # the legend


def test_the_legend_speaks_chinese_and_the_default_is_the_last_step(tmp_path: Path) -> None:
    out = tmp_path / "zh.svg"
    assert render(*LESSON, "--lang", "zh", "-o", str(out)) == 0
    assert "第 2 步,共 2 步" in all_text(out)
    plain = tmp_path / "plain.svg"
    assert render(*LESSON, "--no-legend", "--step", "99", "-o", str(plain)) == 0
    assert "Step" not in all_text(plain) and svg_texts(plain)["n0-grad"] == "grad 4"


def test_svg_goes_to_stdout_without_o(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert render("x*x", "--values", "x=3", "--step", "1") == 0
    out = capsysbinary.readouterr().out
    root = ET.fromstring(out)
    assert root.tag == SVG + "svg" and b"grad 6" in out


def test_tensor_programs_and_a_collapsed_loop_draw(tmp_path: Path) -> None:
    soft = tmp_path / "soft.svg"
    assert render(SOFTMAX, "--step", "1", "-o", str(soft)) == 0
    assert "cross_entropy" in all_text(soft) or "L" in svg_texts(soft)["n5-head"]
    rnn = tmp_path / "rnn.svg"
    assert render(RNN, "--collapse", "-o", str(rnn)) == 0
    assert "iterations collapsed" in all_text(rnn)


# ---- PNG ------------------------------------------------------------------------------------


@needs_rsvg
@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_png_has_the_svgs_size_times_the_scale_and_no_dates(tmp_path: Path, scale: float) -> None:
    svg, png = tmp_path / "s.svg", tmp_path / "s.png"
    assert render(*LESSON, "--step", "1", "-o", str(svg)) == 0
    assert render(*LESSON, "--step", "1", "-o", str(png), "--scale", str(scale)) == 0
    data = png.read_bytes()
    size = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg.read_text())
    assert size is not None
    width_pt, height_pt = (float(v) for v in size.groups())
    w, h = png_export.read_png_size(data)
    # 1pt = 4/3 CSS px; the PNG has `scale` pixels per CSS px, rounded up.
    assert (w, h) == (math.ceil(width_pt * 4 / 3 * scale), math.ceil(height_pt * 4 / 3 * scale))
    assert w > 300 * scale
    kinds = {kind for kind, _ in png_export.png_chunks(data)}
    assert kinds <= png_export.PNG_KEEP and not kinds & {b"tIME", b"tEXt", b"zTXt", b"iTXt"}


def test_png_export_says_what_to_install_when_rsvg_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(png_export, "RSVG", "no-such-rsvg-convert")
    assert render(*LESSON, "-o", str(tmp_path / "s.png")) == 1
    assert "librsvg2-bin" in capsys.readouterr().err
    assert not (tmp_path / "s.png").exists()


def test_png_chunks_with_dates_are_dropped() -> None:
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00\x00")
    dated = png_export.PNG_SIGNATURE + b"".join(
        [
            chunk(b"IHDR", ihdr),
            chunk(b"tIME", b"\x07\xe8\x01\x01\x00\x00\x00"),
            chunk(b"tEXt", b"date:create\x002024"),
            chunk(b"IDAT", idat),
            chunk(b"IEND", b""),
        ]
    )
    clean = png_export.clean_png(dated)
    assert [k for k, _ in png_export.png_chunks(clean)] == [b"IHDR", b"IDAT", b"IEND"]
    assert png_export.read_png_size(clean) == (1, 1)


# ---- every step -----------------------------------------------------------------------------


def test_all_steps_are_numbered_files_and_stale_ones_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slides = tmp_path / "slides"
    (slides).mkdir()
    (slides / "step-99.svg").write_text("stale")
    (slides / "notes.txt").write_text("mine")
    assert render(NEURON, "--all-steps", str(slides), "--progress") == 0
    trace = Program(NEURON).trace()
    names = sorted(p.name for p in slides.iterdir())
    assert names == ["notes.txt"] + [f"step-{k:02d}.svg" for k in range(len(trace["steps"]))]
    for k, step in enumerate(trace["steps"]):
        assert "current" in node_classes(slides / f"step-{k:02d}.svg")[step["node"]]
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "gradtrace: SVG steps: 0/6" and err[-1] == "gradtrace: SVG steps: 6/6"
    # A shorter program in the same folder leaves exactly its own steps.
    assert render(*LESSON, "--all-steps", str(slides), "--no-progress") == 0
    assert sorted(p.name for p in slides.iterdir()) == [
        "notes.txt",
        "step-00.svg",
        "step-01.svg",
        "step-02.svg",
    ]
    assert capsys.readouterr().err == ""  # no progress when asked for none (and not a TTY)


def test_the_progress_bar_redraws_in_place_on_a_terminal() -> None:
    import io

    from gradtrace.cli import Progress

    live = io.StringIO()
    bar = Progress("steps", live, live=True)
    for done in range(5):
        bar(done, 4)
    text = live.getvalue()
    assert text.count("\r") == 5 and text.endswith("[" + "#" * 28 + "] 4/4\n")
    plain = io.StringIO()
    bar = Progress("steps", plain, live=False)
    for done in range(101):
        bar(done, 100)
    assert len(plain.getvalue().splitlines()) == 11  # about every tenth, plain lines


@needs_rsvg
def test_all_steps_as_png(tmp_path: Path) -> None:
    assert render(*LESSON, "--all-steps", str(tmp_path), "--format", "png", "--scale", "1") == 0
    pngs = sorted(tmp_path.glob("step-*.png"))
    assert len(pngs) == 3
    assert len({png_export.read_png_size(p.read_bytes()) for p in pngs}) >= 1


# ---- the grad table ---------------------------------------------------------------------------


def test_the_table_as_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert render(*LESSON, "--table", "md") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| Step | `x.grad` | `y.grad` | `x*y.grad` | `out.grad` |"
    assert lines[1] == "|:--|--:|--:|--:|--:|"
    assert lines[2] == "| 0 · seed `out`.grad = 1 | 0 | 0 | 0 | **1** |"
    assert lines[3] == "| 1 · `out`._backward() (`+`) | **1** | 0 | **1** | 1 |"
    assert lines[4] == "| 2 · `x*y`._backward() (`*`) | **4** | **2** | 1 | 1 |"


def test_the_table_as_html_marks_the_step(tmp_path: Path) -> None:
    out = tmp_path / "t.html"
    assert render(*LESSON, "--table", "html", "--step", "1", "--lang", "zh", "-o", str(out)) == 0
    table = ET.fromstring(out.read_text("utf-8"))
    assert table.tag == "table" and table.get("class") == "gradtrace-table"
    heads = ["".join(th.itertext()) for th in table.iter("th") if th.get("scope") == "col"]
    assert heads == ["步骤", "x.grad", "y.grad", "x*y.grad", "out.grad"]
    rows = table.find("tbody").findall("tr")  # type: ignore[union-attr]
    assert [r.get("aria-current") for r in rows] == [None, "step", None]
    assert ["".join(td.itertext()) for td in rows[2].findall("td")] == ["4", "2", "1", "1"]
    assert [td.get("class") for td in rows[2].findall("td")] == ["changed", "changed", None, None]


def test_tensor_cells_show_shape_and_first_numbers() -> None:
    trace = Program("W = ones(2, 3)\nL = (W*W).sum()").trace()
    md = tables.table_markdown(trace)
    assert "[2×3] 2, 2, 2, …" in md
    assert tables.cell_text([1.0, 2.5]) == "[1, 2.5]"


# ---- byte-identical repeats --------------------------------------------------------------------


def test_repeated_exports_are_byte_identical_and_unchanged_files_are_not_rewritten(
    tmp_path: Path,
) -> None:
    rsvg = shutil.which("rsvg-convert") is not None

    def export_all(into: Path) -> dict[str, bytes]:
        into.mkdir()
        for program, name in [(NEURON, "neuron"), (SOFTMAX, "soft")]:
            args = [program, "--all-steps", str(into / name), "--no-progress"]
            args += ["--html", str(into / f"{name}.html")]
            args += ["--table", "md", "-o", str(into / f"{name}.md")]
            assert render(*args) == 0
            assert render(program, "--table", "html", "-o", str(into / f"{name}-t.html")) == 0
            if rsvg:
                assert render(program, "--step", "2", "-o", str(into / f"{name}.png")) == 0
        return {str(p.relative_to(into)): p.read_bytes() for p in into.rglob("*") if p.is_file()}

    first = export_all(tmp_path / "a")
    second = export_all(tmp_path / "b")
    assert first == second and len(first) == (17 if rsvg else 15)
    old = tmp_path / "a" / "neuron.html"
    os.utime(old, (1_000_000_000, 1_000_000_000))
    assert render(NEURON, "--html", str(old)) == 0
    assert old.stat().st_mtime == 1_000_000_000  # same bytes: left alone


def test_a_new_process_gives_the_same_bytes(tmp_path: Path) -> None:
    """Another interpreter with another hash seed: no set order or id() leaks into a file."""
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"s{seed}.html"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "gradtrace.cli",
                "render",
                RNN,
                "--collapse",
                "--html",
                str(out),
            ],
            check=True,
            timeout=60,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


# ---- errors and help ----------------------------------------------------------------------------


def test_a_bad_program_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert render("tanhh(x)", "--html", str(tmp_path / "x.html")) == 2
    assert "unknown function 'tanhh'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_an_unknown_suffix_needs_a_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert render(*LESSON, "-o", str(tmp_path / "x.txt")) == 2
    assert "--format" in capsys.readouterr().err
    assert render(*LESSON, "-o", str(tmp_path / "x.txt"), "--format", "svg") == 0


def test_a_program_from_a_file_or_stdin(tmp_path: Path) -> None:
    prog = tmp_path / "neuron.py"
    prog.write_text(NEURON)
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    assert render(f"@{prog}", "-o", str(a)) == 0
    done = subprocess.run(
        [sys.executable, "-m", "gradtrace.cli", "render", "-", "-o", str(b)],
        input=NEURON,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.returncode == 0 and a.read_bytes() == b.read_bytes()


def test_help_documents_every_export(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    for word in ("trace", "render", "--all-steps", "--html", "--table md", ".png"):
        assert word in top
    with pytest.raises(SystemExit):
        main(["render", "--help"])
    sub = capsys.readouterr().out
    for word in (
        "--step K",
        "-o FILE",
        "--format",
        "--all-steps DIR",
        "--table {md,html}",
        "--html FILE",
        "--values",
        "--accumulate",
        "--order",
        "--lang {en,zh}",
        "--scale",
        "--progress",
        "rsvg-convert",
        "librsvg2-bin",
        "byte",
        "exit status",
    ):
        assert word in sub or word in top, word


# ---- the standalone page, from disk, in Chromium -------------------------------------------


class Offline:
    """Every request a page makes, and its errors: a standalone file may request only itself."""

    def __init__(self, page: Any, url: str) -> None:
        self.url = url
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.errors.extend([m.text] if m.type == "error" else []))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def check(self) -> None:
        assert not self.errors, self.errors
        assert {u.split("#")[0] for u in self.requests} <= {self.url.split("#")[0]}, self.requests


def current_row(page_or_frame: Any) -> dict[str, str]:
    return page_or_frame.evaluate(
        """() => {
        const t = document.querySelector('#grad-table');
        const heads = [...t.tHead.rows[0].cells].map(c => c.textContent);
        const row = t.querySelector('tbody tr[aria-current="step"]');
        const out = {};
        [...row.cells].forEach((c, i) => { out[heads[i]] = c.textContent; });
        return out;
    }"""
    )


@pytest.mark.browser
def test_the_standalone_page_steps_from_disk_with_no_network(browser: Any, tmp_path: Path) -> None:
    page_file = tmp_path / "lesson.html"
    assert render(*LESSON, "--step", "0", "--html", str(page_file)) == 0
    html = page_file.read_text("utf-8")
    assert "<link" not in html and 'src="' not in html.split("<svg", 1)[0]  # all inline
    context = browser.new_context(viewport={"width": 1280, "height": 800}, offline=True)
    try:
        page = context.new_page()
        url = page_file.as_uri()
        watch = Offline(page, url)
        page.goto(url)
        page.wait_for_function("() => window.gradtrace !== undefined")
        assert page.text_content("#step-label") == "Step 0 of 2"
        for k in (1, 2):
            page.keyboard.press("ArrowRight")
            page.wait_for_function(f"() => window.gradtrace.state.step === {k}")
            assert page.text_content("#step-label") == f"Step {k} of 2"
            row = current_row(page)
            assert {label: float(row[label]) for label in LESSON_GRADS[k]} == LESSON_GRADS[k]
            assert page.get_attribute(
                "#grad-table tbody tr[aria-current='step']", "data-step"
            ) == str(k)
        assert page.text_content("#graph #n0-grad") == "grad 4"
        assert "current" in (page.get_attribute("#graph g.node#n2", "class") or "")
        assert "x.grad: 1 → 4" in page.text_content("#explain")  # type: ignore[operator]
        assert page.url.endswith("#step=2")
        page.keyboard.press("Home")
        page.wait_for_function("() => window.gradtrace.state.step === 0")
        page.keyboard.press("End")
        page.wait_for_function("() => window.gradtrace.state.step === 2")
        # The other accumulation's row, and the other language, with no request.
        assert page.text_content("#grad-table tfoot th") == "if += were = (wrong)"
        page.click(".lang button[data-lang='zh']")
        assert page.text_content("#step-label") == "第 2 步,共 2 步"
        assert "x.grad" in page.text_content("#explain")  # type: ignore[operator]
        # A link to a step opens there.
        page.goto(url + "#step=1")
        page.reload()
        page.wait_for_function("() => window.gradtrace.state.step === 1")
        watch.check()
    finally:
        context.close()


@pytest.mark.browser
def test_a_tensor_program_and_a_collapsed_loop_step_from_disk(browser: Any, tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1000, "height": 700}, offline=True)
    try:
        for source, extra in [(SOFTMAX, ["--lang", "zh"]), (RNN, ["--collapse"])]:
            page_file = tmp_path / f"p{len(extra)}.html"
            assert render(source, *extra, "--step", "1", "--html", str(page_file)) == 0
            page = context.new_page()
            watch = Offline(page, page_file.as_uri())
            page.goto(page_file.as_uri())
            page.wait_for_function("() => window.gradtrace !== undefined")
            trace = Program(source).trace()
            n = len(trace["steps"]) - 1
            page.keyboard.press("End")
            page.wait_for_function(f"() => window.gradtrace.state.step === {n}")
            assert page.locator("#grad-table tbody tr").count() == n + 1
            assert page.locator("#graph svg g.node").count() >= 4
            watch.check()
            page.close()
    finally:
        context.close()
