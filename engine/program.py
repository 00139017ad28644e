"""run(source) -> Trace: the whole pipeline, source text → parse → graph → backward trace."""

from __future__ import annotations

import functools
from typing import Any

from engine.backward import BackwardError
from engine.build import build
from engine.errors import ProgramError
from engine.ir import Program
from engine.lang import parse
from engine.limits import DEFAULT_LIMITS, Limits
from engine.ops import quiet
from engine.trace import Trace, trace


@functools.lru_cache(maxsize=64)
def parse_cached(source: str, limits: Limits) -> Program:
    """`parse`, remembered (the IR is immutable): the page runs each program twice, once per
    accumulation, and its picture and page run it again."""
    return parse(source, limits)


def run(
    source: str,
    values: dict[str, Any] | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    limits: Limits = DEFAULT_LIMITS,
) -> Trace:
    """Parse and run a program, then trace its backward pass. Raises ProgramError."""
    if accumulate not in ("add", "assign"):
        raise ProgramError(f"accumulate is 'add' or 'assign', not {accumulate!r}",
                           code="bad_option")
    if order not in ("dfs", "kahn"):
        raise ProgramError(f"order is 'dfs' or 'kahn', not {order!r}", code="bad_option")
    with quiet():  # NumPy's float warnings off once for the build, not per op
        graph = build(parse_cached(source, limits), values, limits)
    try:
        result = trace(graph.output, graph.nodes, accumulate=accumulate, order=order)
    except BackwardError as err:
        span = err.node.span
        where = f"{err.node.text} " if err.node.text else f"{err.node.op.symbol} "
        raise ProgramError(
            where + err.message,
            span.line if span else None,
            span.column if span else None,
            end_line=span.end_line if span else None,
            end_column=span.end_column if span else None,
            code=err.code,
        ) from None
    result.free = graph.free
    return result
