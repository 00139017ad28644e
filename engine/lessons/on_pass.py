"""A lesson that looks at one backward pass, of a run of several: the pass on show.

`pass_run(run, k)` is the run seen as that pass alone (a `PassRun`, the lessons' view of what
engine/drawing/passes.py `pass_view` draws): the nodes that pass's graph holds (those made for
it, the leaves, and what they read), its output, seed and recorded steps, the leaves' values as
they were when it ran, each node's `.grad` as that pass left it (a leaf's accumulated, as the
program sees it after that pass); ids as in the whole run's trace. Inside the block the nodes
hold those values and grads; after it they are as they were. A run of one pass is its own view.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from engine.program import Run, kept_grads, traced
from engine.tracing.record import Trace


def kept_pass(passes: list[Any], k: int) -> int:
    """The pass to look at for `k` (clamped): a summarised pass is seen as the nearest kept one,
    as the page draws it."""
    k = max(0, min(int(k), len(passes) - 1))
    kept = [i for i, p in enumerate(passes) if p.kept]
    return min(kept, key=lambda i: (abs(i - k), -i)) if kept else k


@dataclasses.dataclass(eq=False)
class PassRun(Run):
    """A run seen as one of its passes. Its `trace_with` runs that pass again over the pass's
    graph (the whole run's nodes keep their labels and grads)."""

    every: list[Any] = dataclasses.field(default_factory=list)  # the whole run's nodes
    index: int = 0  # the pass, in the run's passes

    @contextlib.contextmanager
    def trace_with(self, accumulate: str, order: str) -> Iterator[Trace]:
        own = self.trace
        with kept_grads(self.every):
            # Over every node, so no label is worked out again for a part of the graph.
            fresh = traced(self.output, self.every, accumulate, order, own.seed)
            yield dataclasses.replace(
                own,
                topo=fresh.topo,
                records=fresh.records,
                accumulate=accumulate,
                order=order,
                passes=[],
                pass_of={},
            )


@contextlib.contextmanager
def pass_run(run: Run, k: int | None) -> Iterator[Run]:
    """The run as its pass `k` (None, or a run of one pass: the run itself)."""
    passes = run.trace.passes
    if k is None or len(passes) <= 1:
        yield run
        return
    k = kept_pass(passes, k)
    p = passes[k]
    last = len(passes) - 1
    pass_of = run.trace.pass_of
    keep = {
        n.seq for n in run.nodes if n.kind == "leaf" or min(pass_of.get(n.seq, last), last) == k
    }
    keep |= {n.seq for n in p.topo}
    by_seq = {n.seq: n for n in run.nodes}
    todo = list(keep)
    while todo:
        for x in by_seq[todo.pop()].inputs:
            if x.seq not in keep and x.seq in by_seq:
                keep.add(x.seq)
                todo.append(x.seq)
    nodes = [n for n in run.nodes if n.seq in keep]
    trace = Trace(
        nodes,
        p.output,
        p.topo,
        p.records or [],
        run.accumulate,
        run.order,
        run.trace.free,
        numbers=run.trace.numbers,
        seed=p.seed,
        passes=[p],
        id_of=dict(run.ids),
    )
    view = PassRun(
        run.source,
        run.scan,
        run.interpreter,
        trace,
        run.limits,
        run.free,
        every=list(run.nodes),
        index=k,
    )
    leaves = [n for n in nodes if n.kind == "leaf" and n.seq in p.leaves_before]
    then = {n.seq for n in leaves}
    saved = [n.data for n in leaves]
    try:
        with kept_grads(view.every):
            for n in nodes:
                if n.seq in then:
                    n.data = p.leaves_before[n.seq]
                n.grad = trace.grad_of(n) if n.kind != "const" else None
            yield view
    finally:
        for n, data in zip(leaves, saved, strict=True):
            n.data = data
