"""The page's own modules (static/js/) in Chromium, against what Python says: the number format
(every case of tests/cases/number_format.json), the heat map (engine.drawing.tensors), and the
address format (app/query.py, both reading static/query.json)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import pytest

from app.query import PageQuery, parse_query, permalink
from bench.chromium import have_chromium

pytestmark = pytest.mark.browser

if not have_chromium():
    pytest.skip("Chromium is not installed", allow_module_level=True)
pytest.importorskip("playwright.sync_api")

PAGE_PROGRAM = "a = x*y\nb = a + x\nc = b*b\nd = c + a"
CASES = json.loads((Path(__file__).parent / "cases" / "number_format.json").read_text("utf-8"))


@pytest.fixture
def page(browser: Any, base_url: str) -> Any:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # Enough steps and nodes for every position STATES names.
    page.goto(base_url + "/?source=" + quote(PAGE_PROGRAM) + "&values=x=2,y=3")
    page.wait_for_function("() => window.gradtrace !== undefined")
    yield page
    context.close()
    assert not errors, errors


def _js_number(x: Any) -> Any:
    """A case's input as JSON can carry it: the non-finite ones by name."""
    return x if x is None or not isinstance(x, str) else {"special": x}


def test_the_page_formats_every_number_case_as_python_does(page: Any) -> None:
    inputs = [_js_number(c["in"]) for c in CASES["cases"]]
    got = page.evaluate(
        """async (inputs) => {
        const { fmt } = await import('/static/js/format.js');
        const special = { nan: NaN, inf: Infinity, '-inf': -Infinity };
        return inputs.map((x) => fmt(x && x.special ? special[x.special] : x));
    }""",
        inputs,
    )
    want = [c["out"] for c in CASES["cases"]]
    assert got == want


def test_the_page_heat_map_matches_the_drawings(page: Any) -> None:
    from engine.drawing.tensors import heat_colour, heat_grid

    tensors = [
        [1.0, -2.0, 3.0],
        [[1.0, 2.0], [3.0, -4.0]],
        [[float(i * j - 7) for j in range(20)] for i in range(11)],
        [[[float(i + j + k) for k in range(3)] for j in range(4)] for i in range(5)],
    ]
    got = page.evaluate(
        """async (tensors) => {
        const { heatGrid, heatColour } = await import('/static/js/heat.js');
        const { shapeOf } = await import('/static/js/format.js');
        return tensors.map((v) => {
            const cells = heatGrid(v, shapeOf(v));
            const scale = Math.max(...cells.map(Math.abs));
            return { cells, colours: cells.map((c) => heatColour(c, scale)) };
        });
    }""",
        tensors,
    )
    for v, js in zip(tensors, got, strict=True):
        grid = heat_grid(v).ravel().tolist()
        assert all(
            math.isclose(a, b, abs_tol=1e-12) for a, b in zip(js["cells"], grid, strict=True)
        )
        scale = max(abs(c) for c in grid)
        assert js["colours"] == [heat_colour(c, scale) for c in grid]


STATES: list[dict[str, Any]] = [
    {"source": "x*y + x", "values": {"x": 2, "y": 3}, "step": 1},
    {"source": "a = x**2\nb = a / (x + 1)", "values": {"x": -0.5}, "accumulate": "assign"},
    {"source": "z = 名字 * 2 + 名字", "values": {"名字": 1.25}, "order": "kahn", "lang": "zh"},
    {"source": "s = sum(W @ v)", "values": {"W": [[1, 2], [3, 4]], "v": [1, -1]}, "step": 0},
    {"source": "y = x" + " + x" * 120, "values": {"x": 1}, "step": 3},  # long: z=
    {"source": "y = tanh(x)", "values": {}, "forwardMode": True, "fwd": 1},
]


def test_the_page_writes_addresses_the_server_reads_back(page: Any) -> None:
    """url.js writes each state; app/query.py parses it to the same program and position."""
    queries = page.evaluate(
        """async (states) => {
        const { setState } = await import('/static/js/store.js');
        const url = await import('/static/js/url.js');
        const out = [];
        for (const s of states) {
            setState(Object.assign({ accumulate: 'add', order: 'dfs', lang: 'en', step: 0,
                                     forwardMode: false, fwd: null }, s));
            await url.ensureCompressed();
            out.push(url.queryPairs());
        }
        return out;
    }""",
        STATES,
    )
    for state, query in zip(STATES, queries, strict=True):
        q = parse_query(dict(parse_qsl(query, keep_blank_values=True)))
        assert q.source == state["source"]
        assert q.compressed == (len(state["source"]) > 200)
        assert q.values == state["values"]
        assert q.accumulate == state.get("accumulate", "add")
        assert q.order == state.get("order", "dfs")
        assert q.lang == state.get("lang", "en")
        if state.get("forwardMode"):
            assert q.fwd == state["fwd"] and q.step is None
        else:
            assert q.step == state.get("step", 0) and q.fwd is None


@pytest.mark.parametrize("compress", [False, True])
def test_a_server_permalink_opens_the_page_at_its_state(
    browser: Any, base_url: str, compress: bool
) -> None:
    """app/query.py writes a link; the page opens at that state and writes the same query."""
    q = PageQuery(
        source="a = x * y\nb = a + x",
        values={"x": 2.0, "y": -3.0},
        accumulate="assign",
        order="kahn",
        step=2,
        lang="zh",
    )
    link = permalink(q, compress=compress)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(base_url + link)
        page.wait_for_function("() => window.gradtrace !== undefined")
        st = page.evaluate(
            "() => { const s = window.gradtrace.state; return {source: s.source, "
            "values: s.values, accumulate: s.accumulate, order: s.order, step: s.step, "
            "lang: s.lang}; }"
        )
        assert st == {
            "source": q.source,
            "values": {"x": 2, "y": -3},
            "accumulate": "assign",
            "order": "kahn",
            "step": 2,
            "lang": "zh",
        }
        page.wait_for_function("() => location.search.includes('step=2')")
        # The page compresses by the program's length alone, so only `compressed` may differ.
        written = parse_query(dict(parse_qsl(urlsplit(page.url).query)))
        read = parse_query(dict(parse_qsl(urlsplit(link).query)))
        assert replace(written, compressed=read.compressed) == read
    finally:
        context.close()
