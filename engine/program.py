"""run(source) -> Trace: the whole pipeline, source text → parse → graph → backward trace."""

from __future__ import annotations

import functools
from typing import Any

from engine.autograd.backward import BackwardError, backward
from engine.autograd.ops import quiet
from engine.errors import ProgramError
from engine.language.build import build
from engine.language.ir import Program
from engine.language.parse import parse
from engine.limits import DEFAULT_LIMITS, Limits
from engine.tracing.cost import check_trace
from engine.tracing.record import Trace, to_json, trace


@functools.lru_cache(maxsize=64)
def parse_cached(source: str, limits: Limits) -> Program:
    """`parse`, remembered (the IR is immutable): a program's picture and page run it again."""
    return parse(source, limits)


def run(
    source: str,
    values: dict[str, Any] | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    limits: Limits = DEFAULT_LIMITS,
) -> Trace:
    """Parse and run a program, then trace its backward pass. Raises ProgramError."""
    check_options(accumulate, order)
    with quiet():  # NumPy's float warnings off once for the build, not per op
        graph = build(parse_cached(source, limits), values, limits)
    numbers = check_trace(graph.nodes, graph.output, limits)  # max_trace_numbers, before backward
    try:
        result = trace(graph.output, graph.nodes, accumulate=accumulate, order=order)
    except BackwardError as err:
        raise backward_error(err) from None
    result.free = graph.free
    result.numbers = numbers
    return result


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
    saved = [node.grad for node in nodes]
    try:
        for node in nodes:
            node.grad = None  # as trace() starts: what the output does not reach has none
        try:
            backward(result.output, accumulate=other, order=result.order)
        except BackwardError:
            return None
        ids = result.ids()
        grads: dict[str, Any] = {}
        for node in nodes:
            g = result.grad_of(node)
            if g is not None:
                grads[ids[node.seq]] = to_json(g)
        return {"accumulate": other, "grads": grads}
    finally:
        for node, g in zip(nodes, saved, strict=True):
            node.grad = g


def check_options(accumulate: str, order: str) -> None:
    if accumulate not in ("add", "assign"):
        raise ProgramError(
            f"accumulate is 'add' or 'assign', not {accumulate!r}", code="bad_option"
        )
    if order not in ("dfs", "kahn"):
        raise ProgramError(f"order is 'dfs' or 'kahn', not {order!r}", code="bad_option")


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
