"""GET /, GET /embed, GET /api/svg, POST /api/render and the shared query parameters."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from app.examples import EXAMPLES
from app.main import app
from app.query import (
    MAX_INFLATED_BYTES,
    PageQuery,
    QueryError,
    deflate_source,
    inflate_source,
    parse_query,
    parse_values,
    permalink,
)
from engine import drawing as draw

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
LESSON = "/?source=x*y%2Bx&values=x=2,y=3"


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(app)


class Scripts(HTMLParser):
    """Collects <script> tags and inline event-handler attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.handlers: list[str] = []
        self.ids: set[str] = set()
        self._in: dict[str, str | None] | None = None

    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        if "id" in d:
            self.ids.add(d["id"] or "")
        self.handlers += [k for k in d if k.startswith("on")]
        if tag == "script":
            self._in = d
            self.scripts.append(d)

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None

    def handle_data(self, data):
        if self._in is not None:
            self._in["body"] = (self._in.get("body") or "") + data


def parse_html(text: str) -> Scripts:
    p = Scripts()
    p.feed(text)
    return p


def state_of(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="state">(.*?)</script>', html, re.S)
    assert m, "the page embeds its state as JSON"
    return json.loads(m.group(1))


# ---- the page --------------------------------------------------------------------------------


@needs_dot
def test_index_is_a_permalink_with_the_drawing_inline_and_the_state_as_json(client):
    r = client.get(LESSON + "&step=1")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    state = state_of(r.text)
    assert state["query"]["step"] == 1 and state["query"]["values"] == {"x": 2.0, "y": 3.0}
    assert state["trace"]["grads"] == {"x": 4.0, "y": 2.0}
    assert state["contrast"]["accumulate"] == "assign"
    assert state["contrast"]["grads"]["n0"] == 3.0  # `=` instead of `+=` loses the 1
    page = parse_html(r.text)
    assert {"graph", "grad-table", "step-label", "source", "explain"} <= page.ids
    assert re.search(r'<div id="graph"[^>]*><svg', r.text)
    assert re.search(r'<g id="n0" class="node leaf', r.text)
    assert "Step 1 of 2" in r.text


def test_the_page_runs_under_a_strict_csp_no_inline_script_and_no_other_origin(client):
    r = client.get(LESSON)
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("style-src")[0]
    assert "connect-src 'self'" in csp and "frame-ancestors 'self'" in csp
    page = parse_html(r.text)
    assert not page.handlers
    for s in page.scripts:
        assert s.get("src") or s.get("type") == "application/json"
        if s.get("src"):
            assert s["src"].startswith("/static/")
    assert not re.search(r'(src|href)="(https?:)?//', r.text)


def test_the_state_json_cannot_close_its_script_tag(client):
    hostile = "</script><script>alert(1)</script><!--"
    r = client.get("/?source=" + quote(hostile))
    assert r.status_code == 200
    assert "<script>alert(1)" not in r.text
    state = state_of(r.text)
    assert state["query"]["source"] == hostile
    assert state["error"]["message"]


def test_a_bad_program_opens_the_page_with_the_error_and_no_drawing(client):
    r = client.get("/?source=" + quote("x*y + tanhh(x)"))
    assert r.status_code == 200
    state = state_of(r.text)
    assert state["trace"] is None
    assert state["error"]["line"] == 1 and "tanh" in state["error"]["message"]
    assert 'id="error-box"' in r.text


def test_no_source_opens_the_lesson_example(client):
    state = state_of(client.get("/").text)
    assert state["query"]["source"] == "x*y + x"
    assert state["trace"]["grads"] == {"x": 4.0, "y": 2.0}


def test_step_absent_is_the_last_and_out_of_range_clamps(client):
    assert state_of(client.get(LESSON).text)["query"]["step"] == 2
    assert state_of(client.get(LESSON + "&step=99").text)["query"]["step"] == 2
    assert state_of(client.get(LESSON + "&step=-3").text)["query"]["step"] == 0
    assert state_of(client.get(LESSON + "&step=abc").text)["query"]["step"] == 2


def test_language_is_chosen_by_the_address(client):
    r = client.get(LESSON + "&step=1&lang=zh")
    assert '<html lang="zh-CN">' in r.text and "第 1 步,共 2 步" in r.text
    assert state_of(r.text)["strings"]["zh"]["step_of"]


def test_embed_is_the_view_without_chrome_and_may_be_framed(client):
    r = client.get("/embed?source=x*x&values=x=3&step=1")
    assert r.status_code == 200
    assert "frame-ancestors *" in r.headers["content-security-policy"]
    page = parse_html(r.text)
    assert {"graph", "step-label", "grad-table"} <= page.ids
    assert "source" not in page.ids and "examples" not in page.ids
    assert state_of(r.text)["embed"] is True


def test_compressed_permalinks_open_the_same_program(client):
    src = (
        "W = randn(3, 4)\nx = randn(4)\n" + "# a comment to make it long\n" * 20 + "L = (W@x).sum()"
    )
    r = client.get(f"/?v=1&z={deflate_source(src)}&step=1")
    assert state_of(r.text)["query"]["source"] == src
    assert state_of(r.text)["trace"] is not None


# ---- /api/svg --------------------------------------------------------------------------------


@needs_dot
def test_api_svg_is_valid_svg_without_script_or_links(client):
    r = client.get("/api/svg?source=x*y%2Bx&values=x=2,y=3&step=1")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")
    root = ET.fromstring(r.content)
    assert root.tag == SVG + "svg"
    assert not list(root.iter(SVG + "script")) and not list(root.iter(SVG + "foreignObject"))
    for el in root.iter():
        assert not any(a.endswith("href") or a.startswith("on") for a in el.attrib)
    nodes = {
        g.get("id"): g.get("class")
        for g in root.iter(SVG + "g")
        if "node" in (g.get("class") or "")
    }
    assert set(nodes) == {"n0", "n1", "n2", "n3"}
    assert "current" in nodes["n3"].split()  # step 1: the output runs its backward
    assert "Step 1 of 2" in "".join(root.itertext())


@needs_dot
def test_api_svg_step_absent_is_the_last_and_clamps(client):
    last = client.get("/api/svg?source=x*x&values=x=3").text
    assert client.get("/api/svg?source=x*x&values=x=3&step=7").text == last
    assert client.get("/api/svg?source=x*x&values=x=3&step=1").text == last


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ("source=" + quote("x*y + tanhh(x)"), 400, "tanh"),
        ("source=" + quote("x +* y"), 400, "line 1"),
        ("source=x*y&values=z=1", 400, "z"),
        ("source=x*y&accumulate=sometimes", 400, "accumulate"),
        ("", 400, "no program"),
        ("source=x&v=9", 400, "v=9"),
        ("source=" + quote("x" * 20000), 413, ""),
    ],
)
def test_api_svg_for_a_bad_request_is_a_4xx_svg_that_says_why(client, query, status, words):
    r = client.get("/api/svg?" + query)
    assert r.status_code == status
    assert r.headers["content-type"].startswith("image/svg+xml")
    root = ET.fromstring(r.content)
    text = " ".join(root.itertext())
    assert words in text
    assert not list(root.iter(SVG + "script"))


