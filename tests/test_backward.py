"""The reverse walk itself: a chain of a million nodes (no recursion, linear time), the orders
(dfs post-order; Kahn with the highest id first among ready nodes, as PyTorch schedules), what
gets no gradient (requires_grad False, const()), seeding, and the options.
"""

from __future__ import annotations

import contextlib
import gc
import json
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given

import engine.autograd.ops as O
from engine.autograd.backward import backward
from engine.autograd.graph import dfs_order, kahn_order, reachable, topological_order
from engine.autograd.value import Value, constant, leaf
from engine.tracing.record import trace
from tests.strategies import Instr, Program, assert_close, bounded, build_engine, get_run, programs

# --- a million nodes ---------------------------------------------------------------------------

FACTOR = 1.0000001
N = 1_000_000
MARKS = (100_000, 400_000)


@pytest.fixture(scope="module")
def chain() -> dict[str, Any]:
    """x → x·c → (x·c)·c → … a chain of N mul nodes built with the operators; keeps the nodes
    at MARKS so the timing test can walk prefixes of the same chain."""
    x = leaf(1.0, "x")
    c = constant(FACTOR)
    v = x
    marks: dict[int, Value] = {}
    with no_gc():  # nodes form no cycles; the collector would only rescan them, again and again
        for i in range(1, N + 1):
            v = v * c
            if i in MARKS:
                marks[i] = v
    return {"x": x, "c": c, "out": v, "marks": marks}


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@pytest.mark.slow
def test_a_million_node_chain_has_no_recursion_error(chain: dict[str, Any]) -> None:
    x, out = chain["x"], chain["out"]
    with no_gc():  # only to save the suite's time: the walk allocates a million grads
        topo = backward(out)
    assert len(topo) == N + 2  # x, c and the N products
    assert topo[0] is x or topo[1] is x
    assert topo[-1] is out
    # d(x·cᴺ)/dx = cᴺ, accumulated one factor per step.
    assert_close(x.grad, FACTOR**N, rtol=1e-9)
    assert_close(out.data, FACTOR**N, rtol=1e-9)
    assert chain["c"].grad is None


@pytest.mark.slow
def test_backward_time_is_linear_in_the_chain_length(chain: dict[str, Any]) -> None:
    """Walking 4× the nodes takes about 4× the time: the bound only catches quadratic work."""
    small, large = (chain["marks"][n] for n in MARKS)

    def best_of(v: Value, repeat: int) -> float:
        times = []
        for _ in range(repeat):
            with no_gc():  # time the walk, not a collection that happens to fall inside it
                start = time.perf_counter()
                backward(v)
                times.append(time.perf_counter() - start)
        return min(times)

    t_small, t_large = best_of(small, 3), best_of(large, 1)
    ratio = t_large / t_small
    assert ratio < 10, (
        f"{MARKS[0]} nodes: {t_small:.3f}s, {MARKS[1]}: {t_large:.3f}s (×{ratio:.1f})"
    )
    assert_close(chain["x"].grad, FACTOR ** MARKS[1], rtol=1e-9)


def test_long_chains_in_both_orders_and_traced() -> None:
    """Kahn's sort, reachable() and the recorder are iterative too."""
    x = leaf(0.5, "x")
    v = x
    for _ in range(20_000):
        v = v + 1.0
    for order in ("dfs", "kahn"):
        backward(v, order=order)
        assert float(x.grad) == 1.0
    assert len(reachable(v)) == 40_001
    t = trace(v, order="kahn")
    assert len(t.steps) == 20_001
    assert float(x.grad) == 1.0


def test_deep_nesting_of_sums_of_products() -> None:
    """A long chain where every step fans out (v = v*v*0.5 + v): deep and wide at once."""
    x = leaf(0.1, "x")
    v = x
    for _ in range(2_000):
        v = O.tanh(v * v * 0.5 + v)
    backward(v)
    import torch

    tx = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
    tv = tx
    for _ in range(2_000):
        tv = torch.tanh(tv * tv * 0.5 + tv)
    tv.backward()
    assert_close(v.data, tv.item())
    assert_close(x.grad, tx.grad.item())


# --- orders ------------------------------------------------------------------------------------


def step_nodes(root: Value, order: str) -> list[Value]:
    t = trace(root, order=order)
    return [s.node for s in t.steps[1:]]


