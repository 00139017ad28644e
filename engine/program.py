"""run(source) -> Trace: the whole pipeline, source text → read → run (statements in order,
every backward() a pass where it stands) → the trace of its passes.

`run_program` gives the same run with what it made kept (a `Run`): the one run that the page's
trace and every lesson read (engine/lessons).
"""

from __future__ import annotations

import contextlib
import functools
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.autograd.backward import BackwardError, backward
from engine.autograd.ops import quiet
from engine.autograd.value import Value
from engine.errors import ProgramError, fail
from engine.inputs.given import free_names
from engine.language.interpreter import Interpreter
from engine.language.output import finish
from engine.language.scan import Scan
from engine.language.source import Source, read
from engine.library import LIBRARY
from engine.limits import DEFAULT_LIMITS, Limits
from engine.tracing.labels import assign_labels
from engine.tracing.passes import backward_error, empty_buffer, zero_like
from engine.tracing.record import Trace, trace
from engine.tracing.trace_json import to_json


@functools.lru_cache(maxsize=64)
def read_cached(source: str, limits: Limits) -> tuple[Source, Scan]:
    """The checked syntax tree and what is known of it before it runs, remembered (neither
    changes once made): a program's picture and page run it again."""
    src = read(source, limits)
    return src, Scan(src, limits.max_depth, LIBRARY)


def parse(source: str, limits: Limits = DEFAULT_LIMITS) -> Scan:
    """What a program is before it runs (its free names, warnings); ProgramError if it cannot
    be read."""
    return read_cached(source, limits)[1]


@dataclass(frozen=True)
class Options:
    accumulate: str = "add"
    order: str = "dfs"


@dataclass(eq=False)
class Run:
    """One program run once: what it read, the interpreter's state at its end (its graph, its
    passes, what it printed), the limits it ran under and the trace. The page's trace and every
    lesson read this one object; a lesson that needs another backward pass runs it on the
    graph of the pass on show (`trace_with`). Nothing in it is shared with another run but the
    syntax tree, which never changes."""

    source: Source
    scan: Scan
    interpreter: Interpreter
    trace: Trace
    limits: Limits
    free: list[dict[str, Any]]

    @property
    def nodes(self) -> list[Value]:
        return self.trace.nodes

    @property
    def output(self) -> Value:
        return self.trace.output

    @property
    def accumulate(self) -> str:
        return self.trace.accumulate

    @property
    def order(self) -> str:
        return self.trace.order

    @property
    def printed(self) -> list[dict[str, Any]]:
        """What the program's print(…) calls and notebook lines showed, in the order they ran:
        `{"line", "text", "pass"}`, written as the program's library prints."""
        several = len(self.interpreter.passes.passes) > 1
        hidden = {"open"}
        return [
            {k: v for k, v in p.items() if k not in hidden and (k != "pass" or several)}
            for p in self.interpreter.printed
        ]

    @property
    def warnings(self) -> list[Any]:
        return [*self.scan.warnings, *self.interpreter.warnings]

    @property
    def grads_built(self) -> list[dict[str, Any]]:
        return self.interpreter.passes.grads_built

    @functools.cached_property
    def ids(self) -> dict[int, str]:
        """Node seq -> its id `n0, n1, …` as in the trace."""
        return self.trace.ids()

    def id(self, node: Value) -> str:
        return self.ids[node.seq]

    @functools.cached_property
    def leaves(self) -> list[Value]:
        """The parameters, in creation order: the nodes a gradient is reported for."""
        return [n for n in self.nodes if n.kind == "leaf"]

    @contextlib.contextmanager
    def trace_with(self, accumulate: str, order: str) -> Iterator[Trace]:
        """The trace of a backward pass over the graph on show with these options: the run's
        own when they are its own and it has one pass, else a new pass (no new run). Inside
        the block the nodes' `.grad` are that pass's; after it they are as they were."""
        if (accumulate, order) == (self.accumulate, self.order) and len(self.trace.passes) <= 1:
            with kept_grads(self.nodes):
                for node in self.nodes:
                    node.grad = self.trace.grad_of(node) if node.kind != "const" else None
                yield self.trace
            return
        with kept_grads(self.nodes):
            yield traced(self.output, self.nodes, accumulate, order, self.trace.seed)


@contextlib.contextmanager
def kept_grads(nodes: list[Value]) -> Iterator[None]:
    """Put every node's `.grad` back as it was after the block, whatever backward ran in it
    (a backward pass never changes a grad in place, so the saved arrays stay as they were)."""
    saved = [node.grad for node in nodes]
    try:
        yield
    finally:
        for node, g in zip(nodes, saved, strict=True):
            node.grad = g