def test_api_svg_error_text_is_escaped(client):
    r = client.get("/api/svg?source=" + quote("<script>alert(1)</script>"))
    assert r.status_code == 400
    assert b"<script>" not in r.content
    ET.fromstring(r.content)


# ---- POST /api/render ------------------------------------------------------------------------


@needs_dot
def test_render_returns_trace_drawing_and_the_other_accumulation(client):
    r = client.post("/api/render", json={"source": "x*x", "values": {"x": 3}})
    assert r.status_code == 200
    body = r.json()
    assert body["trace"]["grads"] == {"x": 6.0}
    assert body["contrast"] == {"accumulate": "assign", "grads": {"n0": 3.0, "n1": 1.0}}
    assert body["svg"].startswith("<svg") and 'id="n0"' in body["svg"]


def test_render_reports_a_bad_program_with_its_position(client):
    body = client.post("/api/render", json={"source": "x +* y"}).json()
    assert body["status"] == 400 and body["error"]["line"] == 1 and "trace" not in body


def test_render_drops_values_the_new_program_no_longer_has(client):
    body = client.post(
        "/api/render", json={"source": "a*b", "values": {"x": 2, "a": 5}, "keep_values": True}
    ).json()
    assert body["values"] == {"a": 5}
    assert body["dropped"] == ["x"]


