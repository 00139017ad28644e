"""gradtrace/figure.py, the one place directive and fence options become files, and the MkDocs
plugin's fence reader: names made from content, the version stamp, the options' errors."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradtrace.figure import FigureError, build, parse_options, stamp_html, write
from gradtrace.mkdocs import fence_options, find_fences
from gradtrace.version import __version__, graphviz_version, stamp

SVG = "{http://www.w3.org/2000/svg}"
LESSON = {"values": "x=2,y=3"}


def grads(data: bytes) -> dict[str, str]:
    root = ET.fromstring(data)
    return {
        t.get("id", ""): "".join(t.itertext())
        for t in root.iter(SVG + "text")
        if (t.get("id") or "").endswith("-grad")
    }


def test_every_step_is_one_file_named_by_content_and_step() -> None:
    files = build(parse_options("x*y + x", {**LESSON, "step": "all"}))
    assert [f.step for f in files] == [0, 1, 2]
    key = files[0].name.split("-")[1]
    assert [f.name for f in files] == [f"gradtrace-{key}-0{k}.svg" for k in range(3)]
    assert grads(files[2].data)["n0-grad"] == "grad 4"  # x.grad: 1 from the sum, 3 from x*y
    assert [f.caption for f in files] == ["Step 0 of 2", "Step 1 of 2", "Step 2 of 2"]
    assert files[1].alt == "Computation graph of out = x*y + x: step 1 of 2"


def test_the_name_follows_what_the_bytes_depend_on_and_nothing_else() -> None:
    def name(**options: str) -> str:
        return build(parse_options("x*y + x", {**LESSON, **options}))[0].name

    last = name()
    # Caption, alt text and height are the page's, not the file's.
    assert name(caption="a caption", alt="words", height="300") == last
    assert name(values="x=2.0, y=3") == last  # the same numbers written another way
    others = [{"values": "x=2,y=4"}, {"accumulate": "assign"}, {"lang": "zh"}]
    for other in [*others, {"legend": "false"}, {"order": "kahn"}]:
        assert name(**other) != last, other
    assert name(step="1") != last and name(step="2") == last  # absent is the last step


def test_each_file_records_the_versions_that_made_it() -> None:
    (svg,) = build(parse_options("x*y + x", LESSON))
    assert stamp() == f"gradtrace {__version__}, graphviz {graphviz_version()}"
    assert graphviz_version() != "unknown"
    root = ET.fromstring(svg.data)
    assert root.find(SVG + "metadata").text == stamp()  # type: ignore[union-attr]
    (page,) = build(parse_options("x*y + x", {**LESSON, "mode": "stepper", "step": "1"}))
    assert page.name.endswith("-01.html") and page.kind == "html"
    assert f'<html data-gradtrace-version="{stamp()}" lang="en">' in page.data.decode()
    assert stamp_html("<html>") == f'<html data-gradtrace-version="{stamp()}">'


def test_two_builds_give_the_same_bytes_and_writing_again_touches_nothing(tmp_path: Path) -> None:
    spec = parse_options("h = tanh(w*x + b)", {"values": "w=0.5,x=2,b=-0.3", "step": "all"})
    first, second = build(spec), build(spec)
    assert [(f.name, f.data) for f in first] == [(f.name, f.data) for f in second]
    path = write(first[0], tmp_path)
    stamp_ns = path.stat().st_mtime_ns
    write(second[0], tmp_path)
    assert path.stat().st_mtime_ns == stamp_ns and path.read_bytes() == first[0].data
    assert sorted(p.name for p in tmp_path.iterdir()) == [first[0].name]  # no temporary left


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"colour": "red"}, "unknown option 'colour'; the options are: values, step"),
        ({"mode": "png"}, "mode is svg or stepper, not 'png'"),
        ({"step": "-1"}, "step is a number (0 is the seed), all, or left out"),
        ({"step": "all", "mode": "stepper"}, "the stepper holds every step"),
        ({"legend": "maybe"}, "legend is true or false, not 'maybe'"),
        ({"height": "20"}, "height is a whole number of pixels from 150 to 3000"),
        ({"values": "x=two"}, "x"),
    ],
)
def test_options_out_of_range_are_named(options: dict[str, str], says: str) -> None:
    with pytest.raises(FigureError) as err:
        parse_options("x*y + x", options)
    assert says in str(err.value) and err.value.line is None


def test_a_program_that_cannot_run_says_where() -> None:
    with pytest.raises(FigureError) as err:
        build(parse_options("a = x*y\nb = a + foo(a)", {}))
    assert (err.value.line, err.value.column) == (2, 9)
    assert str(err.value).startswith("line 2, column 9: unknown function")
    with pytest.raises(FigureError, match="no program"):
        parse_options("  \n", {})


def test_the_fence_reader_finds_gradtrace_fences_at_any_depth_and_skips_other_code() -> None:
    page = [
        '```gradtrace values="x=2,y=3" step=all',
        "L = x*y + x",
        "```",
        "````markdown",
        "```gradtrace",
        "not a figure",
        "```",
        "````",
        "!!! note",
        "",
        "    ~~~gradtrace caption='in an admonition'",
        "    for i in range(2):",
        "        x = x*x",
        "    ~~~",
        "```python",
        "print(1)",
        "```",
    ]
    fences = find_fences(page)
    assert [(f.start, f.end, f.indent) for f in fences] == [(0, 3, ""), (10, 14, "    ")]
    assert fences[1].body == "for i in range(2):\n    x = x*x"
    assert fence_options(fences[0].info) == {"values": "x=2,y=3", "step": "all"}
    assert fence_options(fences[1].info) == {"caption": "in an admonition"}
    assert fence_options("values='{\"W\": [[1, 2]]}'") == {"values": '{"W": [[1, 2]]}'}
    with pytest.raises(FigureError, match="key=value"):
        fence_options("step all")
    with pytest.raises(FigureError, match="cannot be read"):
        fence_options('caption="unclosed')


LOOP = """import torch
w = torch.tensor(1.0, requires_grad=True)
for i in range(3):
    loss = (w*2 - 1)**2
    loss.backward()
"""


@pytest.mark.parametrize(("which", "grad"), [("first", "4"), ("1", "8"), ("last", "12")])
def test_a_figure_of_several_passes_draws_the_pass_asked_for(which: str, grad: str) -> None:
    (fig,) = build(parse_options(LOOP, {"pass": which}))
    assert grads(fig.data)["n0-grad"] == f"grad {grad}"  # w (n0) accumulates: 4, 8, 12


def test_a_pass_that_is_not_one_is_named() -> None:
    with pytest.raises(FigureError, match="pass is first, last or a pass's number"):
        parse_options(LOOP, {"pass": "second"})


def test_the_fence_takes_pass_too() -> None:
    assert fence_options('values="" pass=last')["pass"] == "last"
