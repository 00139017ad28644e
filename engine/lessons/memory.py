"""Lesson 8, what backward keeps alive: the memory cost of reverse mode.

A local backward needs some forward values (`ū·b` needs b), so the forward pass must keep them
until that node's backward has run: PyTorch's saved tensors. Per backward step, this lists the
values still needed, the ones freed after their last use, and the peak (which is right after
the forward pass: reverse mode holds the most when it starts). What each op keeps is its own
`saves` (engine/autograd/ops), after PyTorch's choices (mul keeps the other factor, exp and
tanh keep their output, add keeps nothing). Nodes cut off by const()/detach(), or computed
from constants only, run no backward and keep nothing.

Bounded: the work is linear in what is sent; a program whose per-step `alive` lists would
pass MAX_ALIVE_CELLS ids in all is refused (413, limit "max_alive_cells") before they are
made, and the request's deadline (max_request_seconds) is checked as the steps go.
"""

from __future__ import annotations

from typing import Any

from engine.autograd.graph import reachable
from engine.autograd.value import Value
from engine.errors import fail
from engine.lessons.common import op_nodes
from engine.limits import check_deadline
from engine.program import Run
from engine.tracing.record import Trace

# Ids listed in the steps' `alive` lists, summed over the steps (about 8 bytes of JSON each).
# A chain of n saving ops lists about n²/2: up to about 1,400 of them fit.
MAX_ALIVE_CELLS = 1_000_000


def saved_by(node: Value) -> list[Value]:
    """The forward values `node`'s local backward reads, without repeats."""
    assert node.op is not None
    needs = [x.requires_grad for x in node.inputs]
    out: dict[int, Value] = {}
    for item in node.op.saves(needs):
        v = node if item == "out" else node.inputs[int(item[2:])]
        out[v.seq] = v
    return list(out.values())


def memory(run: Run) -> dict[str, Any]:
    """Per backward step of the run's order, the saved values alive, freed and used."""
    with run.trace_with("add", run.order) as trace:
        ids = run.ids
        users: dict[int, list[int]] = {}  # value seq -> the op nodes whose backward reads it
        value: dict[int, Value] = {}
        for node in op_nodes(trace.topo):
            for v in saved_by(node):
                users.setdefault(v.seq, []).append(node.seq)
                value[v.seq] = v
        step_of = {s.node.seq: k for k, s in enumerate(trace.steps) if s.kind == "backward"}
        last = {seq: max(step_of[u] for u in us) for seq, us in users.items()}
        saved = [
            {
                "value": ids[seq],
                "by": [ids[u] for u in users[seq]],
                "last_step": last[seq],
                "elements": int(value[seq].data.size),
                "kind": value[seq].kind,
            }
            for seq in sorted(users)
        ]
        steps = alive_per_step(trace, ids, value, last)
        peak = max(steps, key=lambda s: (s["elements"], s["count"]))
        return {
            "saved": saved,
            "steps": steps,
            "peak": {"step": peak["step"], "count": peak["count"], "elements": peak["elements"]},
            **unsaved(trace, ids, set(users)),
            "forward_values": sum(1 for n in trace.nodes if n.op is not None),
        }


def alive_per_step(
    trace: Trace, ids: dict[int, str], value: dict[int, Value], last: dict[int, int]
) -> list[dict[str, Any]]:
    """Each step's saved values still alive, those freed after it, and those it read."""
    # Each step lists the values still alive: that is quadratic in a long chain (a 2,000-node
    # chain of sin would list 2 million ids), so it is counted first and refused over the limit.
    cells = len(last) + sum(last.values())
    if cells > MAX_ALIVE_CELLS:
        raise fail(
            "limit_max_alive_cells", code="too_large", limit="max_alive_cells",
            n=cells, values=len(last), steps=len(trace.steps), max=MAX_ALIVE_CELLS,
        )  # fmt: skip
    steps = []
    alive = sorted(last)
    for k, st in enumerate(trace.steps):
        if k % 64 == 0:
            check_deadline()  # max_request_seconds, as the build checks it
        if k > 0:
            alive = [seq for seq in alive if last[seq] >= k]  # shrinks: work = the cells sent
        freed = [seq for seq in alive if k > 0 and last[seq] == k]
        steps.append(
            {
                "step": k,
                "node": ids[st.node.seq],
                "alive": [ids[s] for s in alive],
                "freed": [ids[s] for s in freed],
                "uses": [ids[v.seq] for v in saved_by(st.node)] if k > 0 else [],
                "count": len(alive),
                "elements": sum(int(value[s].data.size) for s in alive),
                "activations": sum(1 for s in alive if value[s].kind == "op"),
            }
        )
    return steps


def unsaved(trace: Trace, ids: dict[int, str], saved: set[int]) -> dict[str, list[str]]:
    """The op nodes whose values backward never reads: computed but not saved, cut off from
    the output (or from every parameter), and the constants const()/detach() made."""
    on_path = {n.seq for n in reachable(trace.output)}
    ran = {n.seq for n in op_nodes(trace.topo)}
    return {
        "not_saved": [
            ids[n.seq]
            for n in trace.nodes
            if n.op is not None and n.seq in ran and n.seq not in saved
        ],
        "cut": [
            ids[n.seq]
            for n in trace.nodes
            if n.op is not None and (n.seq not in on_path or not n.requires_grad)
        ],
        "detached": [
            ids[n.seq]
            for n in trace.nodes
            if n.kind == "const" and n.text and n.text.startswith(("const(", "detach("))
        ],
    }
