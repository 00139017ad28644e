"""run(source) -> Trace: the whole pipeline, source text → parse → graph → backward trace.

`run_program` gives the same run with its graph kept (a `Run`): the one parse and one build that
the page's trace and every lesson read (engine/lessons)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine.autograd.backward import BackwardError, backward
from engine.autograd.ops import quiet
from engine.autograd.value import Value
from engine.errors import ProgramError
from engine.language.build import Graph, build
from engine.language.ir import Program
from engine.language.parse import parse
from engine.language.printing import lines
from engine.limits import DEFAULT_LIMITS, Limits
from engine.tracing.cost import check_trace
from engine.tracing.record import Trace, trace
from engine.tracing.trace_json import to_json


@functools.lru_cache(maxsize=64)
def parse_cached(source: str, limits: Limits) -> Program:
    """`parse`, remembered (the IR is immutable): a program's picture and page run it again."""
    return parse(source, limits)


@dataclass(eq=False)
class Run:
    """One program parsed, built and backpropagated once: its IR, its graph (every node in
    creation order, the output, the free names' values, each grad() call), the limits it ran
    under and the trace of its backward pass. The page's trace and every lesson read this one
    object; a lesson that needs another backward pass runs it on this graph (`trace_with`).
    Nothing in it is shared with another run but the IR, which never changes."""

    program: Program
    graph: Graph
    trace: Trace
    limits: Limits

    @property
    def nodes(self) -> list[Value]:
        return self.graph.nodes

    @property
    def output(self) -> Value:
        return self.graph.output

    @property
    def accumulate(self) -> str:
        return self.trace.accumulate

    @property
    def order(self) -> str:
        return self.trace.order

    @functools.cached_property
    def ids(self) -> dict[int, str]:
        """Node seq -> its id `n0, n1, …` as in the trace."""
        return self.trace.ids()

    def id(self, node: Value) -> str:
        return self.ids[node.seq]

    @functools.cached_property
    def printed(self) -> list[dict[str, Any]]:
        """What the program's print(…) calls (and `x.grad` lines) show, in the order they ran:
        `{"line": source line, "text": …}`, grads read from this run's own backward pass,
        written as the program's library prints (PyTorch's `tensor(4.)`, NumPy's `4.0`)."""
        return lines(
            self.graph.printed,
            lambda node: node.grad,
            self.graph.torch_mode,
            self.limits.max_print_chars,
        )

    @functools.cached_property
    def leaves(self) -> list[Value]:
        """The parameters, in creation order: the nodes a gradient is reported for."""
        return [n for n in self.nodes if n.kind == "leaf"]

    @contextlib.contextmanager
    def trace_with(self, accumulate: str, order: str) -> Iterator[Trace]:
        """The trace of a backward pass over this graph with these options: the run's own when
        they are its own, else a new pass (no new build). Inside the block the nodes' `.grad`
        are that pass's; after it the run's own again, so the page's trace, which reads them,
        is the same whatever a lesson ran. Raises ProgramError as `run`."""
        if (accumulate, order) == (self.accumulate, self.order):
            yield self.trace
            return
        with kept_grads(self.nodes):
            yield traced(self.output, self.nodes, accumulate, order, self.graph.seed)


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
    """Parse and build a program, then trace its backward pass, keeping all of it (a `Run`).
    Raises ProgramError."""
    check_options(accumulate, order)
    program = parse_cached(source, limits)
    with quiet():  # NumPy's float warnings off once for the build, not per op
        graph = build(program, values, limits)
    numbers = check_trace(graph.nodes, graph.output, limits)  # max_trace_numbers, before backward
    result = traced(graph.output, graph.nodes, accumulate, order, graph.seed)
    result.free = graph.free
    result.numbers = numbers
    return Run(program, graph, result, limits)


def run(
    source: str,
    values: dict[str, Any] | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    limits: Limits = DEFAULT_LIMITS,
) -> Trace:
    """Parse and run a program, then trace its backward pass. Raises ProgramError."""
    return run_program(source, values, accumulate, order, limits).trace


def run_with_contrast(
    source: str,
    values: dict[str, Any] | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Trace, dict[str, Any] | None]:
    """`run`, and the same program's final grads under the other accumulation (`+=` against
    `=`), from one parse and one build: the contrast the page shows beside the trace.

    Returns (trace, contrast) with contrast `{"accumulate": the other mode, "grads": {node id:
    grad}}`, each grad as `trace.to_dict()["nodes"][i]["grad"]` would give it under that mode
    (nodes whose grad is None, constants and what the output does not reach, are left out), or
    None when that mode's backward fails (a non-finite grad). Raises ProgramError as `run`.
    """
    result = run(source, values, accumulate, order, limits)
    return result, contrast(result)


def contrast(result: Trace) -> dict[str, Any] | None:
    """One more backward pass on `result`'s graph with the other accumulation, without a
    recorder; the trace's own grads are put back afterwards (its steps keep theirs anyway:
    backward never changes a grad in place)."""
    other = "assign" if result.accumulate == "add" else "add"
    nodes = result.nodes
    with kept_grads(nodes):
        for node in nodes:
            node.grad = None  # as trace() starts: what the output does not reach has none
        try:
            backward(result.output, accumulate=other, order=result.order, seed=result.seed)
        except BackwardError:
            return None
        ids = result.ids()
        grads: dict[str, Any] = {}
        for node in nodes:
            g = result.grad_of(node)
            if g is not None:
                grads[ids[node.seq]] = to_json(g)
        return {"accumulate": other, "grads": grads}


def check_options(accumulate: str, order: str) -> None:
    if accumulate not in ("add", "assign"):
        raise ProgramError(
            f"accumulate is 'add' or 'assign', not {accumulate!r}", code="bad_option"
        )
    if order not in ("dfs", "kahn"):
        raise ProgramError(f"order is 'dfs' or 'kahn', not {order!r}", code="bad_option")


def traced(
    output: Value, nodes: list[Value], accumulate: str, order: str, seed: Any = None
) -> Trace:
    """`trace` (a recorded backward pass), a non-finite grad raised as the program's error;
    `seed` is the output's first grad when the program gave one (L.backward(gradient=v))."""
    try:
        if seed is not None:
            return trace(output, nodes, accumulate=accumulate, order=order, seed=seed)
        return trace(output, nodes, accumulate=accumulate, order=order)
    except BackwardError as err:
        raise backward_error(err) from None


def backward_error(err: BackwardError) -> ProgramError:
    """A non-finite grad as the program's error, at the op that made it."""
    span = err.node.span
    assert err.node.op is not None
    where = f"{err.node.text} " if err.node.text else f"{err.node.op.symbol} "
    return ProgramError(
        where + err.message,
        span.line if span else None,
        span.column if span else None,
        end_line=span.end_line if span else None,
        end_column=span.end_column if span else None,
        code=err.code,
    )