def test_render_refuses_a_malformed_request(client):
    assert client.post("/api/render", json={"values": {}}).status_code == 422
    assert client.post("/api/render", json={"source": "x", "order": "bfs"}).status_code == 422


# ---- the query parameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("x=2,y=3", {"x": 2.0, "y": 3.0}),
        ("x:2,y:-3.5", {"x": 2.0, "y": -3.5}),
        ("x=1e-3; y=4", {"x": 0.001, "y": 4.0}),
        ('{"W": [[1, 2], [3, 4]], "b": 0.5}', {"W": [[1.0, 2.0], [3.0, 4.0]], "b": 0.5}),
        ("名=2", {"名": 2.0}),
        ("", {}),
    ],
)
def test_values_are_read_in_every_documented_form(text, values):
    assert parse_values(text) == values


@pytest.mark.parametrize(
    "text", ["x", "x=abc", "x=inf", "1x=2", '{"x": "2"}', '{"x": NaN}', "[1,2]", '{"x": true}']
)
def test_bad_values_are_refused(text):
    with pytest.raises(QueryError):
        parse_values(text)


def test_compressed_source_round_trips_and_a_zip_bomb_stops():
    src = "x*y + x  # 中文 ✓\n" * 50
    assert inflate_source(deflate_source(src)) == src
    bomb = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = bomb.compress(b"x" * (MAX_INFLATED_BYTES * 20)) + bomb.flush()
    import base64

    z = base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    with pytest.raises(QueryError) as err:
        inflate_source(z)
    assert err.value.status == 413
    with pytest.raises(QueryError):
        inflate_source("not*base64!")


def test_permalink_round_trips_through_parse_query():
    from urllib.parse import parse_qsl, urlsplit

    q = PageQuery(
        source="x*y + x",
        values={"x": 2.0, "y": 3.0},
        step=1,
        lang="zh",
        accumulate="assign",
        order="kahn",
    )
    link = permalink(q)
    back = parse_query(dict(parse_qsl(urlsplit(link).query)))
    assert (back.source, back.values, back.step, back.lang, back.accumulate, back.order) == (
        q.source,
        q.values,
        q.step,
        q.lang,
        q.accumulate,
        q.order,
    )
    long_q = PageQuery(source="x*y + x\n" * 100)
    assert "z=" in permalink(long_q)
    assert parse_query(dict(parse_qsl(urlsplit(permalink(long_q)).query))).source == long_q.source


@needs_dot
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e["id"])
def test_every_gallery_example_runs_and_draws(client, example):
    body = client.post(
        "/api/render", json={"source": example["source"], "values": example["values"]}
    ).json()
    assert "error" not in body, body.get("error")
    assert body["svg"] and body["draw_error"] is None
    assert len(body["trace"]["steps"]) >= 2


def test_the_seed_lessons_give_pytorchs_numbers(client):
    by_id = {e["id"]: e for e in EXAMPLES}
    grads = {}
    for key in ("xy-plus-x", "max", "product"):
        e = by_id[key]
        body = {"source": e["source"], "values": e["values"]}
        grads[key] = client.post("/api/render", json=body).json()["trace"]["grads"]
    assert grads["xy-plus-x"] == {"x": 4.0, "y": 2.0}
    assert grads["max"] == {"x": 36.0, "y": 24.0, "z": 0.0}  # ERRATA 1: not 21, 14
    assert grads["product"] == {"x": 4.0, "y": -10.0}


