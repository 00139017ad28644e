"""The one reverse walk: seed the output's grad, then, in reverse topological order, run each
op's local gradient and add (`+=`) each contribution into its input's grad.

`walk` is that loop, parameterised by a `Backprop`: what it computes with and where the grads
live. backward() walks with `ArrayGrads` (arrays, kept in each node's `.grad`, watched by a
`Recorder`); engine.autograd.higher's grad() walks with graph nodes, to differentiate again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from engine.autograd.graph import topological_order
from engine.autograd.ops.base import ARRAY_MATH, SCALAR_MATH, Op, is_finite
from engine.autograd.ops.forward import quiet
from engine.autograd.ops.shapes import OpError
from engine.autograd.value import Value
from engine.errors import Msg

if TYPE_CHECKING:
    Edge = tuple[int, np.ndarray, np.ndarray, np.ndarray]

ACCUMULATE = ("add", "assign")


class BackwardError(OpError):
    """A gradient became inf or NaN; `node` is the op whose local backward produced it. Keyed
    as OpError is: `text` names the node (its program text, else its op's symbol)."""

    def __init__(self, key: str, node: Value, **params: Any) -> None:
        super().__init__(key, "non_finite_grad", **params)
        self.node = node


class Recorder(Protocol):
    """What watches backward(): the order, the seed, then one call per local backward."""

    def begin(self, topo: list[Value]) -> None: ...

    def seed(self, root: Value) -> None: ...

    def step(
        self,
        node: Value,
        contributions: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
    ) -> None:
        """One local backward: (argument index, contribution, grad before, grad after) per
        input edge that carried gradient. The list is the recorder's to keep: backward makes a
        new one per step, and never changes a grad in place, so the arrays stay as they were."""


class Backprop(Protocol):
    """What the walk computes with: where grads live, how a local gradient is run, what `+=`
    means, and what is told of each step."""

    # A whole step for a node it can do faster itself, or None; True when it did.
    scalar_step: Callable[[Value], bool] | None

    def begin(self, topo: list[Value]) -> None:
        """Before the seed: every grad starts at zero (or none)."""

    def seed(self, root: Value) -> None:
        """The output's grad: ones of its shape (∂L/∂L = 1)."""

    def local(self, node: Value) -> Sequence[Any] | None:
        """The node's local gradient: one contribution per input (None where that input needs
        none), or None when no gradient reached the node."""

    def add(self, node: Value, i: int, x: Value, contribution: Any) -> Any:
        """`x.grad += contribution` for input `i` of `node`; returns what a step keeps of it."""

    def step(self, node: Value, edges: list[Any]) -> None:
        """One local backward is done; `edges` are what `add` returned, in input order."""


def walk(root: Value, topo: list[Value], how: Backprop) -> None:
    """Backpropagate from `root` over `topo` (inputs before the nodes that use them)."""
    how.begin(topo)
    how.seed(root)
    scalar_step, local, add, step = how.scalar_step, how.local, how.add, how.step
    for node in reversed(topo):
        if node.op is None or not node.requires_grad:
            continue  # leaves and constants: nothing to pass on
        if scalar_step is not None and scalar_step(node):
            continue  # the same step, on float64 scalars (ArrayGrads.scalar_step)
        contributions = local(node)
        if contributions is None:
            continue  # no gradient reached this node
        edges = []
        for i, x in enumerate(node.inputs):
            contribution = contributions[i]
            if contribution is not None and x.requires_grad:
                edges.append(add(node, i, x, contribution))
        step(node, edges)


def backward(
    root: Value,
    recorder: Recorder | None = None,
    accumulate: str = "add",
    order: str = "dfs",
    seed: Any = None,
    topo: list[Value] | None = None,
    keep_leaf_grads: bool = False,
) -> list[Value]:
    """Fill `.grad` for every node `root` depends on; returns the topological order used.
    `seed` is root's first grad (PyTorch's backward(gradient=v)); ones of its shape if None.
    `keep_leaf_grads`: a leaf's grad starts where an earlier pass left it, so this pass's
    contributions add to it (PyTorch's grads accumulate across backward calls).

    `accumulate="assign"` is the classic bug (`=` where `+=` belongs), kept so the page can show
    what goes wrong: each contribution overwrites, even the second edge of `x*x`. Recording is
    off unless a recorder is passed, and then costs one test per step.
    """
    if accumulate not in ACCUMULATE:
        raise ValueError(f"accumulate must be one of {ACCUMULATE}, not {accumulate!r}")
    if topo is None:
        topo = topological_order(root, order)
    how = ArrayGrads(accumulate == "assign", recorder, seed, keep_leaf_grads)
    with quiet():  # a non-finite grad is reported by name (BackwardError), not as a warning
        walk(root, topo, how)
    return topo


_F64 = np.float64
_NDARRAY = np.ndarray
# The grads of scalars are float64 scalars (immutable, so one zero and one seed serve all).
_ZERO: Any = np.float64(0.0)
_ONE: Any = np.float64(1.0)
_isfinite = math.isfinite


class ArrayGrads:
    """backward()'s Backprop: grads are arrays (float64 scalars for scalars) in each node's
    `.grad`, checked finite and of their input's shape; `assign` makes `+=` an `=` (the bug the
    page shows); a recorder, when given, is told the order, the seed and every step."""

    __slots__ = ("assign", "first", "keep", "recorder", "scalar_step")

    def __init__(
        self,
        assign: bool = False,
        recorder: Recorder | None = None,
        seed: Any = None,
        keep_leaf_grads: bool = False,
    ) -> None:
        self.assign = assign
        self.recorder = recorder
        self.first = seed
        self.keep = keep_leaf_grads
        self.scalar_step: Callable[[Value], bool] | None = _scalar_step(assign, recorder)

    def begin(self, topo: list[Value]) -> None:
        keep = self.keep
        for node in topo:
            if keep and node.op is None and node.grad is not None and node.requires_grad:
                continue  # a leaf's grad from the passes before: this one adds to it
            if node.requires_grad:
                data = node.data
                node.grad = _ZERO if type(data) is _F64 or not data.shape else np.zeros(data.shape)
            else:
                node.grad = None
        if self.recorder is not None:
            self.recorder.begin(topo)

    def seed(self, root: Value) -> None:
        data = root.data
        scalar = type(data) is _F64 or not data.shape
        if self.first is not None:
            first: Any = np.array(self.first, dtype=np.float64).reshape(np.shape(data))
            root.grad = _F64(first) if scalar else first  # type: ignore[assignment]
        else:
            root.grad = _ONE if scalar else np.ones(data.shape)
        if self.recorder is not None:
            self.recorder.seed(root)

    def local(self, node: Value) -> Sequence[Any]:
        """op.gradient on the inputs' values: ScalarMath when all are scalars, else ArrayMath."""
        assert node.op is not None
        data = node.data
        needs = []
        ins = []
        scalar = type(data) is _F64
        for x in node.inputs:
            needs.append(x.requires_grad)
            d = x.data
            if type(d) is _NDARRAY:
                if d.shape:
                    scalar = False
                else:
                    d = d[()]  # a 0-d leaf or constant, as a float64 scalar
            ins.append(d)
        return node.op.gradient(node.grad, ins, data, needs, SCALAR_MATH if scalar else ARRAY_MATH)

    def add(self, node: Value, i: int, x: Value, contribution: Any) -> Edge:
        # Grads of scalars are float64 scalars standing in for 0-d arrays: typed Any here.
        before: Any = x.grad
        c: Any = contribution
        if type(c) is not _F64 or type(before) is not _F64:
            c = _checked(i, c, x, node)
        elif not _isfinite(c):
            raise _non_finite(node, c)
        after: Any = (c if type(c) is _F64 else c.copy()) if self.assign else before + c
        x.grad = after
        return (i, c, before, after)

    def step(self, node: Value, edges: list[Any]) -> None:
        if self.recorder is not None:
            self.recorder.step(node, edges)


# Long on purpose: the backward's hot path, written out in one piece (see its docstring).
def _scalar_step(assign: bool, recorder: Recorder | None) -> Callable[[Value], bool]:
    """ArrayGrads.scalar_step for `assign` and `recorder` (a closure: its cells are read faster
    than an object's attributes, and this runs once per node)."""
    record = recorder is not None

    # Long on purpose: one step of the walk, inlined (a call per edge costs ~10%).
    def scalar_step(node: Value) -> bool:
        """The whole step (local gradient, `+=`, record) for a node the forward's fast path
        made, an elementwise op on one or two scalars: the op's scalar kernel on float64
        scalars, no lists (a scalar leaf or constant holds a 0-d array: `[()]` reads it as a
        float64 scalar). False for any other node. The `+=` into each input is written out
        here, not called: this is what the engine's time per node is."""
        data = node.data
        op: Any = node.op
        if type(data) is not _F64 or not op.elementwise:
            return False
        inputs = node.inputs
        a = inputs[0]
        x = a.data
        if type(x) is not _F64:
            if x.shape:
                return False
            x = x[()]
        if len(inputs) == 1:
            b: Any = None
            na, nb = True, False  # the node needs a grad, so its one input does
            ga, gb = op.scalar_grad(node.grad, x, data), None
        else:
            b = inputs[1]
            y = b.data
            if type(y) is not _F64:
                if y.shape:
                    return False
                y = y[()]
            na = a.requires_grad
            nb = b.requires_grad
            ga, gb = op.scalar_grad(node.grad, x, y, data, na, nb)
        if record:
            edges: list[Any] = []
        if na:
            if type(ga) is not _F64:
                ga = _checked(0, ga, a, node)
            elif not _isfinite(ga):
                raise _non_finite(node, ga)
            before = a.grad
            after = ga if assign else before + ga
            a.grad = after
            if record:
                edges.append((0, ga, before, after))
        if nb:
            if type(gb) is not _F64:
                gb = _checked(1, gb, b, node)
            elif not _isfinite(gb):
                raise _non_finite(node, gb)
            before = b.grad  # after a's: `x*x` adds twice into one grad
            after = gb if assign else before + gb
            b.grad = after
            if record:
                edges.append((1, gb, before, after))
        if record:
            recorder.step(node, edges)  # type: ignore[union-attr]
        return True

    return scalar_step


def _checked(i: int, contribution: Any, x: Value, node: Value) -> np.ndarray:
    """A contribution as a float64 array of its input's shape (a float64 scalar for a scalar),
    finite, or the error that says which op made it otherwise."""
    op: Op = node.op  # type: ignore[assignment]
    contribution = np.asarray(contribution, dtype=np.float64)
    assert contribution.shape == x.data.shape, (
        f"{op.name} gave a grad of shape {contribution.shape} for input {i} of shape {x.data.shape}"
    )
    if not is_finite(contribution):
        raise _non_finite(node, contribution)
    return contribution if contribution.shape else contribution[()]


def _non_finite(node: Value, contribution: Any) -> BackwardError:
    assert node.op is not None
    key = "grad_nan" if np.isnan(contribution).any() else "grad_infinite"
    text = node.text or node.op.symbol
    if node.op.domain_hint:
        return BackwardError(key + "_hint", node, text=text, hint=Msg(node.op.domain_hint, {}))
    return BackwardError(key, node, text=text)


def _backward_method(
    self: Value, recorder: Any = None, accumulate: str = "add", order: str = "dfs"
) -> None:
    """Fill `.grad` of every node this one depends on (engine.autograd.backward.backward)."""
    backward(self, recorder=recorder, accumulate=accumulate, order=order)


# Value.backward is attached here, as engine.autograd.ops attaches the operators, so that
# value.py imports nothing back (engine.autograd.value declares it for the type checker).
setattr(Value, "backward", _backward_method)  # noqa: B010
