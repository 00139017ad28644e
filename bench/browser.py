"""One step in the browser: Chromium (Debian's, through Playwright) on a 200-node graph.

The page already holds the whole trace and the laid-out drawing; a step is `setPos(k)`: the
page restyles the SVG and the table. Timed inside the page, with the style and layout it
forces (getBoundingClientRect), for every step forwards.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from bench.chromium import ARGS, CHROMIUM, have_chromium
from bench.load import HOST, server
from bench.measure import median, percentile
from bench.programs import REGRESSION, sized_program

STEP_ALL = """
() => {
  const g = window.gradtrace;
  const svg = document.querySelector('#graph svg');
  const table = document.querySelector('#grad-table');
  const times = [];
  const n = g.maxPos();
  for (let round = 0; round < 2; round++) {
    g.setPos(0);
    for (let k = 1; k <= n; k++) {
      const t0 = performance.now();
      g.setPos(k);
      svg.getBoundingClientRect();
      table.getBoundingClientRect();
      times.push(performance.now() - t0);
    }
  }
  return {times, steps: n, nodes: svg.querySelectorAll('g.node').length};
}
"""

# The same steps as a user sees them: each in its own frame. A step starts in a
# requestAnimationFrame callback and ends when a task posted from there runs, which is after
# the frame's style, layout and paint (work the synchronous loop above leaves undone, paint).
STEP_FRAMES = """
async () => {
  const g = window.gradtrace;
  const n = g.maxPos();
  const times = [];
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  const after = () => new Promise((done) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => done();
    ch.port2.postMessage(0);
  });
  for (let round = 0; round < 2; round++) {
    g.setPos(0);
    await frame();
    for (let k = 1; k <= n; k++) {
      await frame();
      const t0 = performance.now();
      g.setPos(k);
      await after();
      times.push(performance.now() - t0);
    }
  }
  return times;
}
"""


def one_step(quick: bool) -> dict[str, Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "playwright is not installed (the test extra)"}
    if not have_chromium():
        return {"skipped": f"no Chromium at {CHROMIUM}"}
    source = sized_program(200)
    with server(1) as (port, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            url = f"http://{HOST}:{port}/?" + urllib.parse.urlencode({"source": source})
            page.goto(url, timeout=120_000)
            page.wait_for_selector("#graph svg g.node", timeout=120_000)
            result = page.evaluate(STEP_ALL)
            frames = page.evaluate(STEP_FRAMES)
        finally:
            browser.close()
    times = [t / 1000 for t in result["times"]]
    return {
        "steps": result["steps"],
        "nodes": result["nodes"],
        "median": median(times),
        "p95": percentile(times, 95),
        "max": max(times),
        # Per frame (setPos at a frame's start to the end of that frame's rendering, paint
        # included). Never less than the above, so the row's verdict stays on the strict one.
        "frame_median": median([t / 1000 for t in frames]),
        "frame_p95": percentile([t / 1000 for t in frames], 95),
        "frame_max": max(frames) / 1000,
    }


# The lesson row: the same steps with a lesson open that follows the page's stepper ("= instead
# of +=" redraws two step-by-grad tables). An MLP written out as scalars, about 240 nodes.
LESSON = "compare_assign"
LESSON_MLP = (3, (6, 7, 1))  # bench.programs.mlp_program(3, [6, 7, 1]): 247 nodes, 149 steps

STEP_LESSON = """
(rounds) => {
  const g = window.gradtrace;
  const body = document.querySelector('#lesson-body');
  const times = [];
  const n = g.maxPos();
  for (let round = 0; round < rounds; round++) {
    g.setPos(0);
    for (let k = 1; k <= n; k++) {
      const t0 = performance.now();
      g.setPos(k);
      body.getBoundingClientRect();
      document.body.getBoundingClientRect();
      times.push(performance.now() - t0);
    }
  }
  return {times, steps: n, nodes: g.state.trace.nodes.length};
}
"""


def lesson_step(quick: bool) -> dict[str, Any]:
    """A main step with the compare_assign lesson open, on the MLP; beside it the same steps
    on the plain page (no lesson), in the same browser."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "playwright is not installed (the test extra)"}
    if not have_chromium():
        return {"skipped": f"no Chromium at {CHROMIUM}"}
    from bench.programs import mlp_program

    source = mlp_program(LESSON_MLP[0], LESSON_MLP[1])
    rounds = 1 if quick else 2
    out: dict[str, Any] = {}
    with server(1) as (port, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for key, extra in (("plain", {}), ("lesson", {"lesson": LESSON})):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                query = urllib.parse.urlencode({"source": source, **extra})
                page.goto(f"http://{HOST}:{port}/?{query}", timeout=120_000)
                page.wait_for_selector("#graph svg g.node", timeout=120_000)
                if extra:
                    page.wait_for_selector(f"#lesson-body[data-lesson={LESSON}] table")
                out[key] = page.evaluate(STEP_LESSON, rounds)
                page.close()
        finally:
            browser.close()
    times = [t / 1000 for t in out["lesson"]["times"]]
    plain = [t / 1000 for t in out["plain"]["times"]]
    return {
        "lesson": LESSON,
        "steps": out["lesson"]["steps"],
        "nodes": out["lesson"]["nodes"],
        "median": median(times),
        "p95": percentile(times, 95),
        "max": max(times),
        "plain_median": median(plain),
        "plain_p95": percentile(plain, 95),
    }


# The pass row (issue 24): a 100-epoch linear regression (100 passes, 599 steps). Every pass's
# drawing is asked for and kept first (static/js/passes.js), then every step is timed as above;
# the steps that cross into another pass (a new drawing, the table's rows of three passes) are
# reported apart too.

WARM_PASSES = """
async () => {
  const g = window.gradtrace;
  const ps = g.state.trace.passes;
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  for (let k = 0; k < ps.length; k++) {
    g.setPos(ps[k].first_step);
    for (let i = 0; i < 600; i++) {
      const svg = document.querySelector('#graph svg');
      if (svg && svg.dataset.pass === String(k)) break;
      await frame();
    }
  }
  return ps.length;
}
"""

STEP_PASSES = """
() => {
  const g = window.gradtrace;
  const steps = g.state.trace.steps;
  const table = document.querySelector('#grad-table');
  const all = [], crossing = [];
  for (let round = 0; round < 2; round++) {
    g.setPos(0);
    for (let k = 1; k < steps.length; k++) {
      const t0 = performance.now();
      g.setPos(k);
      document.querySelector('#graph svg').getBoundingClientRect();
      table.getBoundingClientRect();
      const t = performance.now() - t0;
      all.push(t);
      if (steps[k].pass !== steps[k - 1].pass) crossing.push(t);
    }
  }
  return {all, crossing, steps: steps.length - 1, passes: g.state.trace.passes.length};
}
"""


def pass_step(quick: bool) -> dict[str, Any]:
    """Every step of a 100-pass loop on the page, its drawings kept: median, p95 and max, and
    the same of the steps that cross into another pass."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "playwright is not installed (the test extra)"}
    if not have_chromium():
        return {"skipped": f"no Chromium at {CHROMIUM}"}
    with server(1) as (port, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            query = urllib.parse.urlencode({"source": REGRESSION, "step": 0})
            page.goto(f"http://{HOST}:{port}/?{query}", timeout=120_000)
            page.wait_for_selector("#graph svg g.node", timeout=120_000)
            page.evaluate(WARM_PASSES)
            out = page.evaluate(STEP_PASSES)
        finally:
            browser.close()
    every = [t / 1000 for t in out["all"]]
    crossing = [t / 1000 for t in out["crossing"]]
    return {
        "passes": out["passes"],
        "steps": out["steps"],
        "median": median(every),
        "p95": percentile(every, 95),
        "max": max(every),
        "crossing_median": median(crossing),
        "crossing_max": max(crossing),
    }


if __name__ == "__main__":  # python -m bench.browser: the lesson row alone (--passes: the pass row)
    import json
    import sys

    row = pass_step if "--passes" in sys.argv else lesson_step
    json.dump(row("--quick" in sys.argv), sys.stdout, indent=1)
    sys.stdout.write("\n")
