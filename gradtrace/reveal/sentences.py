"""What a slide says under the drawing at each step: the page's step sentence and the leaves'
grads, worked out when the slide is built (a slide runs no engine).

`step_sentence` words a backward step as the page's #explain does: gradtrace/sentences.py,
shared with the notebook widget (tests/test_reveal.py holds it equal to the page's, step by step,
in Chromium). `leaf_grads` is what the parameters' grads are after each step, with the ones the step
changed marked, as the page's table marks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.tracing.table import grad_table
from gradtrace.sentences import sentence as _sentence
from gradtrace.sentences import word
from gradtrace.tables import cell_text

__all__ = ["LeafGrads", "leaf_grads", "step_sentence", "word"]


def step_sentence(trace: Mapping[str, Any], k: int, lang: str = "en") -> str:
    """The sentence that says what backward step `k` does, in `lang`."""
    return _sentence(trace, k, lang)


@dataclass(frozen=True)
class LeafGrads:
    """The leaves' labels, and after each step every leaf's grad (as the table shows it) and
    whether that step changed it."""

    labels: list[str]
    rows: list[list[tuple[str, bool]]]


def leaf_grads(trace: Mapping[str, Any]) -> LeafGrads:
    """The parameters' grads after every step (leaves in creation order)."""
    leaves = [n["id"] for n in trace["nodes"] if n["kind"] == "leaf" and n.get("grad") is not None]
    labels = {n["id"]: str(n["label"]) for n in trace["nodes"]}
    _, rows = grad_table(dict(trace))
    out = []
    for row in rows:
        out.append([(cell_text(row.grads.get(i)), i in row.changed) for i in leaves])
    return LeafGrads([labels[i] for i in leaves], out)
