"""Rows about answers: the first picture, every step of the MLP, the trace's size, the cache.

Server time is measured in-process (bench.measure.InProcess): the ASGI app with all its
middleware and the hop to the worker thread, without the network.
"""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

from bench import anchors
from bench.measure import InProcess, median, timed
from bench.programs import loop_program, mlp_program, sized_program, small_program
from engine import drawing as draw
from engine import run


def _app() -> Any:
    from app.main import app

    return app


def _render(client: InProcess, source: str, **options: Any) -> tuple[float, dict[str, Any], int]:
    """POST /api/render (what the page sends as a student types): server time, answer, bytes
    on the wire."""
    answer = client.request("POST", "/api/render", json_body={"source": source, **options})
    assert answer.status == 200, answer.body[:200]
    return answer.seconds, answer.json(), len(answer.body)


def nudge(source: str) -> str:
    """`source` with its first decimal number's last digit changed (same length)."""
    found = re.search(r"[0-9]\.[0-9]+", source)
    if not found:
        return source
    last = found.end() - 1
    digit = str((int(source[last]) + 1) % 10)
    return source[:last] + digit + source[last + 1 :]


def first_picture(quick: bool, tiny: bool = False) -> dict[str, Any]:
    """New programs (never seen, so no cache helps): trace + drawing, server time."""
    from app import cache

    client = InProcess(_app())
    reps = 3 if tiny else (8 if quick else 30)
    out: dict[str, Any] = {"sizes": {}}
    try:
        _render(client, small_program(10**6))  # start the Graphviz helper, import everything
        families = [
            ("x*y + x", 4, lambda i: f"x = {i + 2}.0\ny = 3.0\nL = x*y + x"),
            ("neuron", 10, small_program),
            ("dag 20", 20, lambda i: sized_program(20, salt=i + 1)),
            ("dag 40", 40, lambda i: sized_program(40, salt=i + 1)),
        ]
        if not quick:
            families += [("mlp 126", 126, lambda i: mlp_program(seed=i + 2))]
        for name, _, make in families:
            times, nodes, sizes, edits, reused = [], 0, [], [], 0
            for i in range(reps):
                # A new shape: nothing cached, Graphviz lays it out.
                cache.clear()
                draw.to_svg.cache_clear()
                seconds, body, wire = _render(client, make(i))
                times.append(seconds)
                sizes.append(wire)
                nodes = len(body["trace"]["nodes"])
                # The same program with one number changed, as a student edits it: a new
                # program for the engine and the answer caches, the layout maybe reused.
                cache.clear()
                hits = draw.to_svg.cache_info().hits
                edits.append(_render(client, nudge(make(i)))[0])
                reused += draw.to_svg.cache_info().hits - hits
            out["sizes"][name] = {
                "nodes": nodes,
                "median": median(times),
                "bytes": median(sizes),
                "edit": median(edits),
                "reused": reused / reps,
            }
        # The gallery's lessons, what a class opens first: each a new shape.
        from app.examples import EXAMPLES

        gallery = []
        for ex in [] if tiny else EXAMPLES:
            times, body = [], {}
            for _ in range(3 if quick else 7):
                cache.clear()
                draw.to_svg.cache_clear()
                answer = client.request(
                    "POST",
                    "/api/render",
                    json_body={"source": ex["source"], "values": ex.get("values")},
                )
                times.append(answer.seconds)
                body = answer.json()
            nodes = len(body["trace"]["nodes"]) if "trace" in body else 0
            gallery.append({"id": ex["id"], "nodes": nodes, "median": median(times)})
        out["gallery"] = gallery
        big: dict[str, Any] = {}
        for name, make, n in (
            ("dag 500", lambda i: sized_program(500, salt=i + 1), 2 if quick else 3),
            ("loop 500", lambda i: loop_program(500, salt=i + 1), 2 if quick else 5),
            ("loop 500 in full", lambda i: loop_program(500, salt=i + 1), 2 if quick else 3),
            ("loop 2,000", lambda i: loop_program(2000, salt=i + 1), 2 if quick else 5),
            ("dag 1,000", lambda i: sized_program(1000, salt=i + 1), 2 if quick else 5),
        ):
            if tiny or (quick and name == "dag 500"):
                continue
            # "in full": collapse=false, as when the student unticks "collapse long loops".
            options = {"collapse": False} if name.endswith("in full") else {}
            times, body = [], {}
            for i in range(n):
                cache.clear()
                draw.to_svg.cache_clear()
                seconds, body, _ = _render(client, make(i), **options)
                times.append(seconds)
            err = body.get("draw_error")
            big[name] = {
                "nodes": len(body["trace"]["nodes"]),
                "median": median(times),
                "drawn": "too large to draw"
                if err and err.get("code") == "too_large"
                else ("collapsed loop" if body.get("collapsed") else "drawn in full"),
            }
        out["big"] = big
        # The same program again: served from the worker's cache.
        source = small_program(7)
        _render(client, source)
        hits = [_render(client, source)[0] for _ in range(50 if not quick else 10)]
        out["cache_hit"] = median(hits)
        # GET /api/trace and /api/svg by permalink, again: the cache and the 304.
        params = {"source": source}
        client.request("GET", "/api/svg", params=params)
        again = [client.request("GET", "/api/svg", params=params).seconds for _ in range(20)]
        etag = client.request("GET", "/api/svg", params=params).headers.get("etag", "")
        not_modified = [
            client.request("GET", "/api/svg", params=params, headers={"If-None-Match": etag})
            for _ in range(20)
        ]
        out["svg_again"] = median(again)
        out["svg_304"] = median([a.seconds for a in not_modified])
        out["svg_304_status"] = not_modified[0].status
    finally:
        client.close()
    # The anchors: micrograd + draw_dot + a `dot` process, and `dot` alone on big graphs.
    out["mg_4"] = median(timed(lambda: anchors.micrograd_first_picture(1), 5 if quick else 20))
    for n in () if tiny else (500,) if quick else (500, 2000):
        text = anchors.draw_dot_text(anchors.micrograd_graph(n))
        out[f"dot_{n}"] = median(timed(lambda t=text: anchors.dot_svg(t), 1 if quick else 3))
    return out


