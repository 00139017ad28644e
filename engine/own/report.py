"""What POST /api/own answers, made from a recording: the trace, the words of every step, the
findings, the end-to-end check and gradtrace's own run of the same graph. (The drawing is the
app's: app/routes/own.py draws the trace with engine.drawing.)"""

from __future__ import annotations

from typing import Any

from engine.own.findings import diagnose, end_to_end
from engine.own.limits import OwnLimits
from engine.own.reference import compare
from engine.own.schema import validate
from engine.own.trace import to_trace
from engine.own.words import finding_words, say, step_words


def report(raw: Any, limits: OwnLimits, lang: str = "en") -> dict[str, Any]:
    """The answer for a recording (raises OwnError for one that is not valid)."""
    rec = validate(raw, limits)
    trace = to_trace(rec)
    labels = {n["id"]: n["label"] for n in trace["nodes"]}
    shift = 1 if rec.steps and rec.steps[0].kind == "seed" else 0
    shift = 1 - shift  # to_trace puts a seed first when the recording has none
    said = step_words(rec, labels, lang)
    if shift:
        said.insert(0, say(lang, "own_seed_none", node=labels[rec.output]))
    for k, text in enumerate(said):
        trace["steps"][k]["words"] = text
    findings = []
    for f in diagnose(rec):
        findings.append(
            {
                "code": f.code,
                "name": say(lang, "own_name_" + f.code),
                "node": f.node,
                "step": None if f.step is None else f.step + shift,
                "input": f.params.get("input"),
                "marks": list(f.marks),
                "message": finding_words(f, rec, labels, lang),
            }
        )
    ref = compare(rec)
    parted = ref["parted"]
    if parted is not None:
        p = {k: v for k, v in parted.items() if k != "what"}
        if parted.get("step") is not None:
            p["step"] = parted["step"] + shift
        parted = {
            **p,
            "what": parted["what"],
            "message": _parted_words(parted, labels, lang, shift),
        }
    return {
        "trace": trace,
        "findings": findings,
        "end_to_end": end_to_end(rec),
        "reference": {
            "grads": ref["grads"],
            "exact": ref["exact"],
            "measured": ref["measured"],
            "parted": parted,
            "summary": say(
                lang, "own_ref_ops", exact=len(ref["exact"]), measured=len(ref["measured"])
            ),
            "agree": parted is None,
        },
    }


def _parted_words(parted: dict[str, Any], labels: dict[str, str], lang: str, shift: int) -> str:
    from engine.drawing.numbers import fmt

    what = parted["what"]
    node = labels[parted["node"]]
    if what == "missing":
        return say(lang, "own_ref_parted_missing", node=node)
    if what == "leaf":
        return say(lang, "own_ref_parted_leaf", node=node, yours=fmt(parted["yours"]),
                   theirs=fmt(parted["theirs"]))  # fmt: skip
    step = parted["step"] + shift
    if what == "again":
        return say(lang, "own_ref_parted_again", step=step, node=node)
    if what == "grad":
        return say(lang, "own_ref_parted_grad", step=step, node=node,
                   yours=fmt(parted["yours"]), theirs=fmt(parted["theirs"]))  # fmt: skip
    return say(lang, "own_ref_parted_sent", step=step, node=node, input=labels[parted["input"]],
               yours=fmt(parted["yours"]), theirs=fmt(parted["theirs"]))  # fmt: skip