def test_kahn_runs_the_highest_id_first_among_ready_nodes() -> None:
    x, y = leaf(2.0, "x"), leaf(3.0, "y")
    a = x * 2.0  # created first: the lower id
    b = y * 3.0
    L = b + a  # b is the first argument
    # DFS visits inputs in argument order: topo is …b…, …a…, L, so backward runs L, a, b.
    assert step_nodes(L, "dfs") == [L, a, b]
    # Kahn: after L, both a and b are ready; the highest id (b) runs first.
    assert step_nodes(L, "kahn") == [L, b, a]
    for order in ("dfs", "kahn"):
        backward(L, order=order)
        assert (float(x.grad), float(y.grad)) == (2.0, 3.0)


def test_kahn_waits_for_every_user_of_a_node() -> None:
    """u has two users, s and c; it runs only after both, even though s became ready early."""
    x = leaf(0.7, "x")
    u = x * x
    s = O.sin(u)
    k = s * 2.0  # a longer path through s …
    c = O.cos(u)
    L = k + c
    order = step_nodes(L, "kahn")
    assert order == [L, c, k, s, u]
    assert order.index(u) > order.index(s) and order.index(u) > order.index(c)
    assert step_nodes(L, "dfs") == [L, c, k, s, u]


def test_kahn_ties_in_a_diamond() -> None:
    x = leaf(1.5, "x")
    p, q, r = x * 2.0, x * 3.0, x * 4.0
    L = p + q + r  # (p + q) + r
    pq = L.inputs[0]
    assert step_nodes(L, "kahn") == [L, pq, r, q, p]
    # dfs: topo visits (p+q) first — x, p, q, p+q — then r; backward reverses it.
    assert step_nodes(L, "dfs") == [L, r, pq, q, p]
    backward(L, order="kahn")
    assert float(x.grad) == 9.0


def test_topological_orders_are_valid_and_deterministic() -> None:
    x, y = leaf(1.0, "x"), leaf(2.0, "y")
    a = x * y
    b = a + x
    c = O.exp(b) * a
    L = c - y
    for order in ("dfs", "kahn"):
        topo = topological_order(L, order)
        pos = {v.seq: i for i, v in enumerate(topo)}
        for v in topo:
            for w in v.inputs:
                assert pos[w.seq] < pos[v.seq]
        assert [v.seq for v in topo] == [v.seq for v in topological_order(L, order)]
    assert {v.seq for v in dfs_order(L)} == {v.seq for v in kahn_order(L)}
    with pytest.raises(ValueError):
        topological_order(L, "bfs")


# Ops whose torch version is exactly one autograd node, so the two schedules can be compared.
ONE_NODE_KINDS = ("add", "sub", "mul", "div", "neg", "exp", "sin", "cos", "tanh", "sigmoid",
                  "max", "min", "pow_const", "relu", "abs", "sum", "mean", "matmul")  # fmt: skip


def torch_schedule(prog: Program) -> list[int]:
    """The order in which PyTorch's engine runs the program's op nodes (pre-hooks)."""
    import torch

    ran: list[int] = []
    _, out = build_torch_with_hooks(prog, ran)
    out.backward(torch.ones_like(out))
    return ran


def build_torch_with_hooks(prog: Program, ran: list[int]) -> tuple[list[Any], Any]:
    import tests.strategies as S

    made: list[Any] = []
    leaves: list[Any] = []
    for i, e in enumerate(prog.entries):
        if isinstance(e, S.Leaf):
            t = S.tensor(e.value)
            leaves.append(t)
        else:
            args = [
                made[a] if isinstance(a, int) else S.tensor(a, requires_grad=False) for a in e.args
            ]
            t = S.PROGRAM_OPS[e.op].th(args, e.params)
            t.grad_fn.register_prehook(lambda grads, i=i: ran.append(i))
        made.append(t)
    return leaves, made[-1]


@bounded(50)
@given(programs(tensors=True, max_ops=8, kinds=ONE_NODE_KINDS))
def test_kahn_order_is_the_order_pytorch_runs_backward(prog: Program) -> None:
    _, out, made = build_engine(prog)
    index = {v.seq: i for i, v in enumerate(made)}
    engine_order = [index[v.seq] for v in reversed(kahn_order(out)) if v.op is not None]
    assert engine_order == torch_schedule(prog), prog.describe()


# --- what gets no gradient ---------------------------------------------------------------------


