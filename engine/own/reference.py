"""The same graph run by gradtrace's own engine: its grads beside the student's, and the first
step where the two part.

Each student node becomes a gradtrace node. An op made by a method that gradtrace's Value has
under the same name (`__mul__`, `__pow__`, `tanh`: Python's data model is the shared
vocabulary, and engine.autograd.ops.operators.ATTRIBUTES the list of what gradtrace's Value
has) is re-run by gradtrace on its own values; it is kept when it gives the student's forward
value. Any other op (a MiniTorch `ScalarFunction.apply`, a method gradtrace lacks) is an op
whose local gradient is the slope the browser measured. Then gradtrace's backward walks it:
its topological order, its `+=`, its recorder. Nothing here runs the student's code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from engine.autograd.backward import backward
from engine.autograd.ops.base import Array, Grads, Math, Needs, Op
from engine.autograd.ops.forward import quiet
from engine.autograd.ops.operators import ATTRIBUTES
from engine.autograd.value import Value, leaf
from engine.own.findings import close
from engine.own.schema import OwnNode, Recording
from engine.own.trace import reachable
from engine.tracing.record import TraceRecorder


class Measured(Op):
    """An op gradtrace has no rule for: its value as the student's engine computed it, and its
    local gradient the slopes measured by central differences (0 where none could be)."""

    name = "measured"
    symbol = "?"
    rules: ClassVar[tuple[str, ...]] = ()

    def __init__(self, value: float, slopes: Sequence[float]) -> None:
        self.value, self.slopes = value, tuple(slopes)
        self.arity = len(self.slopes)  # type: ignore[misc]

    def compute(self, *arrays: Array) -> Array:
        return np.float64(self.value)  # type: ignore[return-value]

    def gradient(self, g: Any, ins: Sequence[Any], out: Any, needs: Needs, m: Math) -> Grads:
        pairs = zip(self.slopes, needs, strict=False)
        return tuple(np.float64(s) * g if need else None for s, need in pairs)


def _exact(node: OwnNode, made: dict[str, Value]) -> Value | None:
    """gradtrace's own op of the same name on its own values, when it gives the same value."""
    fn = ATTRIBUTES.get(node.maker or "")
    if not callable(fn) or isinstance(fn, property) or node.maker in ("detach", "__getitem__"):
        return None
    if not node.args or any(a is None or (isinstance(a, str) and a not in made) for a in node.args):
        return None
    args = [made[a] if isinstance(a, str) else a for a in node.args]
    try:
        with quiet():
            out = fn(*args)
    except Exception:  # not the same op after all (a TypeError, a shape error…)
        return None
    if not isinstance(out, Value) or np.shape(out.data) != ():
        return None
    value = float(out.data)
    if not (math.isfinite(value) and close(value, node.value)):
        return None
    ins = {id(v) for v in out.inputs}
    if any(id(made[i]) not in ins for i in node.inputs):
        return None  # the same value from another graph: not the student's op
    return out


def _measured(rec: Recording, node: OwnNode, made: dict[str, Value]) -> Value:
    slopes = {s.arg: s for s in rec.local.get(node.id, ())}
    values = []
    for i, _ in enumerate(node.inputs):
        s = slopes.get(i)
        if s is None and node.inputs[i] in node.inputs[:i]:
            values.append(0.0)  # a repeated input: its slope is on its first edge
        else:
            values.append(s.slope if s is not None else 0.0)
    op = Measured(node.value, values)
    return Value(np.float64(node.value), op, tuple(made[i] for i in node.inputs))


def compare(rec: Recording) -> dict[str, Any]:
    """{grads: {id: gradtrace's grad}, exact: [ids gradtrace re-ran], measured: [ids by their
    slopes], parted: the first step of the student's last pass that differs from gradtrace's
    walk, or None}."""
    last = len(rec.passes) - 1
    output = rec.passes[last].output
    keep = reachable(rec, output)
    made: dict[str, Value] = {}
    exact, measured = [], []
    for n in rec.nodes:
        if n.id not in keep:
            continue
        if n.kind == "leaf":
            made[n.id] = leaf(n.value)
            continue
        v = _exact(n, made)
        if v is None:
            v = _measured(rec, n, made)
            measured.append(n.id)
        else:
            exact.append(n.id)
        made[n.id] = v
    recorder = TraceRecorder()
    with quiet():
        backward(made[output], recorder=recorder)
    of = {id(v): nid for nid, v in made.items()}
    grads = {nid: float(v.grad) if v.grad is not None else 0.0 for nid, v in made.items()}
    steps: dict[str, tuple[float, dict[str, float]]] = {}
    for node, upstream, edges in recorder.records[1:]:
        nid = of.get(id(node))
        if nid is None:
            continue
        sent: dict[str, float] = {}
        for arg, contribution, _, _ in edges or ():
            src = of.get(id(node.inputs[arg]))
            if src is not None:
                sent[src] = sent.get(src, 0.0) + float(contribution)
        steps[nid] = (float(upstream), sent)
    return {
        "grads": grads,
        "exact": exact,
        "measured": measured,
        "parted": _parted(
            rec, last, steps, {i: grads[i] for i in keep if rec.by_id[i].kind == "leaf"}
        ),
        "order": [of[id(r[0])] for r in recorder.records[1:] if id(r[0]) in of],
    }


def _parted(
    rec: Recording,
    p: int,
    ref: dict[str, tuple[float, dict[str, float]]],
    leaves: dict[str, float],
) -> dict[str, Any] | None:
    """The first step of pass `p` whose node began with a grad other than gradtrace's, ran
    again, or sent an input other than gradtrace sends it; else a node gradtrace runs that never
    ran; else a leaf whose final grad differs (one carried over from an earlier pass)."""
    ran: set[str] = set()
    for k, st in enumerate(rec.steps):
        if st.pass_ != p or st.kind != "backward" or st.node not in ref:
            continue
        up, sent = ref[st.node]
        if st.node in ran:
            return {"step": k, "node": st.node, "what": "again"}
        if not close(st.upstream, up):
            return {"step": k, "node": st.node, "yours": st.upstream, "theirs": up, "what": "grad"}
        ran.add(st.node)
        for src, want in sent.items():
            before, after = st.changed.get(src, (0.0, 0.0))
            if not close(after - before, want):
                return {"step": k, "node": st.node, "input": src, "yours": after - before,
                        "theirs": want, "what": "sent"}  # fmt: skip
    for nid, (_, sent) in ref.items():
        if nid not in ran and any(not close(v, 0.0) for v in sent.values()):
            return {"step": None, "node": nid, "what": "missing"}
    for nid in sorted(leaves, key=lambda i: rec.by_id[i].num):
        if not close(rec.by_id[nid].grad, leaves[nid]):
            return {"step": None, "node": nid, "yours": rec.by_id[nid].grad,
                    "theirs": leaves[nid], "what": "leaf"}  # fmt: skip
    return None
