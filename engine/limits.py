"""The limits a program must stay within, each checked before the work it guards.

They are settings: the app reads overrides from the environment (`GRADTRACE_MAX_NODES=…`), and
every error that one of them stops names it and its value.

Time is bounded too, per request: the app opens a `deadline(seconds)` around each request, and
the engine checks it as it makes nodes and hands what is left of it to Graphviz.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace

from engine.errors import ProgramError, fail


@dataclass(frozen=True, slots=True)
class Limits:
    max_source_chars: int = 10_000  # characters of program text
    max_nodes: int = 2_000  # graph nodes after loops are unrolled
    max_drawn_nodes: int = 500  # nodes the drawing lays out
    # CPU time Graphviz may spend on one layout: a 120-node DAG with skip edges takes 20 s, while
    # the slowest ordinary program we know (bench's 200-node one, much fan-out) takes 1.4 s.
    max_layout_seconds: float = 2.0
    max_tensor_elements: int = 16_384  # elements in one value
    max_total_elements: int = 50_000  # elements across all values (three 128×128 matrices)
    # Numbers the server derives from a program (engine/tracing/cost.py), each ≤25 bytes of JSON:
    # those of its trace (values, grads, every step's terms), counted from the graph before
    # backward runs: a trace answer stays under about 13 MB (8 MB for random values) …
    max_trace_numbers: int = 500_000
    # … and those of a whole answer, the trace with the lessons asked for, each lesson charged
    # as it is made.
    max_answer_numbers: int = 1_500_000
    max_exponent: float = 1_024.0  # |b| for a constant exponent in a ** b
    max_loop_iterations: int = 10_000  # iterations of all loops, nested ones multiplied
    # how deeply brackets nest, and how deeply calls, indexes, operators, lists and loops nest
    # inside one another, each counted apart (engine/language/source.py and scan.py's walk)
    max_depth: int = 64
    max_statements: int = 20_000  # statements run, loops unrolled and calls inlined (each call one)
    max_call_depth: int = 32  # calls of the program's own functions inside one another
    max_print_chars: int = 20_000  # characters of text a run makes: printed, formatted, joined
    # The work of a whole run, all its passes together: the ops it runs forward and backward
    # (each backward step one), and the elements they compute. A training loop's 100 passes
    # of a small model are a few thousand ops; a loop of backward calls on a 1,000-node graph
    # reaches max_ops in a second.
    max_ops: int = 200_000
    max_work: int = 50_000_000
    max_list_items: int = 16_384  # items of one list (or characters' worth of a joined one)

    def with_env(self, prefix: str = "GRADTRACE_") -> Limits:
        """These limits with any `GRADTRACE_MAX_…` environment overrides applied."""
        changes = {}
        for f in fields(self):
            raw = os.environ.get(prefix + f.name.upper())
            if raw is not None:
                changes[f.name] = type(getattr(self, f.name))(raw)
        return replace(self, **changes)


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Deadline:
    """The moment (time.monotonic) by which a request must be done, and the setting behind it."""

    at: float
    seconds: float
    setting: str = "max_request_seconds"

    def left(self) -> float:
        return self.at - time.monotonic()

    def error(self) -> ProgramError:
        """The request ran out of time: the setting's one message (msg_limit_<setting>)."""
        return fail("limit_" + self.setting, code="timeout", limit=self.setting, max=self.seconds)


_deadline: ContextVar[Deadline | None] = ContextVar("gradtrace_deadline", default=None)


@contextmanager
def deadline(
    seconds: float | None, setting: str = "max_request_seconds"
) -> Iterator[Deadline | None]:
    """Bound the work done inside the block (and in threads started from it, which copy the
    context) to `seconds`; None or 0 means no bound. An earlier deadline already in force
    stays in force."""
    outer = _deadline.get()
    if not seconds or seconds <= 0:
        yield outer
        return
    d = Deadline(time.monotonic() + seconds, seconds, setting)
    if outer is not None and outer.at <= d.at:
        yield outer
        return
    token = _deadline.set(d)
    try:
        yield d
    finally:
        _deadline.reset(token)


def current_deadline() -> Deadline | None:
    return _deadline.get()


def check_deadline() -> None:
    """Raise the limit's ProgramError (413) once the current request is out of time."""
    d = _deadline.get()
    if d is not None and d.left() <= 0:
        raise d.error()
