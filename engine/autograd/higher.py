"""Higher-order gradients: the gradient built as a graph (PyTorch's `create_graph=True`).

`grad(L, x)` walks backward from L as backward() does, but runs each op's gradient rule with
a GraphMath (one per call) instead of NumPy: every `+`, `*`, `exp`, … in a rule makes a graph
node. The result is an ordinary node whose value is ∂L/∂x and whose graph can be differentiated
again:

    x = leaf(3.0, "x")
    g = grad(x**3, x)          # 3·x² = 27, built as mul(3, pow(x, 2))
    g.backward(); x.grad       # 6·x = 18: the second backward pass

The rules in engine/autograd/ops are written with operators and `m.` functions only, so they
run unchanged here, on backward()'s own walk (engine.autograd.backward.walk) with
`GraphGrads`. Their inputs arrive wrapped as `G` (which also answers `.shape`, `.ndim`,
comparisons and so on from the forward value); comparisons and masks stay constants, since
they are piecewise constant and have no gradient. Work among constants is folded into one
constant node, so `1·3` in a rule becomes `3`, not two nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from engine.autograd import ops
from engine.autograd.backward import walk
from engine.autograd.graph import dfs_order
from engine.autograd.ops import ARRAY_MATH, BINARY_OPERATORS, Op, OpError
from engine.autograd.ops.gradients import BroadcastTo, Scatter, Where
from engine.autograd.ops.operators import DUNDERS
from engine.autograd.value import Value, constant
from engine.errors import Msg

# --- graph values as the rules see them ------------------------------------------------------


class G:
    """A graph node as a gradient rule sees it: arithmetic makes nodes; shape questions and
    comparisons are answered from the forward value (comparisons give constant masks).

    Each G carries the GraphMath of the `grad()` call that made it, so the nodes its arithmetic
    makes are counted by that call alone: two requests differentiating at once never share one
    (no module-level state passes between them)."""

    __slots__ = ("v", "m")
    __array_ufunc__ = None  # `array * G` defers to G.__rmul__

    def __init__(self, v: Value, m: GraphMath) -> None:
        self.v = v
        self.m = m

    shape = property(lambda self: self.v.data.shape)
    ndim = property(lambda self: self.v.data.ndim)
    size = property(lambda self: self.v.data.size)

    # `+ - * / ** @` come from the op registry, as Value's do (below the class).

    def __neg__(self) -> G:
        return self.m.apply(ops.Neg(), self)

    def __getitem__(self, key: Any) -> G:
        return self.m.apply(ops.Index(key if isinstance(key, tuple) else (key,)), self)

    # Comparisons are constants: a mask has no gradient.
    def __gt__(self, o: Any) -> np.ndarray:
        return self.v.data > data_of(o)

    def __lt__(self, o: Any) -> np.ndarray:
        return self.v.data < data_of(o)

    def __ge__(self, o: Any) -> np.ndarray:
        return self.v.data >= data_of(o)

    def __le__(self, o: Any) -> np.ndarray:
        return self.v.data <= data_of(o)

    def __eq__(self, o: Any) -> np.ndarray:  # type: ignore[override]
        return self.v.data == data_of(o)

    def __ne__(self, o: Any) -> np.ndarray:  # type: ignore[override]
        return self.v.data != data_of(o)

    __hash__ = None  # type: ignore[assignment]


def _graph_operator(cls: type[Op], reflected: bool) -> Callable[[G, Any], G]:
    def operator(self: G, o: Any) -> G:
        return self.m.apply(cls(), o, self) if reflected else self.m.apply(cls(), self, o)

    return operator


for _symbol, _cls in BINARY_OPERATORS.items():
    setattr(G, f"__{DUNDERS[_symbol]}__", _graph_operator(_cls, reflected=False))
    setattr(G, f"__r{DUNDERS[_symbol]}__", _graph_operator(_cls, reflected=True))


def data_of(x: Any) -> np.ndarray:
    if isinstance(x, G):
        return x.v.data
    if isinstance(x, Value):
        return x.data
    return np.asarray(x, dtype=np.float64)


def node_of(x: Any) -> Value:
    if isinstance(x, G):
        return x.v
    if isinstance(x, Value):
        return x
    return constant(np.asarray(x, dtype=np.float64))


class GraphMath:
    """ArrayMath's functions (engine.autograd.ops.base), each making graph nodes, not arrays.

    `made` collects every node created, so the caller can count and place them."""

    def __init__(
        self,
        budget: int | None = None,
        max_elements: int | None = None,
        element_budget: int | None = None,
    ) -> None:
        self.made: list[Value] = []
        self.budget = budget  # nodes it may make (max_nodes)
        self.max_elements = max_elements  # elements of one node (max_tensor_elements)
        self.element_budget = element_budget  # elements of all nodes (max_total_elements)
        self.elements = 0

    def apply(self, op: Op, *xs: Any) -> G:
        nodes = [self.lift(x) for x in xs]
        if not any(n.requires_grad for n in nodes):
            # Constants only: one folded constant node (it has no gradient to carry).
            self.check_size(op, nodes)
            with np.errstate(all="ignore"):
                out = np.asarray(op.compute(*(n.data for n in nodes)), dtype=np.float64)
            return self.wrap(self.record(constant(out)))
        simpler = self.simplify(op, nodes)
        if simpler is not None:
            return self.wrap(simpler)
        self.check_size(op, nodes)
        return self.wrap(self.record(ops.apply(op, *nodes)))

    def wrap(self, node: Value) -> G:
        return G(node, self)

    def check_size(self, op: Op, nodes: list[Value]) -> None:
        """Refuse, before computing it, a node larger than one value may be (max_elements)."""
        if self.max_elements is None:
            return
        # Its result, and what the op makes inside (mse's broadcast, matmul's batch).
        size = op.work_elements(*(n.data.shape for n in nodes))
        if size > self.max_elements:
            raise OpError(
                "limit_max_tensor_elements", "too_large", limit="max_tensor_elements",
                what=Msg("what_gradient_value", {}), n=size, max=self.max_elements,
            )  # fmt: skip

    def lift(self, x: Any) -> Value:
        """A node for x: its own for a graph value, else a new (recorded) constant."""
        if isinstance(x, G):
            return x.v
        if isinstance(x, Value):
            return x
        return self.record(constant(np.asarray(x, dtype=np.float64)))

    def constant(self, x: Any) -> G:
        """A new (recorded) constant node for an array."""
        return self.wrap(self.record(constant(np.asarray(x, dtype=np.float64))))

    def record(self, node: Value) -> Value:
        """Count a node this walk made against its budgets (nodes, then elements in all)."""
        if self.budget is not None and len(self.made) >= self.budget:
            raise OpError("limit_max_nodes", "too_large", limit="max_nodes", max=self.budget)
        self.elements += node.data.size
        if self.element_budget is not None and self.elements > self.element_budget:
            raise OpError(
                "limit_max_total_elements", "too_large", limit="max_total_elements",
                max=self.element_budget,
            )  # fmt: skip
        self.made.append(node)
        return node

    @staticmethod
    def simplify(op: Op, nodes: list[Value]) -> Value | None:
        """x·1, 1·x, x + 0, 0 + x, x − 0 and x / 1 are x (when x already has the result's
        shape): rules multiply by the incoming grad, which is often exactly 1."""
        unit = op.unit  # the op's own: 0 for + and −, 1 for · and /
        if len(nodes) != 2 or unit is None:
            return None
        a, b = nodes
        shape = np.broadcast_shapes(a.data.shape, b.data.shape)

        def is_const(n: Value, v: float) -> bool:
            return not n.requires_grad and bool(np.all(n.data == v))

        if is_const(b, unit) and a.data.shape == shape:
            return a
        if op.commutes and is_const(a, unit) and b.data.shape == shape:
            return b
        return None

    # ArrayMath's functions -------------------------------------------------------------------
    def exp(self, x: Any) -> G:
        return self.apply(ops.Exp(), x)

    def log(self, x: Any) -> G:
        return self.apply(ops.Log(), x)

    def sin(self, x: Any) -> G:
        return self.apply(ops.Sin(), x)

    def cos(self, x: Any) -> G:
        return self.apply(ops.Cos(), x)

    @staticmethod
    def sign(x: Any) -> np.ndarray:
        return np.sign(data_of(x))  # piecewise constant: no gradient

    @staticmethod
    def mask(condition: Any) -> np.ndarray:
        return np.asarray(condition, dtype=np.float64)

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        cond = np.asarray(condition, dtype=bool)
        shape = np.broadcast_shapes(cond.shape, np.shape(data_of(a)), np.shape(data_of(b)))
        if cond.all() or not cond.any():
            pick = a if cond.all() else b  # one branch everywhere: no where node
            if np.shape(data_of(pick)) == shape:
                return pick if isinstance(pick, G) else self.wrap(self.lift(pick))
            return self.broadcast_to(pick, shape)
        return self.apply(Where(cond), a, b)

    def reshape(self, x: Any, shape: Sequence[int]) -> G:
        if tuple(np.shape(data_of(x))) == tuple(shape):
            return x if isinstance(x, G) else self.wrap(self.lift(x))
        return self.apply(ops.Reshape(tuple(shape)), x)

    def transpose(self, x: Any, axes: Sequence[int] | None = None) -> G:
        return self.apply(ops.Transpose(None if axes is None else tuple(axes)), x)

    def matmul(self, a: Any, b: Any) -> G:
        return self.apply(ops.MatMul(), a, b)

    def broadcast_to(self, x: Any, shape: Sequence[int]) -> G:
        if tuple(np.shape(data_of(x))) == tuple(shape):
            return x if isinstance(x, G) else self.wrap(self.lift(x))
        return self.apply(BroadcastTo(tuple(shape)), x)

    def expand_dims(self, x: Any, axis: Any) -> G:
        shape = np.expand_dims(np.empty(np.shape(data_of(x)), dtype=bool), axis).shape
        return self.reshape(x, shape)

    def sum(self, x: Any, axis: Any = None, keepdims: bool = False) -> G:
        return self.apply(ops.Sum(axis, keepdims), x)

    def swap_last(self, x: Any) -> G:
        n = len(np.shape(data_of(x)))
        axes = list(range(n))
        axes[-1], axes[-2] = axes[-2], axes[-1]
        return self.transpose(x, axes)

    def sum_to(self, g: Any, shape: tuple[int, ...]) -> Any:
        gshape = np.shape(data_of(g))
        if tuple(gshape) == tuple(shape):
            return g
        lead = len(gshape) - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
        )
        return self.reshape(self.sum(g, axes, True), shape)

    def scatter(self, g: Any, shape: tuple[int, ...], key: Any) -> G:
        return self.apply(Scatter(shape, key), g)

    def softmax(self, z: Any, axis: int) -> G:
        return self.apply(ops.Softmax(axis), z)


class GraphGrads:
    """grad()'s Backprop for engine.autograd.backward.walk: grads are graph nodes (as `G`),
    kept by node seq; every rule runs on the call's GraphMath, and `+=` is a graph add."""

    # Every step makes graph nodes: no float64 shortcut.
    scalar_step: Callable[[Value], bool] | None = None

    def __init__(self, m: GraphMath) -> None:
        self.m = m
        self.grads: dict[int, Any] = {}

    def begin(self, topo: list[Value]) -> None:
        pass  # a grad not in `grads` is zero

    def seed(self, root: Value) -> None:
        self.grads[root.seq] = self.m.constant(np.ones(root.data.shape))

    def local(self, node: Value) -> Sequence[Any] | None:
        g = self.grads.get(node.seq)
        if g is None:
            return None  # the output does not depend on this node
        assert node.op is not None
        m = self.m
        needs = [x.requires_grad for x in node.inputs]
        return node.op.gradient(g, [m.wrap(x) for x in node.inputs], m.wrap(node), needs, m)

    def add(self, node: Value, i: int, x: Value, contribution: Any) -> None:
        c = contribution if isinstance(contribution, G) else self.m.constant(data_of(contribution))
        old = self.grads.get(x.seq)
        self.grads[x.seq] = c if old is None else old + c

    def step(self, node: Value, edges: list[Any]) -> None:
        pass  # on_node sees the nodes made, once the walk is over


