"""The sentence that says what one backward step does, as the page's #explain says it
(static/js/explain.js `sentence()`), for what is made without the page: the notebook widget's
frames (gradtrace/widget_frames.py) and the reveal.js slides (gradtrace/reveal/). One copy:
tests/test_widget_browser.py and tests/test_reveal.py hold it equal to the page's, step by step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from engine import drawing as draw
from engine.words import words


def word(lang: str, key: str, **params: Any) -> str:
    """A word of the page's, its `{name}` slots filled (English when `lang` lacks it)."""
    text = words(lang).get(key) or words("en")[key]
    return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m.group(1), m.group(0))), text)


def _who(node: Mapping[str, Any]) -> str:
    text = node.get("text")
    if text and text != node["label"] and node["kind"] == "op":
        return f"{node['label']} = {text}"
    return str(node["label"])


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _shape_of(value: Any) -> list[int]:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return shape


def value_text(x: Any) -> str:
    """A number as the page prints it; a tensor by its shape (format.js's fmt)."""
    return draw.fmt(x) if x is None or _number(x) else draw.shape_text(_shape_of(x))


def sentence(trace: Mapping[str, Any], k: int, lang: str) -> str:
    """What step `k` does, in words: the seed, or each grad the step sends and where it lands
    (`out = x*y + x sends ū = 1 to x*y; x*y.grad: 0 → 1; …`), as the page says it."""
    steps = trace.get("steps") or []
    if not 0 <= k < len(steps):
        return word(lang, "no_steps")
    st = steps[k]
    by_id = {n["id"]: n for n in trace["nodes"]}
    label = by_id[st["node"]]["label"] if st["node"] in by_id else st["node"]
    if st.get("kind") == "seed" or k == 0:
        if trace.get("seeded_with_ones"):
            shape = draw.shape_text(trace.get("shape") or [])
            return word(lang, "sent_seed_ones", node=label, shape=shape)
        return word(lang, "sent_seed", node=label)
    terms = st.get("terms") or []
    if not terms:
        return word(lang, "sent_none", node=label)
    assign = (trace.get("options") or {}).get("accumulate") == "assign"
    parts = []
    for term in terms:
        into = by_id[term["input"]]["label"] if term["input"] in by_id else term["input"]
        if not _number(term.get("contribution")):
            shape = draw.shape_text(_shape_of(term.get("contribution")))
            parts.append(word(lang, "sent_term_tensor", rule=term["rule"], shape=shape, input=into))
            continue
        calc = draw.fmt(term["contribution"])
        local, up = term.get("local"), st.get("upstream")
        if local is not None and _number(up) and not (term["rule"] == "ū" and local == 1):
            calc = f"{draw.fmt(up)}·{draw.fmt(local)} = {calc}"
        before, after = value_text(term.get("before")), value_text(term.get("after"))
        text = word(
            lang, "sent_term", rule=term["rule"], calc=calc, input=into, before=before, after=after
        )
        if assign and term.get("before") not in (0, None):
            text += " " + word(lang, "sent_assign", before=before)
        parts.append(text)
    who = _who(by_id[st["node"]]) if st["node"] in by_id else str(st["node"])
    return who + " " + word(lang, "sent_join").join(parts)
