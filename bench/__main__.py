"""`python -m bench`: every row of the speed-and-scale targets, measured against its anchor in
the same run, printed as a table (Markdown, so it pastes into the README).

    python -m bench              # everything (about 5 minutes on 2 cores)
    python -m bench --quick      # fewer repeats, shorter load test (about 2 minutes)
    python -m bench --tiny       # a smoke run of every in-process row (seconds; used by a test)
    python -m bench --only engine,size --json out.json

Needs the `bench` extra (micrograd) and Graphviz; the browser row needs Playwright and
Debian's Chromium (the `test` extra) and is skipped without them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.measure import ms

ROWS = (
    "first",
    "steps",
    "browser",
    "own",
    "size",
    "engine",
    "recording",
    "load",
    "memory",
    "rooms",
    "passes",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter load")
    parser.add_argument("--tiny", action="store_true", help="smoke run: in-process rows only")
    parser.add_argument("--only", default="", help=f"comma-separated rows of {', '.join(ROWS)}")
    parser.add_argument("--json", default="", help="also write the raw numbers here")
    args = parser.parse_args(argv)
    only = [r for r in args.only.split(",") if r] or list(ROWS)
    if args.tiny:
        only = [r for r in only if r in ("first", "size", "engine", "recording")]
    quick = args.quick or args.tiny
    unknown = set(only) - set(ROWS)
    if unknown:
        parser.error(f"unknown rows: {', '.join(sorted(unknown))}")

    results: dict[str, Any] = {}
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    for row in only:
        t = time.perf_counter()
        print(f"… {row}", file=sys.stderr, flush=True)
        try:
            results[row] = RUNNERS[row](quick, args.tiny)
        except Exception as exc:  # one row failing must not lose the others
            results[row] = {"failed": f"{type(exc).__name__}: {exc}".splitlines()[0][:200]}
        print(f"  {row}: {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    results["_meta"] = {
        "seconds": time.perf_counter() - started,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "mode": "tiny" if args.tiny else ("quick" if quick else "full"),
        # Other work on the machine shows in every number; the load average says how much.
        "load": (load_before, os.getloadavg()[0]),
    }
    print(report(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, default=str)
    return 0


# --- running ------------------------------------------------------------------------------------


def _first(quick: bool, tiny: bool) -> Any:
    from bench import server_rows

    out = server_rows.first_picture(quick, tiny)
    if not tiny:
        out["breakdown"] = server_rows.drawing_cost(quick)
    return out


def _steps(quick: bool, tiny: bool) -> Any:
    from bench import server_rows

    return server_rows.every_step(quick)


def _browser(quick: bool, tiny: bool) -> Any:
    from bench import browser

    out = browser.one_step(quick)
    if "skipped" not in out:  # the same browser run, with a lesson open (issue 16)
        out["lesson_step"] = browser.lesson_step(quick)
        out["pass_step"] = browser.pass_step(quick)  # issue 24: a 100-pass loop
    return out


def _own(quick: bool, tiny: bool) -> Any:
    from bench import own_rows

    return own_rows.own_engine(quick)


def _size(quick: bool, tiny: bool) -> Any:
    from bench import server_rows

    return server_rows.trace_size(quick)


def _engine(quick: bool, tiny: bool) -> Any:
    from bench import engine_rows

    out = engine_rows.per_node(quick, tiny)
    out["deep"] = engine_rows.deep_chains()
    return out


def _recording(quick: bool, tiny: bool) -> Any:
    from bench import engine_rows

    return engine_rows.recording(quick)


def _load(quick: bool, tiny: bool) -> Any:
    from bench import load
    from bench.programs import small_program

    return {w: load.classroom(w, quick, small_program) for w in (1, 2)}


def _memory(quick: bool, tiny: bool) -> Any:
    from bench import load
    from bench.programs import loop_program, small_program

    big = [loop_program(2000, salt=i) for i in range(3)] + [
        "W = randn(128, 128)\nx = randn(128)\nL = ((W @ x)**2).sum()"
    ]
    return load.memory(quick, small_program, big)


def _rooms(quick: bool, tiny: bool) -> Any:
    from bench import rooms

    steps = 3 if tiny else 10 if quick else 20
    return rooms.classroom(10 if tiny else 200, steps, bot=10 if tiny else rooms.BOT_SOCKETS)


def _passes(quick: bool, tiny: bool) -> Any:
    from bench import pass_rows

    return pass_rows.training_loops(quick)


RUNNERS: dict[str, Callable[[bool, bool], Any]] = {
    "first": _first,
    "steps": _steps,
    "browser": _browser,
    "own": _own,
    "size": _size,
    "engine": _engine,
    "recording": _recording,
    "load": _load,
    "memory": _memory,
    "rooms": _rooms,
    "passes": _passes,
}


# --- the table ---------------------------------------------------------------------------------


def _verdict(ok: bool | None) -> str:
    return "–" if ok is None else ("✅ met" if ok else "❌ missed")


def _size_of(name: str) -> int:
    """ "loop 2,000" -> 2000."""
    return int(name.split()[1].replace(",", ""))


def ok(r: dict[str, Any], row: str) -> bool:
    return row in r and "failed" not in r[row]


def report(r: dict[str, Any]) -> str:
    rows: list[tuple[str, str, str, str, str]] = []
    details: list[str] = []

    if ok(r, "first"):
        f = r["first"]
        sizes = f["sizes"]
        worst = max(s["median"] for n, s in sizes.items() if s["nodes"] <= 40)
        rows.append(
            (
                "request → first picture + whole trace, ≤ 40 nodes "
                "(new program and shape, server time)",
                "median ≤ 5 ms",
                " · ".join(f"{s['nodes']} nodes {ms(s['median'])}" for s in sizes.values()),
                f"micrograd + draw_dot + `dot`, 4 nodes: {ms(f['mg_4'])}",
                _verdict(worst <= 0.005),
            )
        )
        gallery = f.get("gallery") or []
        if gallery:
            times = sorted(g["median"] for g in gallery)
            slowest = max(gallery, key=lambda g: g["median"])
            fast = sum(1 for t in times if t <= 0.005)
            counts = [g["nodes"] for g in gallery]
            rows.append(
                (
                    f"the same, the gallery's {len(gallery)} lessons "
                    f"({min(counts)}–{max(counts)} nodes)",
                    "median ≤ 5 ms",
                    f"median of the lessons {ms(statistics.median(times))} · {fast} of "
                    f"{len(times)} ≤ 5 ms · slowest {slowest['id']} ({slowest['nodes']} nodes) "
                    f"{ms(slowest['median'])}",
                    "—",
                    _verdict(statistics.median(times) <= 0.005),
                )
            )
        if all("edit" in s for s in sizes.values()):
            worst_edit = max(s["edit"] for s in sizes.values() if s["nodes"] <= 40)
            rows.append(
                (
                    "the same, one number changed (a student editing: the layout is reused)",
                    "median ≤ 5 ms",
                    " · ".join(
                        f"{s['nodes']} nodes {ms(s['edit'])} ({s['reused']:.0%} reused)"
                        for s in sizes.values()
                    ),
                    "—",
                    _verdict(worst_edit <= 0.005),
                )
            )
        big = f.get("big", {})
        limits = {
            "dag 500": 0.080,
            "loop 500": 0.080,
            "loop 500 in full": 0.080,
            "loop 2,000": 0.600,
            "dag 1,000": 0.600,
        }
        anchor = " · ".join(
            f"{k.split('_')[1]} nodes {ms(v)}" for k, v in f.items() if k.startswith("dot_")
        )
        for sizes_name, target, keys in (
            ("the same, 500 nodes (the most the drawing takes, per spec)", "≤ 80 ms", (500,)),
            (
                "the same, 1,000–2,000 nodes",
                "≤ 600 ms, or “too large to draw” above a stated limit (500 drawn)",
                (1000, 2000),
            ),
        ):
            mine = {k: b for k, b in big.items() if _size_of(k) in keys}
            if not mine:
                continue
            rows.append(
                (
                    sizes_name,
                    target,
                    " · ".join(
                        f"{k} ({b['nodes']}, {b['drawn']}) {ms(b['median'])}"
                        for k, b in mine.items()
                    ),
                    f"`dot` alone (micrograd-style DOT): {anchor}",
                    _verdict(all(b["median"] <= limits[k] for k, b in mine.items())),
                )
            )
        rows.append(
            (
                "the same program again (worker's cache; server time)",
                "≤ 1 ms",
                f"POST /api/render {ms(f['cache_hit'])} · GET /api/svg {ms(f['svg_again'])} · "
                f"If-None-Match → {f['svg_304_status']} in {ms(f['svg_304'])}",
                "—",
                _verdict(f["cache_hit"] <= 0.001),
            )
        )
        if "breakdown" in f:
            b = f["breakdown"]
            details.append(
                f"- A 500-node loop program ({b['drawn']} boxes drawn, shared values as copies):"
                f" engine + trace {ms(b['trace'])}, Graphviz layout {ms(b['layout'])}, SVG "
                f"tagging {ms(b['finish'])}."
            )

    if ok(r, "steps"):
        s = r["steps"]
        ratio = s["naive"] / s["ours"]
        rows.append(
            (
                f"MLP(3,[4,4,1]) as a program ({s['nodes']} nodes, {s['steps']} steps), every step "
                "viewable",
                "≥ 50× faster than re-rendering per step",
                f"one answer {ms(s['ours'])}: {ratio:.0f}× faster",
                f"naive per-step re-render {ms(s['naive'])} · micrograd draw_dot per step "
                f"({s['mg_boxes']} boxes) {ms(s['micrograd'])}",
                _verdict(ratio >= 50),
            )
        )

    if ok(r, "browser"):
        b = r["browser"]
        if "skipped" in b:
            rows.append(
                ("one step in the browser, 200-node graph", "≤ 16 ms", b["skipped"], "—", "–")
            )
        else:
            rows.append(
                (
                    f"one step in the browser ({b['nodes']} nodes drawn, {b['steps']} steps)",
                    "≤ 16 ms, no request",
                    f"script, style and layout: median {ms(b['median'])} · p95 {ms(b['p95'])} · "
                    f"max {ms(b['max'])}"
                    + (
                        f"; to the end of the painted frame (software raster): median "
                        f"{ms(b['frame_median'])} · p95 {ms(b['frame_p95'])}"
                        if "frame_median" in b
                        else ""
                    ),
                    "—",
                    _verdict(b["p95"] <= 0.016),
                )
            )
        ls = b.get("lesson_step") or {}
        if "median" in ls:
            rows.append(
                (
                    f"one step with the {ls['lesson']} lesson open ({ls['nodes']}-node MLP)",
                    "≤ 50 ms",
                    f"median {ms(ls['median'])} · p95 {ms(ls['p95'])} · max {ms(ls['max'])}; "
                    f"the plain page {ms(ls['plain_median'])}",
                    "—",
                    _verdict(ls["median"] <= 0.05),
                )
            )

        ps = b.get("pass_step") or {}
        if "median" in ps:
            rows.append(
                (
                    f"a page step on a {ps['passes']}-pass program ({ps['steps']} steps, "
                    "every pass's drawing kept)",
                    "≤ 16 ms",
                    f"median {ms(ps['median'])} · p95 {ms(ps['p95'])} · max {ms(ps['max'])}; "
                    f"into another pass: median {ms(ps['crossing_median'])} · "
                    f"max {ms(ps['crossing_max'])}",
                    "—",
                    _verdict(ps["p95"] <= 0.016),
                )
            )

    if ok(r, "own"):  # the own-engine page (bench/own_rows.py)
        from bench import own_rows

        rows.extend(own_rows.table(r["own"], ms, _verdict))

    if ok(r, "size"):
        z = r["size"]
        by = {fam: [x for x in z["rows"] if x["family"] == fam] for fam in ("dag", "loop")}
        meas = " · ".join(
            f"{fam}: {min(x['bytes'] for x in xs):.0f}–{max(x['bytes'] for x in xs):.0f} B/node "
            f"(±{z[fam + '_spread'] * 50:.0f}%), gzip "
            f"{min(x['gzip'] for x in xs):.0f}–{max(x['gzip'] for x in xs):.0f} B/node"
            for fam, xs in by.items()
        )
        snaps = by["dag"]
        rows.append(
            (
                f"trace bytes per node, {snaps[0]['nodes']} → {snaps[-1]['nodes']} nodes",
                "constant ±15%; compressed",
                meas,
                f"full per-step snapshots: {snaps[0]['snapshots']:.0f} → "
                f"{snaps[-1]['snapshots']:.0f} B/node",
                _verdict(max(z["dag_spread"], z["loop_spread"]) / 2 <= 0.15),
            )
        )

    if ok(r, "engine"):
        e = r["engine"]
        chain = e["chain_ours"] / e["chain_mg"]
        mlp = e["mlp_ours"] / e["mlp_mg"]
        rows.append(
            (
                "engine alone, forward + backward per node, trace off",
                "≤ 1.5× micrograd",
                f"chain {e['chain_ours'] * 1e6:.2f} µs ({chain:.2f}×) · MLP "
                f"{e['mlp_ours'] * 1e6:.2f} µs ({mlp:.2f}×); 100,000-step chain fine",
                f"micrograd chain {e['chain_mg'] * 1e6:.2f} µs · MLP {e['mlp_mg'] * 1e6:.2f} µs; "
                f"RecursionError past {e['deep']['mg_longest_ok']} chain steps",
                _verdict(max(chain, mlp) <= 1.5),
            )
        )
        details.append(
            f"- Engine, the bare Python API (no `quiet()` around the forward, so NumPy's error "
            f"state is switched per op): chain {e['chain_ours_plain'] * 1e6:.2f} µs/node."
        )

    if ok(r, "recording"):
        c = r["recording"]
        parts = [
            f"{k} ({v['nodes']} nodes) {v['recorded'] / v['plain']:.2f}×" for k, v in c.items()
        ]
        rows.append(
            (
                "recording the trace (backward with the recorder)",
                "≤ 2× backward without it",
                " · ".join(parts),
                " · ".join(f"{k}: {ms(v['plain'])} without" for k, v in c.items()),
                _verdict(all(v["recorded"] / v["plain"] <= 2 for v in c.values())),
            )
        )

    if ok(r, "load"):
        for w, c in r["load"].items():
            served = f"--workers {w}" if w > 1 else "1 worker"
            a = c["at_100"]
            errs = sum(a["errors"].values())
            rows.append(
                (
                    f"classroom on loopback, uvicorn {served}, 100 new programs/s (open loop)",
                    "p99 ≤ 100 ms; the most a worker sustains, reported",
                    f"p50 {ms(a['p50'])} · p99 {ms(a['p99'])} · {errs} errors · sustains "
                    f"{c['sustained']:.0f}/s ({c['sustained'] / w:.0f}/s per worker); "
                    f"saturated (8 in flight): {c['saturated']:.0f} answers/s",
                    "—",
                    _verdict(a["p99"] <= 0.100 and not errs),
                )
            )
            for step in c["ladder"]:
                details.append(
                    f"- {w} worker(s) at {step['rate']:.0f}/s: p50 {ms(step['p50'])}, p99 "
                    f"{ms(step['p99'])}, {step['throughput']:.0f}/s answered, errors "
                    f"{step['errors'] or 'none'}"
                )

    if ok(r, "memory"):
        m = r["memory"]
        rows.append(
            (
                f"memory over {m['requests']:,} requests (worker RSS)",
                "flat; bounded per request",
                f"{m['samples'][0][1]:.0f} → {m['samples'][-1][1]:.0f} MB "
                f"(+{m['growth_second_half']:.1f} MB over the second half); largest programs "
                f"+{m['big_request_growth']:.1f} MB",
                "—",
                _verdict(m["growth_second_half"] <= 5),
            )
        )

    if ok(r, "rooms"):
        from bench import rooms

        rows.extend(rooms.rows(r["rooms"]))  # the class, and the class beside a bot

    if ok(r, "passes"):
        from bench import pass_rows

        rows.extend(pass_rows.rows(r["passes"]))

    for name, value in r.items():
        if isinstance(value, dict) and "failed" in value:
            rows.append((f"row `{name}`", "—", f"did not run: {value['failed']}", "—", "❌"))
    out = ["| what | target | measured | anchor (same run) | |", "|---|---|---|---|---|"]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    meta = r.get("_meta", {})
    out.append("")
    load = meta.get("load") or (float("nan"), float("nan"))
    out.append(
        f"{meta.get('mode', '')} run, {meta.get('cpus')} CPUs, Python {meta.get('python')}, "
        f"{meta.get('seconds', 0):.0f} s; load average {load[0]:.1f} before, {load[1]:.1f} after."
    )
    if details:
        out += ["", *details]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
