"""The bugs a recording shows, each pointed at the node whose backward has it.

A step is checked against the op's own slopes (measured in the browser by central differences)
and the node's grad when its backward began, `u`: an input `c` should gain `slope·u`. So each
node is judged on what it was given, and a wrong grad upstream is never blamed downstream.
What a wrong gain looks like names the bug:

- `overwrite`: `c.grad` held a contribution and lost it; after the step it is `slope·u` alone
  (`=` where `+=` belongs);
- `upstream`: `c` gained `slope` itself, the node's grad `u` ≠ 1 never multiplied in;
- `local`: any other gain: the node's local gradient is not the op's slope ("tanh node: your
  backward gave 0.3, the slope is 0.5"), as exp's written with `self.data` for `out.data`;
- `order`: the node's backward ran before all of its consumers had sent it grad (more came
  later in the same pass), or ran twice: not a reverse topological order;
- `never_ran`: the node had a grad and inputs with a slope, and no step of its ran; `noop`: one
  ran and changed no grad (a `_backward` left as micrograd's default `lambda: None`);
- `not_zeroed`: a second backward began with grads left over from the first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.own.schema import Recording, Slope
from engine.own.trace import reachable

REL = 1e-5  # central differences are good to ~1e-8 relative; a student's bug is far larger
ABS = 1e-7


@dataclass(frozen=True)
class Finding:
    code: str
    node: str  # the node to mark: whose backward is wrong (a leaf, for not_zeroed)
    step: int | None  # the recording's step where it shows, None for a step that never ran
    params: dict[str, Any] = field(default_factory=dict)  # ids and numbers for the words
    marks: tuple[str, ...] = ()  # further nodes to mark with it


def close(a: float, b: float) -> bool:
    return abs(a - b) <= ABS + REL * max(abs(a), abs(b))


def _within(gain: float, s: Slope, u: float) -> bool:
    """Does `gain` agree with slope·u? At a kink, anything between the one-sided slopes does."""
    if close(gain, s.slope * u):
        return True
    if s.left is None or s.right is None:
        return False
    lo, hi = sorted((s.left * u, s.right * u))
    return lo - ABS - REL * abs(lo) <= gain <= hi + ABS + REL * abs(hi)


def _judge(rec: Recording, k: int, s: Slope) -> Finding | None:
    """What step `k` did to input `s.input` of its node, if that is a bug."""
    st = rec.steps[k]
    u = st.upstream
    if s.input in st.changed:
        before, after = st.changed[s.input]
    else:  # the step did not touch it: its grad stayed
        before = after = _grad_at(rec, k, s.input)
    gain = after - before
    if _within(gain, s, u):
        return None
    want = s.slope * u
    p = {"input": s.input, "before": before, "after": after, "slope": s.slope, "upstream": u}
    p["expected"] = before + want
    if before != 0 and (close(after, want) or (not close(u, 1.0) and close(after, s.slope))):
        return Finding("overwrite", st.node, k, p)
    if not close(u, 1.0) and s.slope != 0 and close(gain, s.slope):
        return Finding("upstream", st.node, k, {**p, "gain": gain})
    given = gain / u if u != 0 else gain
    return Finding("local", st.node, k, {**p, "given": given, "gain": gain})


def _grad_at(rec: Recording, k: int, nid: str) -> float:
    """`nid`'s grad when step `k` began: its last change before, or what its pass began with."""
    p = rec.steps[k].pass_
    for j in range(k - 1, -1, -1):
        st = rec.steps[j]
        if st.pass_ != p:
            break
        if nid in st.changed:
            return st.changed[nid][1]
    return rec.passes[p].grads_before.get(nid, 0.0)


def _pass_steps(rec: Recording, p: int) -> list[int]:
    return [k for k, st in enumerate(rec.steps) if st.pass_ == p]