def every_step(quick: bool) -> dict[str, Any]:
    """MLP(3, [4, 4, 1]): one answer holds every step (laid out once; the page restyles),
    against re-rendering each step and against micrograd's draw_dot per step."""
    from app import cache

    client = InProcess(_app())
    try:
        _render(client, small_program(10**6 + 1))
        times = []
        for i in range(3 if quick else 7):
            cache.clear()
            seconds, body, _ = _render(client, mlp_program(seed=100 + i))
            times.append(seconds)
    finally:
        client.close()
    steps = len(body["trace"]["steps"])
    source = mlp_program(seed=100)
    naive = timed(lambda: anchors.naive_per_step(source), 1 if quick else 2, warmup=0)
    mg = timed(lambda: anchors.micrograd_mlp_per_step(steps), 1, warmup=0)
    return {
        "nodes": len(body["trace"]["nodes"]),
        "steps": steps,
        "ours": median(times),
        "naive": median(naive),
        "micrograd": median(mg),
        "mg_boxes": _mg_boxes(),
    }


def _mg_boxes() -> int:
    nn = anchors.micrograd_nn()
    out = nn.MLP(3, [4, 4, 1])([2.0, 3.0, -1.0])
    text = anchors.draw_dot_text(out)
    return sum(1 for line in text.splitlines() if "[label=" in line)


def trace_size(quick: bool) -> dict[str, Any]:
    """Bytes per node of the trace JSON (and gzipped), 50 → 1,000 nodes, and what full per-step
    snapshots of every grad would weigh."""
    rows = []
    for n in (50, 200, 1000) if quick else (50, 100, 200, 500, 1000):
        for family, make in (("dag", sized_program), ("loop", loop_program)):
            trace = run(make(n)).to_dict()
            text = json.dumps(trace, separators=(",", ":")).encode()
            nodes = len(trace["nodes"])
            grads = len([x for x in trace["nodes"] if x["grad"] is not None])
            snapshots = len(trace["steps"]) * grads * 8  # ≥ 8 bytes a number, per step
            rows.append(
                {
                    "family": family,
                    "nodes": nodes,
                    "bytes": len(text) / nodes,
                    "gzip": len(gzip.compress(text, 6)) / nodes,
                    "snapshots": snapshots / nodes,
                }
            )
    out: dict[str, Any] = {"rows": rows}
    for family in ("dag", "loop"):
        per = [r["bytes"] for r in rows if r["family"] == family]
        out[f"{family}_spread"] = max(per) / min(per) - 1
    return out


def drawing_cost(quick: bool) -> dict[str, Any]:
    """Where the time of a big first picture goes (engine, DOT, layout, SVG tagging)."""
    trace_t = timed(lambda: run(loop_program(500)).to_dict(), 2 if quick else 5)
    trace = run(loop_program(500)).to_dict()
    lay = draw.build(trace, None)
    layout = timed(lambda: draw.to_svg.__wrapped__(lay.dot), 1 if quick else 3)
    svg = draw.to_svg(lay.dot)
    finish = timed(lambda: draw.finish_svg(svg, lay, trace), 2 if quick else 5)
    return {
        "trace": median(trace_t),
        "layout": median(layout),
        "finish": median(finish),
        "drawn": lay.drawn,
    }
