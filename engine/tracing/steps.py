"""A trace's steps: what one step of backward did, as records and as Steps with their Terms.

A step is one node's local backward; each of its terms is one input edge: the chain-rule term
`x̄ += ū · ∂u/∂x`, with the grad before and after the `+=`. The recorder (record.py) keeps the
cheap form (`Record`); a `Step` is made from one only when asked for.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from engine.autograd.ops import SCALAR_MATH, quiet
from engine.autograd.value import Value

# Steps and terms are immutable records. NamedTuples rather than frozen dataclasses: a trace
# makes one per step and one per edge, and a frozen dataclass costs five times more to make.


class Term(NamedTuple):
    """One input edge of a step: x̄ (before) + contribution = x̄ (after)."""

    input: Value
    arg: int
    contribution: np.ndarray
    before: np.ndarray
    after: np.ndarray
    node: Value  # the op whose local backward this edge belongs to

    @property
    def local(self) -> float | None:
        """∂u/∂x as a number when the op and its inputs are all scalars, else None. Worked out
        when asked (the JSON asks once per step), so recording does not pay for it."""
        locals_ = local_derivatives(self.node)
        return None if locals_ is None else locals_[self.arg]


class Step(NamedTuple):
    """Step 0 seeds the output's grad; every later step is one op node's local backward."""

    node: Value
    kind: str  # "seed" or "backward"
    upstream: np.ndarray | None
    terms: tuple[Term, ...] = ()
    # The grads this step changed, with their values after it (the per-step delta).
    changed: tuple[tuple[Value, np.ndarray], ...] = ()


# What the recorder keeps per step, as backward hands it over: (node, upstream, edges) with
# edges a list of (argument index, contribution, grad before, grad after), one per input edge
# that carried gradient; for the seed, (root, its grad, None). Steps and Terms are made from
# these only when asked for (`Trace.steps`); the JSON (`Trace.to_dict`) reads them directly.
Edge = tuple[int, Any, Any, Any]
Record = tuple[Value, Any, "list[Edge] | None"]


def make_step(record: Record) -> Step:
    """The Step (with its Terms) a record stands for."""
    node, upstream, edges = record
    if edges is None:
        return Step(node, "seed", None, (), ((node, upstream),))
    inputs = node.inputs
    # tuple.__new__ is what Term._make does, without the Python-level __new__ (half the
    # cost); the fields are in Term's order.
    terms = tuple(
        [_new(Term, (inputs[arg], arg, c, before, after, node)) for arg, c, before, after in edges]
    )
    # The last value of each input (x*x changes x twice), in the order first changed.
    changed = tuple({t[0].seq: (t[0], t[4]) for t in terms}.values())
    return _new(Step, (node, "backward", upstream, terms, changed))


def record_of(step: Step) -> Record:
    """The record a Step was made from."""
    if step.kind == "seed":
        return (step.node, step.changed[0][1], None)
    return (
        step.node,
        step.upstream,
        [(t.arg, t.contribution, t.before, t.after) for t in step.terms],
    )


def local_derivatives(node: Value) -> list[float | None] | None:
    """∂u/∂x for each input as a number, when the op and its inputs are all scalars: the op's
    own rule run with ū = 1."""
    data = node.data
    if data.ndim:
        return None
    ins = []
    for x in node.inputs:
        d = x.data
        if d.ndim:
            return None
        ins.append(d[()] if type(d) is np.ndarray else d)
    assert node.op is not None
    needs = [x.requires_grad for x in node.inputs]
    out = data[()] if type(data) is np.ndarray else data
    with quiet():
        grads = node.op.gradient(_ONE, ins, out, needs, SCALAR_MATH)
    return [None if g is None else float(g) for g in grads]


_ONE = np.float64(1.0)
_new = tuple.__new__
