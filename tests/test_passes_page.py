"""The page's drawing of a program of several passes: POST /api/render draws the pass asked
(`draw_pass`, alone with `svg_only`), and GET / and /embed draw the pass the step is in."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from app.main import app
from bench.programs import LOOP, REGRESSION


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def render(client: TestClient, **extra: object) -> dict:
    resp = client.post("/api/render", json={"source": LOOP, **extra})
    assert resp.status_code == 200, resp.text
    return resp.json()


def drawn_ids(svg: str) -> set[str]:
    return set(re.findall(r'<g id="(n\d+)" class="node', svg))


def test_render_draws_the_last_pass_and_names_it(client: TestClient) -> None:
    body = render(client)
    trace = body["trace"]
    assert body["svg_pass"] == len(trace["passes"]) - 1 == 2
    assert "n18" in drawn_ids(body["svg"]) and "n6" not in drawn_ids(body["svg"])


def test_each_pass_is_drawn_with_its_own_nodes(client: TestClient) -> None:
    trace = render(client)["trace"]
    for k, p in enumerate(trace["passes"]):
        body = render(client, draw_pass=k, svg_only=True)
        assert set(body) == {"svg", "draw_error", "collapsible", "collapsed", "svg_pass"}
        assert body["svg_pass"] == k
        ids = drawn_ids(body["svg"])
        assert p["output"] in ids  # the pass's own loss node, with the ids the trace uses
        others = [q["output"] for j, q in enumerate(trace["passes"]) if j != k]
        assert not ids & set(others)
        assert "n0" in ids  # the leaf every pass shares


def test_a_pass_past_the_last_is_the_last_and_a_negative_one_is_refused(client: TestClient) -> None:
    assert render(client, draw_pass=99, svg_only=True)["svg_pass"] == 2
    resp = client.post("/api/render", json={"source": LOOP, "draw_pass": -1})
    assert resp.status_code == 422


def test_one_pass_programs_have_no_pass(client: TestClient) -> None:
    resp = client.post("/api/render", json={"source": "x = 2.0\ny = x*x", "draw_pass": 0})
    body = resp.json()
    assert body["svg_pass"] is None and body["svg"]


@pytest.mark.parametrize("path", ["/", "/embed"])
def test_the_page_and_embed_draw_the_pass_of_the_step(client: TestClient, path: str) -> None:
    for step, output in [(0, "n6"), (5, "n12"), (11, "n18")]:
        html = client.get(path + "?" + urlencode({"source": LOOP, "step": step})).text
        state = json.loads(re.search(r'<script[^>]*id="state"[^>]*>(.*?)</script>', html, re.S)[1])
        assert state["svg_pass"] == state["trace"]["steps"][step]["pass"]
        assert output in drawn_ids(html)


def test_a_hundred_epoch_regression_answers_within_its_bounds(client: TestClient) -> None:
    t0 = time.perf_counter()
    resp = client.post("/api/render", json={"source": REGRESSION})
    whole = time.perf_counter() - t0
    assert resp.status_code == 200 and "error" not in resp.json()
    passes = resp.json()["trace"]["passes"]
    assert len(passes) == 100
    t0 = time.perf_counter()
    one = client.post("/api/render", json={"source": REGRESSION, "draw_pass": 50, "svg_only": True})
    alone = time.perf_counter() - t0
    assert one.json()["svg_pass"] == 50
    assert len(one.content) < len(resp.content) / 5  # a pass's drawing, not the trace again
    assert whole < 6 and alone < 2


def test_a_summarised_pass_is_drawn_as_the_nearest_kept_one(client: TestClient) -> None:
    source = (
        "import torch\n"
        "w = torch.tensor(1.0, requires_grad=True)\n"
        "for i in range(1000):\n"
        "    loss = (w*2 - 1)**2\n"
        "    loss.backward()\n"
        "    with torch.no_grad():\n"
        "        w -= 0.1 * w.grad\n"
        "    w.grad.zero_()\n"
    )
    passes = client.post("/api/render", json={"source": source}).json()["trace"]["passes"]
    gone = [i for i, p in enumerate(passes) if not p["kept"]]
    assert gone, "the loop is summarised under the default limits"
    k = gone[len(gone) // 2]
    body = client.post(
        "/api/render", json={"source": source, "draw_pass": k, "svg_only": True}
    ).json()
    kept = [i for i, p in enumerate(passes) if p["kept"]]
    assert body["svg_pass"] == min(kept, key=lambda i: (abs(i - k), -i))
    assert passes[body["svg_pass"]]["output"] in drawn_ids(body["svg"])


def test_a_standalone_file_carries_each_kept_pass_drawing(tmp_path: Path) -> None:
    from gradtrace.cli import main

    program, out = tmp_path / "loop.py", tmp_path / "loop.html"
    program.write_text(LOOP, encoding="utf-8")
    assert main(["render", f"@{program}", "--html", str(out)]) in (0, None)
    html = out.read_text(encoding="utf-8")
    state = json.loads(re.search(r'<script[^>]*id="state"[^>]*>(.*?)</script>', html, re.S)[1])
    assert state["svg_pass"] == 2 and "n18" in drawn_ids(html)
    drawings = state["pass_drawings"]
    assert sorted(drawings) == ["0", "1"]
    for k, p in enumerate(state["trace"]["passes"][:2]):
        assert p["output"] in drawn_ids(drawings[str(k)])