def grad(
    output: Value,
    wrt: Sequence[Value],
    *,
    on_node: Callable[[Value], None] | None = None,
    max_new: int | None = None,
    max_elements: int | None = None,
    max_new_elements: int | None = None,
) -> list[Value]:
    """∂output/∂w for each w in `wrt`, as graph nodes (a non-scalar output counts as its sum).

    The walk is backward()'s own (DFS order, `+=` as a graph add), with every rule run on
    graph nodes. `on_node` sees each node created (in creation order) once the walk is over — only
    the ones the results depend on. `max_new` bounds how many nodes may be created,
    `max_elements` the elements of each and `max_new_elements` the elements of all: each is
    checked before the node is made, so a gradient too large to build costs nothing."""
    m = GraphMath(max_new, max_elements, max_new_elements)
    how = GraphGrads(m)
    with ops.quiet():
        walk(output, dfs_order(output), how)
    grads = how.grads
    results = []
    for w in wrt:
        found = grads.get(w.seq)
        # The output does not depend on w: its gradient is zero.
        results.append(found.v if found is not None else m.constant(np.zeros(w.data.shape)).v)
    if on_node is not None:
        fresh = {n.seq for n in m.made}
        keep: dict[int, Value] = {}
        for r in results:
            for n in dfs_order(r):
                if n.seq in fresh:
                    keep[n.seq] = n
        for seq in sorted(keep):
            on_node(keep[seq])
    return results


