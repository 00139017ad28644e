"""Rows about loops of passes: a training loop answered as the page asks for it.

Each program is sent as POST /api/render (trace and drawing, server time, in-process) with the
cache cleared, so every answer is made anew: how its time and bytes grow with the epochs, and
how many passes the trace keeps whole (the rest summarised: engine/tracing/passes.py).
"""

from __future__ import annotations

import gzip
from typing import Any

from bench.measure import InProcess, median


def regression(epochs: int) -> str:
    """d2l's linear regression from scratch, shortened: 2 parameters, 20 points, SGD by hand."""
    return (
        "import torch\nX = torch.linspace(0, 1, 20)\ny = 3 * X + 2\n"
        "w = torch.tensor(0.0, requires_grad=True)\nb = torch.tensor(0.0, requires_grad=True)\n"
        f"for epoch in range({epochs}):\n    loss = ((w * X + b - y) ** 2).mean()\n"
        "    loss.backward()\n    with torch.no_grad():\n        w -= 0.5 * w.grad\n"
        "        b -= 0.5 * b.grad\n    w.grad.zero_()\n    b.grad.zero_()\nprint(w, b)"
    )


def training_loops(quick: bool) -> dict[str, Any]:
    from app import cache
    from app.main import app

    client = InProcess(app)
    out: dict[str, Any] = {}
    try:
        client.request("POST", "/api/render", json_body={"source": "x*y + x"})  # warm up
        for epochs in (3, 100, 1000):
            times, body, size = [], None, 0
            for salt in range(2 if quick else 5):
                cache.clear()
                source = regression(epochs) + f"\n# {salt}"
                answer = client.request("POST", "/api/render", json_body={"source": source})
                assert answer.status == 200, answer.body[:200]
                times.append(answer.seconds)
                body, size = answer.json(), len(answer.body)
            raw = len(gzip.decompress(client_body(client, regression(epochs))))
            passes = body["trace"].get("passes") or [{}]
            out[f"{epochs} epochs"] = {
                "median_s": median(times),
                "bytes_on_wire": size,
                "bytes_json": raw,
                "passes": len(passes),
                "kept": sum(1 for p in passes if p.get("kept", True)),
                "steps": len(body["trace"]["steps"]),
            }
    finally:
        client.close()
    return out


def client_body(client: InProcess, source: str) -> bytes:
    """The answer's bytes as JSON (asked for gzip, so that both sizes come from one answer)."""
    answer = client.request(
        "POST", "/api/render", json_body={"source": source}, headers={"accept-encoding": "gzip"}
    )
    return (
        answer.body
        if answer.headers.get("content-encoding") == "gzip"
        else gzip.compress(answer.body)
    )


def rows(r: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    from bench.measure import ms

    out = []
    for name, row in r.items():
        out.append(
            (
                f"training loop, {name} (linear regression, POST /api/render, server time)",
                "≤ 6 s, never a 5xx",
                f"{ms(row['median_s'])}; {row['bytes_json'] / 1024:.0f} KiB JSON, "
                f"{row['passes']} passes ({row['kept']} kept whole), {row['steps']} steps",
                "—",
                "✅ met" if row["median_s"] <= 6 else "❌ missed",
            )
        )
    return out