def test_nodes_that_do_not_require_grad_get_no_contribution() -> None:
    x = leaf(1.5, "x")
    two, three = constant(2.0), constant(3.0)
    k = two * three  # an op on constants only: requires no grad
    L = x * k + three
    assert not k.requires_grad and not two.requires_grad
    t = trace(L)
    assert float(x.grad) == 6.0
    assert k.grad is None and two.grad is None and three.grad is None
    assert all(s.node is not k for s in t.steps)
    touched = {term.input.seq for s in t.steps for term in s.terms}
    assert touched.isdisjoint({k.seq, two.seq, three.seq})
    d = json.loads(json.dumps(t.to_dict()))
    by_seq = dict(zip([v.seq for v in t.nodes], d["nodes"], strict=True))
    assert by_seq[k.seq]["grad"] is None and by_seq[two.seq]["grad"] is None
    assert d["grads"] == {"x": 6.0}


def test_const_cuts_the_graph() -> None:
    x = leaf(3.0, "x")
    sq = x * x
    y = O.const(sq)
    L = y * x  # d/dx of const(x²)·x is x² = 9, not 3x² = 27
    t = trace(L)
    assert float(x.grad) == 9.0
    assert sq not in t.topo and sq.grad is None
    assert y.kind == "const" and y.grad is None and y.inputs == ()
    assert_close(y.data, 9.0)
    y.data[...] = 0.0  # const() copies: the cut value does not alias the node it came from
    assert float(sq.data) == 9.0


def test_const_cuts_the_graph_in_source() -> None:
    run = get_run()
    d = run("x = 3\ny = const(x*x)\nL = y*x").to_dict()
    assert d["grads"] == {"x": 9.0}
    kinds = {n["label"]: n for n in d["nodes"]}
    assert kinds["y"]["kind"] == "const" and kinds["y"]["grad"] is None
    cut = [n for n in d["nodes"] if n["kind"] == "op" and n["id"] not in d["topo"]]
    assert cut and all(n["grad"] is None for n in cut)
    d = run("x = 3\nL = detach(x)*x + x.detach()").to_dict()
    assert d["grads"] == {"x": 3.0}


def test_a_leaf_the_output_does_not_use_has_grad_zero() -> None:
    x, unused = leaf(2.0, "x"), leaf([1.0, 2.0], "w")
    L = x * x
    t = trace(L, nodes=[x, unused, *[v for v in reachable(L) if v is not x]])
    d = t.to_dict()
    assert d["grads"]["w"] == [0.0, 0.0]
    assert d["grads"]["x"] == 4.0


# --- seeding and options -----------------------------------------------------------------------


def test_non_scalar_output_is_seeded_with_ones() -> None:
    X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    a = leaf(X)
    backward(O.tanh(a) * a)
    b = leaf(X)
    backward(O.sum(O.tanh(b) * b))
    assert_close(a.grad, b.grad)
    t = trace(O.tanh(leaf(X)) * 2.0)
    assert np.array_equal(t.steps[0].changed[0][1], np.ones((2, 3)))
    assert t.to_dict()["seeded_with_ones"] is True


def test_backward_twice_gives_the_same_grads() -> None:
    x = leaf(2.0)
    L = x * x * x
    backward(L)
    first = float(x.grad)
    backward(L)
    assert float(x.grad) == first == 12.0


def test_unknown_options_are_refused() -> None:
    x = leaf(1.0)
    with pytest.raises(ValueError):
        backward(x * 2.0, accumulate="replace")
    with pytest.raises(ValueError):
        backward(x * 2.0, order="bfs")


def test_value_backward_method() -> None:
    x, y = leaf(2.0), leaf(3.0)
    (x * y + x).backward()
    assert (float(x.grad), float(y.grad)) == (4.0, 2.0)
    x, y = leaf(2.0), leaf(3.0)
    (x * y + x).backward(accumulate="assign", order="kahn")
    assert (float(x.grad), float(y.grad)) == (3.0, 2.0)


@bounded(40)
@given(programs(tensors=True, max_ops=8))
def test_grads_have_their_nodes_shapes_and_are_float64(prog: Program) -> None:
    _, out, made = build_engine(prog)
    backward(out)
    for v in made:
        if v.grad is not None:
            assert v.grad.shape == v.data.shape and v.grad.dtype == np.float64
    assert any(isinstance(e, Instr) for e in prog.entries)
