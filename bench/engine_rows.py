"""Rows about the engine alone: per-node cost against micrograd, and what recording costs."""

from __future__ import annotations

import random
import sys
from typing import Any

from bench import anchors
from bench.measure import median, timed
from engine.autograd import ops
from engine.autograd.backward import backward
from engine.autograd.graph import reachable
from engine.autograd.value import Value, constant, leaf
from engine.program import run_program
from engine.tracing.labels import assign_labels
from engine.tracing.record import TraceRecorder

# --- the same networks, written against gradtrace's Value -------------------------------------


class Neuron:
    def __init__(self, nin: int, rng: random.Random, nonlin: bool = True) -> None:
        self.w = [leaf(rng.uniform(-1, 1)) for _ in range(nin)]
        self.b = leaf(0.0)
        self.nonlin = nonlin

    def __call__(self, x: list[Value]) -> Value:
        act = sum((wi * xi for wi, xi in zip(self.w, x, strict=True)), self.b)
        return act.relu() if self.nonlin else act  # type: ignore[union-attr,attr-defined]


class MLP:
    """micrograd.nn.MLP, line for line (ReLU hidden layers, a linear output)."""

    def __init__(self, nin: int, nouts: list[int], seed: int = 0) -> None:
        rng = random.Random(seed)
        sz = [nin, *nouts]
        self.layers = [
            [Neuron(sz[i], rng, nonlin=i != len(nouts) - 1) for _ in range(sz[i + 1])]
            for i in range(len(nouts))
        ]

    def __call__(self, x: list[Value]) -> Value:
        for layer in self.layers:
            out = [n(x) for n in layer]
            x = out
        return x[0]


def chain(steps: int) -> Value:
    a, b, v = leaf(1.0001), leaf(0.001), leaf(0.5)
    for _ in range(steps):
        v = v * a + b
    return v


# --- rows ---------------------------------------------------------------------------------------


def per_node(quick: bool, tiny: bool = False) -> dict[str, Any]:
    """Forward + backward (trace off) per node, gradtrace vs micrograd, interleaved."""
    mg = anchors.micrograd()
    nn = anchors.micrograd_nn()
    reps = 3 if tiny else (15 if quick else 60)
    steps = 200  # micrograd's recursive topological sort is fine here (400 deep)

    def ours_chain() -> None:
        with ops.quiet():  # as run() builds: NumPy's warnings off once, not per op
            out = chain(steps)
        backward(out)

    def ours_chain_plain() -> None:  # the bare Python API, no quiet() around the forward
        backward(chain(steps))

    def mg_chain() -> None:
        anchors.micrograd_chain(steps).backward()

    model = MLP(3, [4, 4, 1])
    xs = [constant(v) for v in (2.0, 3.0, -1.0)]
    mg_model = nn.MLP(3, [4, 4, 1])
    mg_xs = [mg.Value(v) for v in (2.0, 3.0, -1.0)]

    def ours_mlp() -> None:
        with ops.quiet():
            out = model(xs)
        backward(out)

    def mg_mlp() -> None:
        mg_model(mg_xs).backward()

    with ops.quiet():
        chain_nodes = len(reachable(chain(steps)))
        mlp_nodes = len(reachable(model(xs)))
    mg_chain_nodes = anchors.micrograd_values(anchors.micrograd_chain(steps))
    mg_mlp_nodes = anchors.micrograd_values(mg_model(mg_xs))

    results: dict[str, list[float]] = {k: [] for k in ("oc", "op", "mc", "om", "mm")}
    for _ in range(3):  # interleave, so a busy moment hits both sides
        results["oc"] += timed(ours_chain, reps)
        results["mc"] += timed(mg_chain, reps)
        results["op"] += timed(ours_chain_plain, reps // 3 or 1)
        results["om"] += timed(ours_mlp, reps)
        results["mm"] += timed(mg_mlp, reps)
    return {
        "chain_steps": steps,
        "chain_ours": median(results["oc"]) / chain_nodes,
        "chain_ours_plain": median(results["op"]) / chain_nodes,
        "chain_mg": median(results["mc"]) / mg_chain_nodes,
        "mlp_ours": median(results["om"]) / mlp_nodes,
        "mlp_mg": median(results["mm"]) / mg_mlp_nodes,
        "chain_nodes": chain_nodes,
        "mlp_nodes": mlp_nodes,
        "mg_mlp_nodes": mg_mlp_nodes,
    }


def deep_chains() -> dict[str, Any]:
    """micrograd's recursive sort against gradtrace's iterative one on long chains."""
    limit = sys.getrecursionlimit()
    mg_ok = None
    for steps in (250, 499, 500, 1000):
        try:
            anchors.micrograd_chain(steps).backward()
            mg_ok = steps
        except RecursionError:
            break
    ours = 100_000
    with ops.quiet():
        out = chain(ours)
    backward(out)
    return {"mg_longest_ok": mg_ok, "ours_ok": ours, "recursion_limit": limit}


def recording(quick: bool) -> dict[str, Any]:
    """backward() with the trace recorder against without it, on programs from the language."""
    from bench.programs import mlp_program, sized_program

    out: dict[str, Any] = {}
    reps = 10 if quick else 40
    for name, source in (("mlp", mlp_program()), ("dag500", sized_program(500))):
        graph = run_program(source)
        assign_labels(graph.nodes)

        def plain(root: Value = graph.output) -> None:
            backward(root)

        def recorded(root: Value = graph.output) -> None:
            backward(root, recorder=TraceRecorder())

        a, b = [], []
        for _ in range(3):
            a += timed(plain, reps)
            b += timed(recorded, reps)
        out[name] = {"plain": median(a), "recorded": median(b), "nodes": len(graph.nodes)}
    return out
