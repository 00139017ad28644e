"""The recording's steps and findings in words, in the page's language (engine/words'
`own_…` keys): what the page says beside each step, and the message of each bug."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.drawing.numbers import fmt
from engine.own.findings import Finding
from engine.own.schema import Recording
from engine.words import words

NUMBERS = ("before", "after", "slope", "upstream", "expected", "given", "gain", "value")


def say(lang: str, key: str, **params: Any) -> str:
    table = words(lang)
    return (table.get(key) or words("en")[key]).format(**params)


def step_words(rec: Recording, labels: Mapping[str, str], lang: str) -> list[str]:
    """One sentence per recorded step: who ran, and each grad it changed."""
    out = []
    for st in rec.steps:
        who = labels[st.node]
        if st.kind == "seed":
            if st.node in st.changed:
                out.append(say(lang, "own_seed", node=who, value=fmt(st.changed[st.node][1])))
            else:
                out.append(say(lang, "own_seed_none", node=who))
            continue
        if not st.changed:
            out.append(say(lang, "own_step_none", node=who))
            continue
        parts = [
            say(lang, "own_change", input=labels[k], before=fmt(b), after=fmt(a))
            for k, (b, a) in sorted(st.changed.items(), key=lambda kv: rec.by_id[kv[0]].num)
        ]
        out.append(say(lang, "own_step", node=who, changes=say(lang, "own_join").join(parts)))
    return out


def finding_words(f: Finding, rec: Recording, labels: Mapping[str, str], lang: str) -> str:
    """The message of one finding, its ids read as labels and its numbers formatted."""
    p: dict[str, Any] = {}
    for k, v in f.params.items():
        if k in NUMBERS:
            p[k] = fmt(v)
        elif k in ("input", "consumer") and isinstance(v, str):
            p[k] = labels.get(v, v)
        else:
            p[k] = v
    node = rec.by_id[f.node]
    p["node"] = labels[f.node]
    p["op"] = node.op or node.maker or ""
    if "gain" in f.params and "slope" in f.params and "upstream" in f.params:
        p["expected_gain"] = fmt(f.params["slope"] * f.params["upstream"])
    key = "own_bug_" + f.code + ("_runs" if f.code == "order" and "runs" in f.params else "")
    return say(lang, key, **p)
