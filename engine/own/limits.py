"""The limits of a recording, each a named setting (`GRADTRACE_MAX_OWN_NODES=…`), stated in
the message that refuses a recording past it. The browser's recorder stops at the same ones
(the page hands them to it), so a student meets them as a message, not a refused request."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True, slots=True)
class OwnLimits:
    max_own_nodes: int = 2_000  # nodes in a recording (the language's max_nodes)
    max_own_steps: int = 5_000  # local backward calls recorded, across every pass
    max_own_passes: int = 8  # backward passes (calls of backward) recorded
    max_own_inputs: int = 16  # inputs of one node, and arguments of the op that made it
    max_own_changes: int = 200_000  # grads changed, summed over the steps
    max_own_label_chars: int = 40  # characters of a label, a name or an op
    # The time the student's code may run in the browser before its worker is ended.
    max_own_run_seconds: float = 10.0
    max_own_source_chars: int = 50_000  # characters in the page's editor

    def with_env(self, prefix: str = "GRADTRACE_") -> OwnLimits:
        changes = {}
        for f in fields(self):
            raw = os.environ.get(prefix + f.name.upper())
            if raw is not None:
                changes[f.name] = type(getattr(self, f.name))(raw)
        return replace(self, **changes)

    def for_page(self) -> dict[str, float]:
        """What the page and its recorder need to know of them."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@functools.lru_cache(maxsize=1)
def own_limits() -> OwnLimits:
    """The limits of this process: the defaults with the environment's overrides."""
    return OwnLimits().with_env()
