"""Invariants of the backward trace (docs/trace-format.md, api.md), as property tests over random
programs built through the Python API (engine.tracing.record.trace) and, when the language front end
exists, through `engine.run`:

- every node comes after all of its inputs in `topo`;
- `steps[0]` seeds the output; the later steps' nodes are the op nodes of `topo` in reverse
  order (leaves and constants get no step);
- the running merge of the steps' deltas (`grads` per step) equals every node's final grad;
  each term's `after` is `before + contribution` (`contribution` with accumulate="assign");
- `dfs` and `kahn` orders give the same grads;
- the same program built twice gives the identical `to_dict()`;
- accumulate="assign" gives exactly the grads of "add" when no node fans out, and differs
  when one does (on programs whose every local derivative is positive, so no contribution is
  ever zero and a dropped one always shows).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from engine.autograd.graph import reachable
from engine.autograd.value import Value
from engine.tracing.record import trace
from tests.strategies import Program, bounded, build_engine, get_run, programs, to_source

# --- building traces -----------------------------------------------------------------------------


def all_nodes(made: list[Value]) -> list[Value]:
    """Every node of a Python-API program in creation order: what it made and what it lifted."""
    everything = {n.seq: n for v in made for n in reachable(v)}
    return [everything[k] for k in sorted(everything)]


def trace_dict(prog: Program, accumulate: str = "add", order: str = "dfs") -> dict[str, Any]:
    _, out, made = build_engine(prog)
    t = trace(out, nodes=all_nodes(made), accumulate=accumulate, order=order)
    return json.loads(json.dumps(t.to_dict(), allow_nan=False))


def run_dict(prog: Program, accumulate: str = "add", order: str = "dfs") -> dict[str, Any]:
    run = get_run()
    source, values = to_source(prog)
    return json.loads(
        json.dumps(
            run(source, values=values, accumulate=accumulate, order=order).to_dict(),
            allow_nan=False,
        )
    )


# --- the invariants ----------------------------------------------------------------------------


def fanout_nodes(d: dict[str, Any]) -> list[str]:
    """Nodes that receive gradient along two or more edges (x*x counts twice)."""
    nodes = {n["id"]: n for n in d["nodes"]}
    count: dict[str, int] = {}
    for nid in d["topo"]:
        n = nodes[nid]
        if n["kind"] != "op" or n["grad"] is None:
            continue
        for x in n["inputs"]:
            if nodes[x]["grad"] is not None:
                count[x] = count.get(x, 0) + 1
    return [x for x, c in count.items() if c > 1]


def check_topo(d: dict[str, Any]) -> None:
    nodes = {n["id"]: n for n in d["nodes"]}
    position = {nid: i for i, nid in enumerate(d["topo"])}
    assert len(position) == len(d["topo"]), "a node appears twice in topo"
    assert d["topo"][-1] == d["output"]
    for nid in d["topo"]:
        for x in nodes[nid]["inputs"]:
            assert x in position, f"{x}, an input of {nid}, is missing from topo"
            assert position[x] < position[nid], f"{x} comes after {nid}, which uses it"
    # topo is exactly what the output depends on.
    seen, todo = {d["output"]}, [d["output"]]
    while todo:
        for x in nodes[todo.pop()]["inputs"]:
            if x not in seen:
                seen.add(x)
                todo.append(x)
    assert seen == set(d["topo"])


def check_steps(d: dict[str, Any]) -> None:
    nodes = {n["id"]: n for n in d["nodes"]}
    steps = d["steps"]
    assert steps[0]["node"] == d["output"]
    assert steps[0]["kind"] == "seed"
    ones = np.ones(d["shape"]) if d["shape"] else 1.0
    assert list(steps[0]["grads"]) == [d["output"]]
    assert np.array_equal(steps[0]["grads"][d["output"]], ones)
    expected = [
        nid
        for nid in reversed(d["topo"])
        if nodes[nid]["kind"] == "op" and nodes[nid]["grad"] is not None
    ]
    assert [s["node"] for s in steps[1:]] == expected
    assert all(s["kind"] == "backward" for s in steps[1:])
    if len(steps) > 1:
        assert steps[1]["node"] == d["output"]  # the output appears in steps[0] and steps[1]


def check_merge(d: dict[str, Any], accumulate: str) -> None:
    """The per-step grad table: merging the deltas row by row ends at the final grads."""
    nodes = {n["id"]: n for n in d["nodes"]}
    table: dict[str, Any] = {}
    for s in d["steps"]:
        # Each term: x̄ after = before + contribution ("add") or = contribution ("assign").
        last_after: dict[str, Any] = {}
        for t in s["terms"]:
            assert t["input"] == nodes[s["node"]]["inputs"][t["arg"]]
            if accumulate == "add":
                assert np.array_equal(np.add(t["before"], t["contribution"]), t["after"])
            else:
                assert np.array_equal(t["contribution"], t["after"])
            # `before` is the grad so far: from an earlier edge of this step, an earlier step,
            # or 0 before the first contribution.
            prior = last_after.get(t["input"], table.get(t["input"]))
            if prior is None:
                assert not np.any(t["before"]), "the first contribution does not start from 0"
            else:
                assert np.array_equal(t["before"], prior), "before is not the grad so far"
            last_after[t["input"]] = t["after"]
        if s["kind"] == "backward":
            assert s["grads"].keys() == last_after.keys()
            for k, v in last_after.items():
                assert np.array_equal(s["grads"][k], v)
        table.update(s["grads"])
    for nid, n in nodes.items():
        if nid in table:
            assert np.array_equal(table[nid], n["grad"]), (
                f"{nid}: merged {table[nid]} != {n['grad']}"
            )
        elif n["grad"] is not None:
            # Never touched by backward: an unused leaf, or a node the output does not reach.
            assert nid not in d["topo"] or n["kind"] == "const", nid
            assert not np.any(n["grad"]), f"{nid} has grad {n['grad']} but no step gave it one"
    for n in d["nodes"]:
        if n["kind"] == "leaf":
            assert np.array_equal(d["grads"][n["label"]], n["grad"])
        if n["kind"] == "const":
            assert n["grad"] is None


def check_ids(d: dict[str, Any]) -> None:
    assert [n["id"] for n in d["nodes"]] == [f"n{i}" for i in range(len(d["nodes"]))]
    labels = [n["label"] for n in d["nodes"]]
    assert all(labels)
    named = [n["label"] for n in d["nodes"] if n["kind"] == "leaf"]
    assert len(set(named)) == len(named), "two leaves share a label"
    assert set(d["grads"]) == set(named)


def check_all(d: dict[str, Any], accumulate: str = "add") -> None:
    check_ids(d)
    check_topo(d)
    check_steps(d)
    check_merge(d, accumulate)


def grads_equal(a: dict[str, Any], b: dict[str, Any], rtol: float = 0.0) -> bool:
    if a.keys() != b.keys():
        return False
    return all(np.allclose(a[k], b[k], rtol=rtol, atol=0.0) for k in a)


# --- properties over Python-API programs -------------------------------------------------------

ANY_PROGRAM = st.one_of(programs(tensors=False, max_ops=10), programs(tensors=True, max_ops=8))


@bounded(120)
@given(ANY_PROGRAM, st.sampled_from(["dfs", "kahn"]), st.sampled_from(["add", "assign"]))
def test_trace_invariants(prog: Program, order: str, accumulate: str) -> None:
    check_all(trace_dict(prog, accumulate, order), accumulate)


@bounded(80)
@given(ANY_PROGRAM)
def test_dfs_and_kahn_give_the_same_grads(prog: Program) -> None:
    dfs, kahn = trace_dict(prog, order="dfs"), trace_dict(prog, order="kahn")
    assert sorted(dfs["topo"]) == sorted(kahn["topo"])
    # The sums may be added in another order: equal up to rounding.
    for name in dfs["grads"]:
        np.testing.assert_allclose(kahn["grads"][name], dfs["grads"][name], rtol=1e-12, atol=1e-14)
    for a, b in zip(dfs["nodes"], kahn["nodes"], strict=True):
        assert (a["grad"] is None) == (b["grad"] is None)
        if a["grad"] is not None:
            np.testing.assert_allclose(b["grad"], a["grad"], rtol=1e-12, atol=1e-14)
    assert dfs["value"] == kahn["value"]


@bounded(60)
@given(ANY_PROGRAM, st.sampled_from(["dfs", "kahn"]), st.sampled_from(["add", "assign"]))
def test_the_same_program_gives_the_identical_trace(
    prog: Program, order: str, accumulate: str
) -> None:
    first = json.dumps(trace_dict(prog, accumulate, order), sort_keys=True)
    second = json.dumps(trace_dict(prog, accumulate, order), sort_keys=True)
    assert first == second


@bounded(100)
@given(ANY_PROGRAM)
def test_assign_equals_add_without_fanout(prog: Program) -> None:
    add, assign = trace_dict(prog, "add"), trace_dict(prog, "assign")
    if not fanout_nodes(add):
        assert grads_equal(add["grads"], assign["grads"])
        for a, b in zip(add["nodes"], assign["nodes"], strict=True):
            assert (a["grad"] is None) == (b["grad"] is None)
            if a["grad"] is not None:
                assert np.array_equal(a["grad"], b["grad"])


# Every local derivative positive: positive leaves and constants, and ops that keep them so.
POSITIVE_KINDS = ("add", "mul", "mul", "tanh", "sigmoid", "exp")
POSITIVE_TENSOR_KINDS = POSITIVE_KINDS + ("sum", "mean", "matmul")


@bounded(150)
@given(
    st.one_of(
        programs(tensors=False, max_ops=8, kinds=POSITIVE_KINDS, leaf_range=(0.2, 1.0), fold=False),
        programs(
            tensors=True, max_ops=6, kinds=POSITIVE_TENSOR_KINDS, leaf_range=(0.2, 1.0), fold=False
        ),
    ),
    st.sampled_from(["dfs", "kahn"]),
)
def test_assign_differs_from_add_exactly_when_a_node_fans_out(prog: Program, order: str) -> None:
    add, assign = trace_dict(prog, "add", order), trace_dict(prog, "assign", order)
    fanout = fanout_nodes(add)
    assert bool(fanout) == prog.has_fanout()
    assert grads_equal(add["grads"], assign["grads"]) == (not fanout), (
        f"fan-out at {fanout}: add {add['grads']} assign {assign['grads']}\n{prog.describe()}"
    )
    if fanout:
        # The node that fans out keeps only its last contribution: strictly less than the sum.
        nodes_add = {n["id"]: n for n in add["nodes"]}
        nodes_assign = {n["id"]: n for n in assign["nodes"]}
        for nid in fanout:
            assert np.all(
                np.asarray(nodes_assign[nid]["grad"]) <= np.asarray(nodes_add[nid]["grad"])
            )
            assert np.any(
                np.asarray(nodes_assign[nid]["grad"]) < np.asarray(nodes_add[nid]["grad"])
            )


def test_fanout_detection_on_known_graphs() -> None:
    from engine.autograd.value import leaf

    x = leaf(2.0, "x")
    d = json.loads(json.dumps(trace(x * x).to_dict()))
    assert fanout_nodes(d) == ["n0"]
    y = leaf(3.0, "y")
    d = json.loads(json.dumps(trace((x + 1.0) * y).to_dict()))
    assert fanout_nodes(d) == []


# --- the same properties through the language front end -------------------------------------------


@bounded(60)
@given(ANY_PROGRAM, st.sampled_from(["dfs", "kahn"]), st.sampled_from(["add", "assign"]))
def test_source_trace_invariants(prog: Program, order: str, accumulate: str) -> None:
    d = run_dict(prog, accumulate, order)
    check_all(d, accumulate)
    assert d["options"] == {"accumulate": accumulate, "order": order}


@bounded(40)
@given(ANY_PROGRAM, st.sampled_from(["dfs", "kahn"]))
def test_source_program_gives_the_identical_trace_twice(prog: Program, order: str) -> None:
    first = json.dumps(run_dict(prog, order=order), sort_keys=True)
    second = json.dumps(run_dict(prog, order=order), sort_keys=True)
    assert first == second


@bounded(40)
@given(ANY_PROGRAM)
def test_source_dfs_and_kahn_give_the_same_grads(prog: Program) -> None:
    dfs, kahn = run_dict(prog, order="dfs"), run_dict(prog, order="kahn")
    for name in dfs["grads"]:
        np.testing.assert_allclose(kahn["grads"][name], dfs["grads"][name], rtol=1e-12, atol=1e-14)


@bounded(60)
@given(
    programs(tensors=False, max_ops=8, kinds=POSITIVE_KINDS, leaf_range=(0.2, 1.0), fold=False),
)
def test_source_assign_differs_from_add_exactly_when_a_node_fans_out(prog: Program) -> None:
    add, assign = run_dict(prog, "add"), run_dict(prog, "assign")
    assert grads_equal(add["grads"], assign["grads"]) == (not fanout_nodes(add))
