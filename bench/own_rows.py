"""The own-engine page in Chromium (issue 23): Pyodide's cold and warm start, recording and
checking a 50-node engine, and the main page's first paint beside it.

- cold: a new browser context (empty HTTP cache, empty IndexedDB) opens /own: the worker boots
  Pyodide from this origin and keeps a memory snapshot of it in IndexedDB;
- warm: the page opened again in the same context: the files come from the HTTP cache and the
  worker starts from the snapshot (also how every worker after a run or a stopped loop starts);
- record + check: Run on micrograd's Value with a 50-node graph: the recorder in Pyodide (every
  local backward, each op re-run on perturbed inputs, the end-to-end replay), then
  POST /api/own (validate, name the bugs, gradtrace's run of the same graph, the drawing);
- the main page: its first contentful paint, its bytes, and that it fetches nothing of Pyodide.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from bench.chromium import ARGS, CHROMIUM, have_chromium
from bench.load import HOST, server

ROOT = Path(__file__).resolve().parents[1]
ENGINE = (ROOT / "static" / "js" / "own" / "examples" / "micrograd.py").read_text("utf-8")


def fifty_node_program(inputs: int = 11) -> str:
    """micrograd's Value and a neuron with `inputs` inputs and a squared loss: 50 nodes."""
    engine = ENGINE.split("\n# A neuron")[0]
    lines = [
        f"x{i} = Value({0.1 * (i + 1):.2f})\nw{i} = Value({0.05 * (i - 5):.2f})"
        for i in range(inputs)
    ]
    terms = " + ".join(f"w{i}*x{i}" for i in range(inputs))
    lines.append(f"b = Value(0.1)\nn = {terms} + b\no = n.tanh()\nL = (o - 1.0)**2\nL.backward()")
    return engine + "\n\n" + "\n".join(lines) + "\n"


READY = "() => window.gradtraceOwn && window.gradtraceOwn.ready"
RUN = """async (source) => {
  // After a run the next worker boots (warm): Run is timed from a ready page.
  while (!window.gradtraceOwn.ready) await new Promise((r) => setTimeout(r, 5));
  document.querySelector('#own-source').value = source;
  const t0 = performance.now();
  window.gradtraceOwn.run();
  while (!window.gradtraceOwn.answer || window.gradtraceOwn.answer === window.__seen) {
    await new Promise((r) => setTimeout(r, 5));
  }
  window.__seen = window.gradtraceOwn.answer;
  const shown = performance.now() - t0;
  const run = window.gradtraceOwn.runs.at(-1);
  return {shown, worker: run.ms, record: run.run * 1000, check: run.check * 1000,
          nodes: window.gradtraceOwn.answer.trace.nodes.length};
}"""
FCP = """() => new Promise((done) => {
  const got = () => performance.getEntriesByName('first-contentful-paint')[0];
  const wait = () => got() ? done(got().startTime) : setTimeout(wait, 10);
  wait();
})"""


def _open(page: Any, url: str) -> float:
    t0 = time.perf_counter()
    page.goto(url, timeout=120_000)
    page.wait_for_function(READY, timeout=120_000)
    return time.perf_counter() - t0


def _own(browser: Any, base: str, repeats: int) -> dict[str, Any]:
    context = browser.new_context()
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    try:
        cold_page = _open(page, base + "/own")
        cold = page.evaluate("() => window.gradtraceOwn.boots[0]")
        warm, warm_page = [], []
        for _ in range(repeats):
            page.wait_for_timeout(1500)  # the snapshot is written after the cold start answers
            warm_page.append(_open(page, base + "/own"))
            warm.append(page.evaluate("() => window.gradtraceOwn.boots[0]"))
        source = fifty_node_program()
        runs = [page.evaluate(RUN, source) for _ in range(repeats)]
    finally:
        context.close()
    return {
        "cold": cold["ms"] / 1000,
        "cold_warm_flag": cold["warm"],
        "cold_page": cold_page,
        "warm": statistics.median(b["ms"] for b in warm) / 1000,
        "warm_all": [b["ms"] / 1000 for b in warm],
        "warm_flags": [b["warm"] for b in warm],
        "warm_page": statistics.median(warm_page),
        "nodes": runs[0]["nodes"],
        "record": statistics.median(r["record"] for r in runs) / 1000,
        "check": statistics.median(r["check"] for r in runs) / 1000,
        "worker": statistics.median(r["worker"] for r in runs) / 1000,
        "shown": statistics.median(r["shown"] for r in runs) / 1000,
        "foreign": [u for u in requests if not u.startswith(base + "/")],
    }