def _order(rec: Recording, ks: list[int]) -> list[Finding]:
    """Nodes whose backward ran before more grad reached them, or ran twice, in one pass."""
    out = []
    first: dict[str, int] = {}
    again: dict[str, int] = {}
    runs: dict[str, int] = {}
    flagged: set[str] = set()
    for k in ks:
        st = rec.steps[k]
        if st.kind == "backward":
            if st.node in first:
                again.setdefault(st.node, k)
            first.setdefault(st.node, k)
            runs[st.node] = runs.get(st.node, 0) + 1
        for nid, (before, after) in st.changed.items():
            ran = first.get(nid)
            if ran is None or ran == k or nid == st.node or nid in flagged or after == before:
                continue
            flagged.add(nid)
            params = {"ran": ran, "consumer": st.node, "late": k, "gain": after - before}
            out.append(Finding("order", nid, ran, params))
    for nid, n in runs.items():
        if n > 1 and nid not in flagged:
            params = {"runs": n, "ran": first[nid], "again": again[nid]}
            out.append(Finding("order", nid, again[nid], params))
    return out


def _never_ran(rec: Recording, p: int, ks: list[int]) -> list[Finding]:
    out = []
    backward = [rec.steps[k] for k in ks if rec.steps[k].kind == "backward"]
    ran = {st.node for st in backward}
    changed_any = {st.node for st in backward if st.changed}
    end: dict[str, float] = dict(rec.passes[p].grads_before)
    for k in ks:
        end.update({nid: after for nid, (_, after) in rec.steps[k].changed.items()})
    for nid in sorted(reachable(rec, rec.passes[p].output), key=lambda i: rec.by_id[i].num):
        node = rec.by_id[nid]
        slopes = [s for s in rec.local.get(nid, ()) if not close(s.slope, 0.0)]
        if node.kind != "op" or not slopes or close(end.get(nid, 0.0), 0.0):
            continue
        if nid not in ran:
            out.append(Finding("never_ran", nid, None, {"input": slopes[0].input,
                                                        "slope": slopes[0].slope}))  # fmt: skip
        elif nid not in changed_any:
            k = next(k for k in ks if rec.steps[k].node == nid)
            out.append(
                Finding("noop", nid, k, {"input": slopes[0].input, "slope": slopes[0].slope})
            )
    return out


def _not_zeroed(rec: Recording, p: int) -> list[Finding]:
    if p == 0:
        return []
    ps = rec.passes[p]
    live = reachable(rec, ps.output) - {ps.output}
    carried = sorted(
        (nid for nid in live if not close(ps.grads_before.get(nid, 0.0), 0.0)),
        key=lambda i: (rec.by_id[i].kind != "leaf", rec.by_id[i].num),
    )
    if not carried:
        return []
    first = carried[0]
    ks = _pass_steps(rec, p)
    params = {"value": ps.grads_before[first], "pass": p + 1, "count": len(carried)}
    return [Finding("not_zeroed", first, ks[0] if ks else None, params, tuple(carried[1:]))]


def diagnose(rec: Recording) -> list[Finding]:
    """Every bug the recording shows, in the order its steps show them (a step that never ran
    after those of its pass)."""
    out: list[Finding] = []
    for p in range(len(rec.passes)):
        ks = _pass_steps(rec, p)
        found = _not_zeroed(rec, p) + _order(rec, ks)
        judged: set[tuple[str, str]] = set()
        for k in ks:
            st = rec.steps[k]
            if st.kind != "backward" or not st.changed:
                continue
            for s in rec.local.get(st.node, ()):
                if (st.node, s.input) in judged:
                    continue  # a node run twice is the order's bug, not its slope's
                judged.add((st.node, s.input))
                f = _judge(rec, k, s)
                if f is not None:
                    found.append(f)
        found += _never_ran(rec, p, ks)
        found.sort(key=lambda f: (f.step is None, f.step if f.step is not None else 0))
        out += found
    return out


def end_to_end(rec: Recording) -> list[dict[str, Any]]:
    """Each leaf's final grad beside the output's slope to it, by finite differences of the
    whole graph (the gradient-check lesson's check): `ok` when they agree."""
    rows = []
    for n in rec.nodes:
        if n.id in rec.end_to_end:
            slope = rec.end_to_end[n.id]
            rows.append({"leaf": n.id, "grad": n.grad, "slope": slope, "ok": close(n.grad, slope)})
    return rows