def run_program(
    source: str,
    values: dict[str, Any] | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    limits: Limits = DEFAULT_LIMITS,
) -> Run:
    """Read and run a program, recording every backward pass (a `Run`). Raises ProgramError."""
    check_options(accumulate, order)
    src, scan = read_cached(source, limits)
    # Python reads names in NFKC form (`𝐱` is `x`); the keys of `values` are read the same way.
    given = {unicodedata.normalize("NFKC", k): v for k, v in (values or {}).items()}
    free = free_names(scan.free, scan.labels, given, limits)
    it = Interpreter(src, scan, given, limits, Options(accumulate, order), LIBRARY)
    with quiet():  # NumPy's float warnings off once for the run, not per op
        try:
            it.run()
        except RecursionError:
            raise fail("limit_max_depth", code="too_deep", limit="max_depth",
                       max=limits.max_depth) from None  # fmt: skip
        finish(it)
    return Run(src, scan, it, make_trace(it, free, accumulate, order), limits, free)


def make_trace(it: Interpreter, free: list[dict[str, Any]], accumulate: str, order: str) -> Trace:
    """The trace of a run: every node of its kept passes (ids in creation order across the
    whole run), the last pass's output and order, and every kept pass's steps."""
    passes = it.passes.passes
    last = passes[-1]
    nodes = it.nodes
    assign_labels(nodes)
    records = [r for p in passes if p.kept for r in p.records or ()]
    result = Trace(
        nodes, last.output, last.topo, records, accumulate, order, free,
        numbers=it.passes.numbers, seed=last.seed, passes=passes,
        pass_of=dict(it.passes.pass_of), tangent_passes=it.passes.tangent_passes,
    )  # fmt: skip
    return result


def run(
    source: str,
    values: dict[str, Any] | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    limits: Limits = DEFAULT_LIMITS,
) -> Trace:
    """Read and run a program; its trace. Raises ProgramError."""
    return run_program(source, values, accumulate, order, limits).trace


def run_with_contrast(
    source: str,
    values: dict[str, Any] | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Trace, dict[str, Any] | None]:
    """`run`, and the last pass's final grads under the other accumulation (`+=` against
    `=`), from one run: the contrast the page shows beside the trace (see `contrast`)."""
    result = run(source, values, accumulate, order, limits)
    return result, contrast(result)


def contrast(result: Trace) -> dict[str, Any] | None:
    """One more backward pass on `result`'s last graph with the other accumulation, without a
    recorder; the nodes' own grads are put back afterwards. `{"accumulate": the other mode,
    "grads": {node id: grad}}`, or None when that mode's backward fails (a non-finite grad)."""
    other = "assign" if result.accumulate == "add" else "add"
    nodes = result.nodes
    buffers: dict[int, Any] = {}
    with kept_grads(nodes):
        for node in nodes:
            node.grad = None  # as trace() starts: what the output does not reach has none
            if other == "add" and node.kind == "leaf" and node.requires_grad:
                node.grad = buffers[node.seq] = empty_buffer(node.data.shape)  # as a pass does
        try:
            backward(result.output, accumulate=other, order=result.order, seed=result.seed,
                     keep_leaf_grads=bool(buffers))  # fmt: skip
        except BackwardError:
            return None
        ids = result.ids()
        grads: dict[str, Any] = {}
        for node in nodes:
            g = node.grad
            if g is not None and buffers.get(node.seq) is g:
                g = zero_like(g)
            g = g if g is not None else (np.zeros(node.data.shape) if node.kind == "leaf" else None)
            if g is not None:
                grads[ids[node.seq]] = to_json(np.asarray(g))
            elif len(result.passes) > 1 and node.kind == "op":
                # another pass's node, which this pass does not reach: no number, but a cell
                # (the page's table has a column for every pass's nodes)
                grads[ids[node.seq]] = None
        return {"accumulate": other, "grads": grads}


def check_options(accumulate: str, order: str) -> None:
    if accumulate not in ("add", "assign"):
        raise fail("bad_accumulate", code="bad_option", v=repr(accumulate)[:40])
    if order not in ("dfs", "kahn"):
        raise fail("bad_order", code="bad_option", v=repr(order)[:40])


def traced(
    output: Value, nodes: list[Value], accumulate: str, order: str, seed: Any = None
) -> Trace:
    """`trace` (a recorded backward pass), a non-finite grad raised as the program's error;
    `seed` is the output's first grad when the program gave one (L.backward(gradient=v))."""
    try:
        return trace(output, nodes, accumulate=accumulate, order=order, seed=seed)
    except BackwardError as err:
        raise backward_error(err) from None


__all__ = ["ProgramError", "Run", "parse", "run", "run_program", "run_with_contrast"]
