"""What a slide says under the drawing at each step: the page's step sentence and the leaves'
grads, worked out when the slide is built (a slide runs no engine).

`step_sentence` words a backward step as the page's #explain does (static/js/explain.js
`sentence()`, backward steps only; tests/test_reveal.py holds the two the same, step by step, in
Chromium). `leaf_grads` is what the parameters' grads are after each step, with the ones the step
changed marked, as the page's table marks them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine import drawing as draw
from engine.tracing.table import grad_table
from engine.words import words
from gradtrace.tables import cell_text


def word(lang: str, key: str, **params: Any) -> str:
    """The word `key` in `lang` (English when missing), `{name}`s filled as the page fills them."""
    text = words(lang).get(key) or words("en").get(key) or key
    return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m.group(1), m.group(0))), text)


def _shape(v: Any) -> list[int]:
    shape = []
    while isinstance(v, list):
        shape.append(len(v))
        v = v[0] if v else None
    return shape


def _fmt(v: Any) -> str:
    """static/js/format.js `fmt`: a number to 4 digits, a tensor by its shape badge."""
    if v is None:
        return "—"
    if isinstance(v, list):
        return draw.shape_text(_shape(v))
    return draw.fmt(v)


def _who(node: Mapping[str, Any]) -> str:
    text = node.get("text")
    if text and text != node["label"] and node["kind"] == "op":
        return f"{node['label']} = {text}"
    return str(node["label"])


def step_sentence(trace: Mapping[str, Any], k: int, lang: str = "en") -> str:
    """The sentence that says what backward step `k` does, in `lang`."""
    steps = trace["steps"]
    if not 0 <= k < len(steps):
        return word(lang, "no_steps")
    by_id = {n["id"]: n for n in trace["nodes"]}
    st = steps[k]

    def label(node_id: str) -> str:
        return str(by_id[node_id]["label"]) if node_id in by_id else node_id

    if st.get("kind") == "seed" or k == 0:
        if trace.get("seeded_with_ones"):
            shape = draw.shape_text(trace.get("shape") or [])
            return word(lang, "sent_seed_ones", node=label(st["node"]), shape=shape)
        return word(lang, "sent_seed", node=label(st["node"]))
    terms = st.get("terms") or []
    if not terms:
        return word(lang, "sent_none", node=label(st["node"]))
    assign = (trace.get("options") or {}).get("accumulate") == "assign"
    parts = []
    for term in terms:
        contribution = term["contribution"]
        if isinstance(contribution, list):
            shape = draw.shape_text(_shape(contribution))
            parts.append(
                word(
                    lang,
                    "sent_term_tensor",
                    rule=term["rule"],
                    shape=shape,
                    input=label(term["input"]),
                )
            )
            continue
        calc = _fmt(contribution)
        up, local = st.get("upstream"), term.get("local")
        plain_pass = term["rule"] == "ū" and local == 1
        if local is not None and isinstance(up, int | float) and not plain_pass:
            calc = f"{_fmt(up)}·{_fmt(local)} = {calc}"
        before = term.get("before")
        s = word(
            lang,
            "sent_term",
            rule=term["rule"],
            calc=calc,
            input=label(term["input"]),
            before=_fmt(before),
            after=_fmt(term.get("after")),
        )
        if assign and before is not None and before != 0:
            s += " " + word(lang, "sent_assign", before=_fmt(before))
        parts.append(s)
    return _who(by_id[st["node"]]) + " " + word(lang, "sent_join").join(parts)


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
