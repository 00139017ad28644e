"""A recording, validated: every field checked for its type, size and meaning before any work
is done with it, so nothing a browser sends can make the server loop, allocate without bound or
draw something it should not (docs/own.md has the shape).

Checked: exactly the known keys; ids `n<k>` unique and in creation order; every input, step,
pass and check naming a node that is there, an input made before the node that uses it (so the
graph has no cycle); numbers finite (JSON's NaN and Infinity are refused, and so are booleans);
strings within max_own_label_chars and free of control characters; counts within the limits,
checked before the lists they bound are walked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.own.errors import OwnError
from engine.own.limits import OwnLimits

_ID = re.compile(r"n(0|[1-9][0-9]{0,6})")
# C0 and C1 controls, and the bidirectional overrides that could make a label read backwards.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
KINDS = ("leaf", "op")
STEP_KINDS = ("seed", "backward")


@dataclass(frozen=True, slots=True)
class OwnNode:
    id: str
    num: int  # the number in its id: creation order
    name: str | None
    label: str
    kind: str
    op: str | None
    inputs: tuple[str, ...]
    value: float
    grad: float
    line: int | None
    maker: str | None  # the method that made it (`__mul__`, `tanh`, `apply`)
    args: tuple[str | float | None, ...]  # that method's arguments: node ids or numbers


@dataclass(frozen=True, slots=True)
class OwnStep:
    node: str
    kind: str
    pass_: int
    upstream: float  # the node's own grad when its backward began
    changed: Mapping[str, tuple[float, float]]  # id -> (before, after)


@dataclass(frozen=True, slots=True)
class OwnPass:
    output: str
    grads_before: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class Slope:
    """An op's local slope to one input, by central differences; `left`/`right`, the one-sided
    slopes, when they differ (a kink such as relu's at 0)."""

    input: str
    arg: int
    slope: float
    left: float | None = None
    right: float | None = None


@dataclass(frozen=True, slots=True)
class Recording:
    output: str
    nodes: tuple[OwnNode, ...]
    by_id: Mapping[str, OwnNode]
    steps: tuple[OwnStep, ...]
    passes: tuple[OwnPass, ...]
    local: Mapping[str, tuple[Slope, ...]]
    end_to_end: Mapping[str, float]  # leaf id -> d output / d leaf


# --- small checks ---------------------------------------------------------------------------


def _keys(x: Any, where: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    if not isinstance(x, dict):
        raise OwnError("not_object", where)
    missing = [k for k in required if k not in x]
    if missing:
        raise OwnError("missing", where, field=missing[0])
    extra = [k for k in x if k not in required and k not in optional]
    if extra:
        raise OwnError("unknown_field", where, field=str(extra[0])[:40])
    return x


def _list(x: Any, where: str, most: int, limit: str) -> list:
    if not isinstance(x, list):
        raise OwnError("not_list", where)
    if len(x) > most:
        raise OwnError("too_many", where, limit=limit, n=len(x), most=most)
    return x


def number(x: Any, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise OwnError("not_number", where)
    v = float(x)
    if not math.isfinite(v):
        raise OwnError("not_finite", where)
    return v


def _int(x: Any, where: str, low: int, high: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or not low <= x <= high:
        raise OwnError("not_int", where, low=low, high=high)
    return x


def text(x: Any, where: str, limits: OwnLimits, *, optional: bool = False) -> str | None:
    if x is None and optional:
        return None
    if not isinstance(x, str) or not x:
        raise OwnError("not_text", where)
    if len(x) > limits.max_own_label_chars:
        raise OwnError(
            "too_long", where, limit="max_own_label_chars", most=limits.max_own_label_chars
        )
    if _CONTROL.search(x):
        raise OwnError("control", where)
    return x


def _ref(x: Any, where: str, known: Mapping[str, Any]) -> str:
    if not isinstance(x, str) or x not in known:
        raise OwnError("dangling", where, id=str(x)[:20])
    return x


# --- the parts ------------------------------------------------------------------------------


def _nodes(raw: Any, limits: OwnLimits) -> tuple[tuple[OwnNode, ...], dict[str, OwnNode]]:
    items = _list(raw, "nodes", limits.max_own_nodes, "max_own_nodes")
    if not items:
        raise OwnError("empty", "nodes")
    by_id: dict[str, OwnNode] = {}
    last = -1
    for i, n in enumerate(items):
        node = _node(n, i, items, by_id, limits)
        if node.num <= last:
            raise OwnError("id_order", f"nodes[{i}].id", id=node.id)
        last = node.num
        by_id[node.id] = node
    return tuple(by_id.values()), by_id


def _node(n: Any, i: int, items: list, by_id: Mapping[str, OwnNode], limits: OwnLimits) -> OwnNode:
    """nodes[i], checked against the nodes before it (`by_id`)."""
    w = f"nodes[{i}]"
    n = _keys(
        n,
        w,
        ("id", "label", "kind", "inputs", "value", "grad"),
        ("name", "op", "line", "maker", "args"),
    )
    nid = n["id"]
    if not isinstance(nid, str) or not _ID.fullmatch(nid):
        raise OwnError("bad_id", w + ".id")
    if nid in by_id:
        raise OwnError("duplicate_id", w + ".id", id=nid)
    kind = n["kind"]
    if kind not in KINDS:
        raise OwnError("bad_kind", w + ".kind")
    inputs = _list(n["inputs"], w + ".inputs", limits.max_own_inputs, "max_own_inputs")
    for j, src in enumerate(inputs):
        if isinstance(src, str) and _ID.fullmatch(src) and src not in by_id:
            # An input must be made before the node that uses it: no cycles, nothing dangling.
            later = any(isinstance(m, dict) and m.get("id") == src for m in items[i:])
            raise OwnError("cycle" if later else "dangling", f"{w}.inputs[{j}]", id=src)
        _ref(src, f"{w}.inputs[{j}]", by_id)
    if (kind == "op") != bool(inputs):
        raise OwnError("kind_inputs", w)
    args_raw = _list(n.get("args", []), w + ".args", limits.max_own_inputs, "max_own_inputs")
    args: list[str | float | None] = []
    for j, a in enumerate(args_raw):
        if a is None or isinstance(a, str):
            args.append(None if a is None else _ref(a, f"{w}.args[{j}]", by_id))
        else:
            args.append(number(a, f"{w}.args[{j}]"))
    line = n.get("line")
    return OwnNode(
        id=nid,
        num=int(nid[1:]),
        name=text(n.get("name"), w + ".name", limits, optional=True),
        label=text(n["label"], w + ".label", limits) or nid,
        kind=kind,
        op=text(n.get("op"), w + ".op", limits, optional=True),
        inputs=tuple(inputs),
        value=number(n["value"], w + ".value"),
        grad=number(n["grad"], w + ".grad"),
        line=None if line is None else _int(line, w + ".line", 1, 10**7),
        maker=text(n.get("maker"), w + ".maker", limits, optional=True),
        args=tuple(args),
    )


def _steps(raw: Any, by_id: Mapping[str, OwnNode], passes: int, limits: OwnLimits) -> tuple:
    items = _list(raw, "steps", limits.max_own_steps, "max_own_steps")
    out = []
    changes = 0
    last_pass = 0
    for i, s in enumerate(items):
        w = f"steps[{i}]"
        s = _keys(s, w, ("node", "kind", "pass", "upstream", "changed"))
        kind = s["kind"]
        if kind not in STEP_KINDS:
            raise OwnError("bad_kind", w + ".kind")
        p = _int(s["pass"], w + ".pass", last_pass, max(passes - 1, 0))
        last_pass = p
        changed = s["changed"]
        if not isinstance(changed, dict):
            raise OwnError("not_object", w + ".changed")
        changes += len(changed)
        if changes > limits.max_own_changes:
            raise OwnError(
                "too_many", w + ".changed", limit="max_own_changes", n=changes,
                most=limits.max_own_changes,
            )  # fmt: skip
        pairs = {}
        for k, v in changed.items():
            cw = f"{w}.changed.{str(k)[:20]}"
            _ref(k, cw, by_id)
            if not isinstance(v, list) or len(v) != 2:
                raise OwnError("not_pair", cw)
            pairs[k] = (number(v[0], cw), number(v[1], cw))
        out.append(
            OwnStep(
                node=_ref(s["node"], w + ".node", by_id),
                kind=kind,
                pass_=p,
                upstream=number(s["upstream"], w + ".upstream"),
                changed=pairs,
            )
        )
    return tuple(out)


def _passes(raw: Any, by_id: Mapping[str, OwnNode], limits: OwnLimits) -> tuple:
    items = _list(raw, "passes", limits.max_own_passes, "max_own_passes")
    if not items:
        raise OwnError("empty", "passes")
    out = []
    for i, p in enumerate(items):
        w = f"passes[{i}]"
        p = _keys(p, w, ("output", "grads_before"))
        before = p["grads_before"]
        if not isinstance(before, dict):
            raise OwnError("not_object", w + ".grads_before")
        if len(before) > len(by_id):
            raise OwnError("too_many", w + ".grads_before", n=len(before), most=len(by_id))
        grads = {_ref(k, w, by_id): number(v, f"{w}.grads_before") for k, v in before.items()}
        out.append(OwnPass(_ref(p["output"], w + ".output", by_id), grads))
    return tuple(out)


def _checks(raw: Any, by_id: Mapping[str, OwnNode], limits: OwnLimits) -> tuple[dict, dict]:
    raw = _keys(raw, "checks", ("local", "end_to_end"))
    local_raw = raw["local"]
    if not isinstance(local_raw, dict):
        raise OwnError("not_object", "checks.local")
    if len(local_raw) > len(by_id):
        raise OwnError("too_many", "checks.local", n=len(local_raw), most=len(by_id))
    local: dict[str, tuple[Slope, ...]] = {}
    for nid, slopes in local_raw.items():
        w = f"checks.local.{str(nid)[:20]}"
        node = by_id[_ref(nid, w, by_id)]
        entries = _list(slopes, w, limits.max_own_inputs, "max_own_inputs")
        got = []
        for j, e in enumerate(entries):
            ew = f"{w}[{j}]"
            e = _keys(e, ew, ("input", "arg", "slope"), ("left", "right"))
            arg = _int(e["arg"], ew + ".arg", 0, max(len(node.inputs) - 1, 0))
            if not node.inputs or node.inputs[arg] != e["input"]:
                raise OwnError("not_input", ew, id=str(e["input"])[:20], node=nid)
            side = [number(e[k], f"{ew}.{k}") if k in e else None for k in ("left", "right")]
            got.append(Slope(e["input"], arg, number(e["slope"], ew + ".slope"), *side))
        local[nid] = tuple(got)
    e2e_raw = _list(raw["end_to_end"], "checks.end_to_end", limits.max_own_nodes, "max_own_nodes")
    e2e = {}
    for j, e in enumerate(e2e_raw):
        ew = f"checks.end_to_end[{j}]"
        e = _keys(e, ew, ("leaf", "slope"))
        e2e[_ref(e["leaf"], ew + ".leaf", by_id)] = number(e["slope"], ew + ".slope")
    return local, e2e


def validate(raw: Any, limits: OwnLimits) -> Recording:
    """The recording `raw` (parsed JSON), checked through; OwnError names what is wrong."""
    raw = _keys(raw, "", ("version", "output", "nodes", "steps", "passes", "checks"))
    if raw["version"] != 1 or isinstance(raw["version"], bool):
        raise OwnError("version", "version")
    # The cheap counts first: nothing is walked that a limit would refuse.
    for key, most, limit in (
        ("nodes", limits.max_own_nodes, "max_own_nodes"),
        ("steps", limits.max_own_steps, "max_own_steps"),
        ("passes", limits.max_own_passes, "max_own_passes"),
    ):
        _list(raw[key], key, most, limit)
    nodes, by_id = _nodes(raw["nodes"], limits)
    output = _ref(raw["output"], "output", by_id)
    passes = _passes(raw["passes"], by_id, limits)
    steps = _steps(raw["steps"], by_id, len(passes), limits)
    local, e2e = _checks(raw["checks"], by_id, limits)
    return Recording(output, nodes, by_id, steps, passes, local, e2e)