def _main_page(browser: Any, base: str, repeats: int) -> dict[str, Any]:
    fcps, sizes = [], []
    pyodide = 0
    for _ in range(repeats):
        context = browser.new_context()
        page = context.new_page()
        seen: list[str] = []
        page.on("request", lambda r, seen=seen: seen.append(r.url))
        resp = page.goto(base + "/", timeout=120_000)
        fcps.append(page.evaluate(FCP) / 1000)
        sizes.append(len(resp.body()) if resp else 0)
        pyodide += sum("pyodide" in u or "/own" in u for u in seen)
        context.close()
    return {"fcp": statistics.median(fcps), "fcp_all": fcps, "bytes": sizes[0], "pyodide": pyodide}


def own_engine(quick: bool) -> dict[str, Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "playwright is not installed (the test extra)"}
    if not have_chromium():
        return {"skipped": f"no Chromium at {CHROMIUM}"}
    if not (ROOT / "static" / "pyodide" / ".version").exists():
        return {"skipped": "Pyodide is not installed (scripts/pyodide)"}
    repeats = 2 if quick else 5
    with server(1) as (port, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        base = f"http://{HOST}:{port}"
        try:
            out = _own(browser, base, repeats)
            out["main"] = _main_page(browser, base, repeats)
        finally:
            browser.close()
    out["version"] = (ROOT / "static" / "pyodide" / ".version").read_text().strip()
    return out


def table(o: dict[str, Any], ms: Any, verdict: Any) -> list[tuple[str, str, str, str, str]]:
    """The rows of the report (bench/__main__.py), from own_engine's numbers."""
    if "skipped" in o:
        return [("the own-engine page (Pyodide in Chromium)", "—", o["skipped"], "—", "–")]
    m = o["main"]
    each = ", ".join(f"{t:.2f}" for t in o["warm_all"])
    return [
        (
            f"Pyodide {o['version']} cold start in Chromium (new context: worker boot to ready)",
            "≤ 5 s",
            f"{o['cold']:.2f} s in the worker · page opened to ready {o['cold_page']:.2f} s",
            "—",
            verdict(o["cold"] <= 5.0),
        ),
        (
            "Pyodide warm start (the page again: HTTP cache and the IndexedDB snapshot)",
            "≤ 1.5 s",
            f"median {o['warm']:.2f} s in the worker ({each}) · page opened to ready "
            f"{o['warm_page']:.2f} s",
            "—",
            verdict(o["warm"] <= 1.5 and all(o["warm_flags"])),
        ),
        (
            f"record + check of a {o['nodes']}-node engine run (micrograd's Value, in Pyodide)",
            "≤ 1 s",
            f"record {ms(o['record'])} + check {ms(o['check'])} · worker's whole run "
            f"{ms(o['worker'])} · Run → drawn (POST /api/own included) {ms(o['shown'])}",
            "—",
            verdict(o["record"] + o["check"] <= 1.0),
        ),
        (
            "the main page's first paint, for students who never open /own",
            "not slowed: no Pyodide there",
            f"first contentful paint median {ms(m['fcp'])} · {m['bytes'] / 1024:.0f} KiB of HTML · "
            f"{m['pyodide']} requests for Pyodide or /own",
            "—",
            verdict(m["pyodide"] == 0),
        ),
    ]