__all__ = ["BroadcastTo", "G", "GraphMath", "Scatter", "Where", "grad"]

# ArrayMath has every function GraphMath has; keep the two in step.
assert all(hasattr(GraphMath, name) for name in vars(type(ARRAY_MATH)) if not name.startswith("_"))


def describe(node: Value, width: int = 40) -> str:
    """A short formula for a node grad() made, from its inputs' labels or texts: `3*x**2`."""

    def name(x: Value) -> str:
        if x.kind == "const" and x.data.ndim == 0:
            v = float(x.data)
            return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.4g}"
        if x.kind == "const":
            return "c"
        text = x.name or x.text or (x.op.name if x.op else "?")
        return text if text.replace("_", "").isalnum() else f"({text})"

    assert node.op is not None
    args = [name(x) for x in node.inputs]
    symbol = node.op.symbol
    if node.op.arity == 2 and node.op.operator:  # a Python operator between two values
        text = f"{args[0]}{symbol}{args[1]}"
    elif node.op.operator == "-":
        text = f"-{args[0]}"
    elif node.op.operator == "[]":
        text = f"{args[0]}[{node.op.params()['key']}]"
    else:
        text = f"{node.op.name}({', '.join(args)})"
    return text if len(text) <= width else text[: width - 1] + "…"