@needs_dot
def test_a_loop_too_large_to_draw_in_full_is_collapsed_without_asking(client):
    src = "w = 0.99\nb = 0.1\nh = 1.0\nfor i in range(200):\n    h = tanh(h*w + b)\nL = h"
    body = client.post("/api/render", json={"source": src}).json()
    assert body["svg"] and body["draw_error"] is None
    assert body["collapsible"] and body["collapsed"]["collapsed"] == 198
    assert 'id="loop-1"' in body["svg"]
    r = client.get("/api/svg?source=" + quote(src) + "&step=300")
    assert r.status_code == 200 and b"198 iterations collapsed" in r.content
    small = client.post("/api/render", json={"source": "x*x"}).json()
    assert small["collapsible"] is False and small["collapsed"] is None


@needs_dot
def test_a_long_loop_is_drawn_collapsed_unless_asked_for_in_full(client):
    """Past draw.AUTO_COLLAPSE_NODES nodes a loop is drawn as its first and last iterations
    (readable on a projector, laid out in a fraction of the time); `collapse=0` (the box
    clicked, or the box unticked) draws every iteration; 200 nodes or fewer, in full."""
    src = "w = 0.99\nb = 0.1\nh = 1.0\nfor i in range(80):\n    h = tanh(h*w + b)\nL = h"
    body = client.post("/api/render", json={"source": src}).json()
    assert len(body["trace"]["nodes"]) > draw.AUTO_COLLAPSE_NODES
    assert body["collapsed"]["collapsed"] == 78 and 'id="loop-1"' in body["svg"]
    full = client.post("/api/render", json={"source": src, "collapse": False}).json()
    assert full["collapsed"] is None and 'id="loop-1"' not in full["svg"]
    drawn = re.findall(r'<g id="(n[0-9]+)" class="node ', full["svg"])  # not the copies
    assert len(drawn) == len(full["trace"]["nodes"])
    state = state_of(client.get("/?source=" + quote(src)).text)
    assert state["collapsed"]["id"] == "loop-1" and state["query"]["collapse"] is None
    state = state_of(client.get("/?source=" + quote(src) + "&collapse=0").text)
    assert state["collapsed"] is None and state["query"]["collapse"] is False
    assert b"78 iterations collapsed" in client.get("/api/svg?source=" + quote(src)).content
    r = client.get("/api/svg?source=" + quote(src) + "&collapse=0")
    assert r.status_code == 200 and b"iterations collapsed" not in r.content
    short = src.replace("range(80)", "range(60)")  # 184 nodes: drawn in full
    assert client.post("/api/render", json={"source": short}).json()["collapsed"] is None


@needs_dot
def test_collapse_is_asked_for_by_the_address_and_the_render_request(client):
    src = "w = 0.9\nh = 1.0\nfor i in range(6):\n    h = h*w\nL = h"
    assert client.post("/api/render", json={"source": src}).json()["collapsed"] is None
    body = client.post("/api/render", json={"source": src, "collapse": True}).json()
    assert body["collapsed"]["collapsed"] == 4
    state = state_of(client.get("/?source=" + quote(src) + "&collapse=1").text)
    assert state["collapsed"]["id"] == "loop-1" and state["query"]["collapse"] is True


@needs_dot
def test_tensor_values_in_the_address_as_json(client):
    values = quote('{"W": [[1, 2], [3, 4]], "x": [1, -1]}')
    state = state_of(client.get(f"/?source=(W%40x).sum()&values={values}").text)
    assert state["error"] is None
    assert state["trace"]["grads"] == {"W": [[1.0, -1.0], [1.0, -1.0]], "x": [4.0, 6.0]}
    r = client.get(f"/api/svg?source=(W%40x).sum()&values={values}&step=1")
    assert r.status_code == 200 and b"[2\xc3\x972]" in r.content  # the shape badge [2×2]
