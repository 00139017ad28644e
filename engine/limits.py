"""The limits a program must stay within, each checked before the work it guards.

They are settings: the app reads overrides from the environment (`GRADTRACE_MAX_NODES=…`), and
every error that one of them stops names it and its value.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True, slots=True)
class Limits:
    max_source_chars: int = 10_000  # characters of program text
    max_nodes: int = 2_000  # graph nodes after loops are unrolled
    max_drawn_nodes: int = 500  # nodes the drawing lays out
    max_tensor_elements: int = 16_384  # elements in one value
    max_total_elements: int = 1_000_000  # elements across all values of a program
    max_exponent: float = 1_024.0  # |b| for a constant exponent in a ** b
    max_loop_iterations: int = 10_000  # iterations of all loops, nested ones multiplied
    max_depth: int = 64  # nesting of expressions, brackets and blocks
    max_statements: int = 2_000  # statements after unrolling

    def with_env(self, prefix: str = "GRADTRACE_") -> Limits:
        """These limits with any `GRADTRACE_MAX_…` environment overrides applied."""
        changes = {}
        for f in fields(self):
            raw = os.environ.get(prefix + f.name.upper())
            if raw is not None:
                changes[f.name] = type(getattr(self, f.name))(raw)
        return replace(self, **changes)


DEFAULT_LIMITS = Limits()
