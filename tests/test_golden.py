"""Golden numbers from the lessons' worked examples, computed by hand here and checked against
PyTorch (float64) in the test itself. Where a note and PyTorch disagree, PyTorch decides
(seeds/ERRATA.md).

Each example runs through the Python API (engine.autograd.value.leaf + operators,
engine.tracing.record.trace) and through the language (engine.run), the latter skipped while the
front end does not exist.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

import engine.autograd.ops as O
from engine.autograd.value import leaf
from engine.tracing.record import trace
from tests.strategies import assert_close, get_run

torch = pytest.importorskip("torch")


def t64(x: Any) -> Any:
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


def as_dict(t: Any) -> dict[str, Any]:
    return json.loads(json.dumps(t.to_dict(), allow_nan=False))


def step_table(d: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-step grad table: row k holds every grad after step k (running merge)."""
    rows, current = [], {n["id"]: 0.0 for n in d["nodes"] if n["grad"] is not None}
    for s in d["steps"]:
        current = {**current, **s["grads"]}
        rows.append(current)
    return rows


def deltas(d: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(s["node"], s["grads"]) for s in d["steps"]]


# --- L = x*y + x at x = 2, y = 3 ----------------------------------------------------------------
# Forward: u = x*y = 6, L = u + x = 8. Backward: L̄ = 1; the add passes 1 to u and to x;
# the mul gives x̄ += ū·y = 3 (x̄: 1 → 4) and ȳ += ū·x = 2. With "=" instead of "+=",
# the mul's 3 overwrites the add's 1: x̄ = 3.

LESSON_STEPS = [
    ("n3", {"n3": 1.0}),
    ("n3", {"n2": 1.0, "n0": 1.0}),
    ("n2", {"n0": 4.0, "n1": 2.0}),
]
LESSON_TABLE = [  # columns x, y, u, L
    {"n0": 0.0, "n1": 0.0, "n2": 0.0, "n3": 1.0},
    {"n0": 1.0, "n1": 0.0, "n2": 1.0, "n3": 1.0},
    {"n0": 4.0, "n1": 2.0, "n2": 1.0, "n3": 1.0},
]
LESSON_STEPS_ASSIGN = [
    ("n3", {"n3": 1.0}),
    ("n3", {"n2": 1.0, "n0": 1.0}),
    ("n2", {"n0": 3.0, "n1": 2.0}),
]


def test_torch_agrees_with_the_lesson() -> None:
    x, y = t64(2.0), t64(3.0)
    L = x * y + x
    L.backward()
    assert (L.item(), x.grad.item(), y.grad.item()) == (8.0, 4.0, 2.0)


def lesson_python(accumulate: str = "add", order: str = "dfs") -> dict[str, Any]:
    x, y = leaf(2.0, "x"), leaf(3.0, "y")
    return as_dict(trace(x * y + x, accumulate=accumulate, order=order))


@pytest.mark.parametrize("order", ["dfs", "kahn"])
def test_lesson_per_step_table(order: str) -> None:
    d = lesson_python(order=order)
    assert d["value"] == 8.0
    assert d["topo"] == ["n0", "n1", "n2", "n3"]
    assert deltas(d) == LESSON_STEPS
    assert step_table(d) == LESSON_TABLE
    assert d["grads"] == {"x": 4.0, "y": 2.0}
    mul = d["steps"][2]["terms"]
    assert [(t["input"], t["local"], t["contribution"], t["before"], t["after"]) for t in mul] == [
        ("n0", 3.0, 3.0, 1.0, 4.0),
        ("n1", 2.0, 2.0, 0.0, 2.0),
    ]
    add = d["steps"][1]["terms"]
    assert [(t["input"], t["local"], t["before"], t["after"]) for t in add] == [
        ("n2", 1.0, 0.0, 1.0),
        ("n0", 1.0, 0.0, 1.0),
    ]


def test_lesson_with_assign_instead_of_add() -> None:
    d = lesson_python("assign")
    assert deltas(d) == LESSON_STEPS_ASSIGN
    assert d["grads"] == {"x": 3.0, "y": 2.0}
    mul = d["steps"][2]["terms"]
    assert (mul[0]["before"], mul[0]["contribution"], mul[0]["after"]) == (1.0, 3.0, 3.0)


def test_assign_bug_on_x_times_x() -> None:
    """Even the two edges of x*x overwrite each other: 2x = 6 with "+=", 3 with "="."""
    for accumulate, expected in (("add", 6.0), ("assign", 3.0)):
        x = leaf(3.0, "x")
        assert as_dict(trace(x * x, accumulate=accumulate))["grads"] == {"x": expected}
    tx = t64(3.0)
    (tx * tx).backward()
    assert tx.grad.item() == 6.0


# --- the max example: L = (x·y)·max(x·y, z) at x = 2, y = 3, z = 4 (ERRATA 1) --------------------
# a = x·y = 6 wins max(6, 4), so b = max(a, z) = a and L = a·b: ∂L/∂a = b + a = 12,
# ∂L/∂x = 12·y = 36, ∂L/∂y = 12·x = 24, ∂L/∂z = 0. The note's 21 and 14 are wrong.

MAX_GRADS = {"x": 36.0, "y": 24.0, "z": 0.0}


def test_torch_agrees_with_the_max_example() -> None:
    x, y, z = t64(2.0), t64(3.0), t64(4.0)
    L = (x * y) * torch.maximum(x * y, z)
    L.backward()
    got = {"x": x.grad.item(), "y": y.grad.item(), "z": z.grad.item()}
    assert got == MAX_GRADS
    assert L.item() == 36.0


@pytest.mark.parametrize("shared", [False, True])
def test_max_example(shared: bool) -> None:
    x, y, z = leaf(2.0, "x"), leaf(3.0, "y"), leaf(4.0, "z")
    if shared:
        a = x * y
        L = a * O.maximum(a, z)
    else:
        L = (x * y) * O.maximum(x * y, z)
    d = as_dict(trace(L))
    assert d["value"] == 36.0
    assert d["grads"] == MAX_GRADS
    assert d["grads"] != {"x": 21.0, "y": 14.0, "z": 0.0}  # the note's numbers
    assert d["grads"] != {"x": 18.0, "y": 12.0, "z": 0.0}  # its implementation, one path dropped


def test_max_example_with_a_tie_splits_the_gradient() -> None:
    """At z = 6 = x·y, max ties: each side gets half of ū. PyTorch agrees."""
    x, y, z = leaf(2.0, "x"), leaf(3.0, "y"), leaf(6.0, "z")
    a = x * y
    d = as_dict(trace(a * O.maximum(a, z)))
    tx, ty, tz = t64(2.0), t64(3.0), t64(6.0)
    ta = tx * ty
    (ta * torch.maximum(ta, tz)).backward()
    # ∂L/∂a = b + a·½ = 6 + 3 = 9: x̄ = 27, ȳ = 18; z̄ = a·½ = 3.
    assert d["grads"] == {"x": 27.0, "y": 18.0, "z": 3.0}
    assert d["grads"] == {"x": tx.grad.item(), "y": ty.grad.item(), "z": tz.grad.item()}


# --- softmax + cross-entropy, z = [2, 1, 0], t = 0 ------------------------------------------------
# p = e^z / Σe^z = [e², e, 1] / (e² + e + 1) ≈ [0.665, 0.245, 0.090]; L = −log p₀ ≈ 0.408;
# dz = p − onehot(0) ≈ [−0.335, 0.245, 0.090].

E = math.e
DENOM = E * E + E + 1.0
P = np.array([E * E / DENOM, E / DENOM, 1.0 / DENOM])
CE_LOSS = -math.log(P[0])
DZ = P - np.array([1.0, 0.0, 0.0])


def test_softmax_numbers() -> None:
    np.testing.assert_allclose(P, [0.665, 0.245, 0.090], atol=5e-4)
    assert abs(CE_LOSS - 0.4076) < 1e-4
    z = t64([2.0, 1.0, 0.0])
    loss = torch.nn.functional.cross_entropy(z, torch.tensor(0))
    loss.backward()
    assert_close(loss.item(), CE_LOSS)
    assert_close(z.grad.numpy(), DZ)
    assert_close(torch.softmax(z, -1).detach().numpy(), P)


@pytest.mark.parametrize("form", ["fused", "log_softmax", "log_of_softmax"])
def test_softmax_cross_entropy_example(form: str) -> None:
    z = leaf([2.0, 1.0, 0.0], "z")
    if form == "fused":
        L = O.cross_entropy(z, 0)
    elif form == "log_softmax":
        L = -O.log_softmax(z)[0]
    else:
        L = -O.log(O.softmax(z)[0])
    d = as_dict(trace(L))
    assert_close(d["value"], CE_LOSS)
    assert_close(d["grads"]["z"], DZ)
    assert_close(O.softmax(leaf([2.0, 1.0, 0.0])).data, P)


def test_cross_entropy_batch_picks_one_label_per_row() -> None:
    """ERRATA 3: with N rows, the loss picks s[i, y_i] — not the N×N block s[:, y]."""
    Z = np.array([[2.0, 1.0, 0.0], [0.5, -1.0, 3.0]])
    labels = [0, 2]
    z = leaf(Z, "z")
    d = as_dict(trace(O.cross_entropy(z, labels)))
    tz = t64(Z)
    loss = torch.nn.functional.cross_entropy(tz, torch.tensor(labels))
    loss.backward()
    assert_close(d["value"], loss.item())
    assert_close(d["grads"]["z"], tz.grad.numpy())
    s = np.exp(Z) / np.exp(Z).sum(1, keepdims=True)
    right = -np.log(s[np.arange(2), labels]).mean()
    wrong = -np.log(s[..., labels]).mean()
    assert_close(d["value"], right)
    assert abs(d["value"] - wrong) > 0.1


# --- a shared node: z = (x·y + x)·(x − y) at x = 2, y = 3 -----------------------------------------
# l = x·y + x = 8, r = x − y = −1, z = −8. x reaches z along three paths:
# ∂z/∂x = (y + 1)·r + l·1 = −4 + 8 = 4;  ∂z/∂y = x·r + l·(−1) = −2 − 8 = −10.
# Nodes: n0 x, n1 y, n2 x·y, n3 l, n4 r, n5 z; backward runs n5, n4, n3, n2:
#   n5 (mul): l̄ = r = −1, r̄ = l = 8
#   n4 (sub): x̄ = 8, ȳ = −8
#   n3 (add): (x·y)‾ = −1, x̄ = 8 − 1 = 7
#   n2 (mul): x̄ = 7 + (−1)·3 = 4, ȳ = −8 + (−1)·2 = −10
# With "=": x̄ ends as the last contribution, −3, and ȳ as −2.

SHARED_STEPS = [
    ("n5", {"n5": 1.0}),
    ("n5", {"n3": -1.0, "n4": 8.0}),
    ("n4", {"n0": 8.0, "n1": -8.0}),
    ("n3", {"n2": -1.0, "n0": 7.0}),
    ("n2", {"n0": 4.0, "n1": -10.0}),
]
SHARED_STEPS_ASSIGN = [
    ("n5", {"n5": 1.0}),
    ("n5", {"n3": -1.0, "n4": 8.0}),
    ("n4", {"n0": 8.0, "n1": -8.0}),
    ("n3", {"n2": -1.0, "n0": -1.0}),
    ("n2", {"n0": -3.0, "n1": -2.0}),
]


def test_torch_agrees_with_the_shared_node_example() -> None:
    x, y = t64(2.0), t64(3.0)
    z = (x * y + x) * (x - y)
    z.backward()
    assert (z.item(), x.grad.item(), y.grad.item()) == (-8.0, 4.0, -10.0)


@pytest.mark.parametrize("order", ["dfs", "kahn"])
def test_shared_node_example(order: str) -> None:
    x, y = leaf(2.0, "x"), leaf(3.0, "y")
    d = as_dict(trace((x * y + x) * (x - y), order=order))
    assert d["value"] == -8.0
    assert d["grads"] == {"x": 4.0, "y": -10.0}
    assert deltas(d) == SHARED_STEPS
    x, y = leaf(2.0, "x"), leaf(3.0, "y")
    d = as_dict(trace((x * y + x) * (x - y), accumulate="assign", order=order))
    assert deltas(d) == SHARED_STEPS_ASSIGN
    assert d["grads"] == {"x": -3.0, "y": -2.0}


# --- the same examples through the language (engine.run) ---------------------------------------


def run_dict(source: str, values: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    run = get_run()
    return as_dict(run(source, values=values, **kw))


def test_api_md_example_exactly() -> None:
    """The response documented in api.md, field for field."""
    d = run_dict("x*y + x", {"x": 2, "y": 3})
    assert d["output"] == "n3"
    assert d["value"] == 8.0
    expected_nodes = [
        {"id": "n0", "name": "x", "label": "x", "kind": "leaf", "op": None, "inputs": [],
         "shape": [], "value": 2.0, "grad": 4.0},
        {"id": "n1", "name": "y", "label": "y", "kind": "leaf", "op": None, "inputs": [],
         "shape": [], "value": 3.0, "grad": 2.0},
        {"id": "n2", "name": None, "label": "x*y", "kind": "op", "op": "mul",
         "inputs": ["n0", "n1"], "shape": [], "value": 6.0, "grad": 1.0},
        {"id": "n3", "name": "out", "label": "out", "kind": "op", "op": "add",
         "inputs": ["n2", "n0"], "shape": [], "value": 8.0, "grad": 1.0},
    ]  # fmt: skip
    assert [{k: n[k] for k in expected_nodes[0]} for n in d["nodes"]] == expected_nodes
    assert d["topo"] == ["n0", "n1", "n2", "n3"]
    assert deltas(d) == LESSON_STEPS
    assert d["grads"] == {"x": 4.0, "y": 2.0}


def test_trace_format_md_example_exactly() -> None:
    """The extra fields documented in docs/trace-format.md for the same program."""
    d = run_dict("x*y + x", {"x": 2, "y": 3})
    assert d["version"] == 1
    assert d["shape"] == []
    assert d["seeded_with_ones"] is False
    assert d["options"] == {"accumulate": "add", "order": "dfs"}
    assert d["free"] == [
        {"name": "x", "value": 2.0, "given": True},
        {"name": "y", "value": 3.0, "given": True},
    ]
    n0, n2 = d["nodes"][0], d["nodes"][2]
    assert n0["span"] == {"line": 1, "column": 1, "end_line": 1, "end_column": 2}
    assert n0["text"] == "x"
    assert n2["symbol"] == "*"
    assert n2["span"] == {"line": 1, "column": 1, "end_line": 1, "end_column": 4}
    assert n2["text"] == "x*y"
    s0, s1, s2 = d["steps"]
    assert s0 == {"node": "n3", "kind": "seed", "grads": {"n3": 1.0}, "terms": []}
    assert {k: s1[k] for k in ("node", "kind", "op", "upstream", "grads")} == {
        "node": "n3", "kind": "backward", "op": "add", "upstream": 1.0,
        "grads": {"n2": 1.0, "n0": 1.0},
    }  # fmt: skip
    assert s1["terms"] == [
        {"input": "n2", "arg": 0, "rule": "ū", "local": 1.0, "contribution": 1.0,
         "before": 0.0, "after": 1.0},
        {"input": "n0", "arg": 1, "rule": "ū", "local": 1.0, "contribution": 1.0,
         "before": 0.0, "after": 1.0},
    ]  # fmt: skip
    assert {k: s2[k] for k in ("node", "kind", "op", "upstream", "grads")} == {
        "node": "n2", "kind": "backward", "op": "mul", "upstream": 1.0,
        "grads": {"n0": 4.0, "n1": 2.0},
    }  # fmt: skip
    assert s2["terms"] == [
        {"input": "n0", "arg": 0, "rule": "ū·y", "local": 3.0, "contribution": 3.0,
         "before": 1.0, "after": 4.0},
        {"input": "n1", "arg": 1, "rule": "ū·x", "local": 2.0, "contribution": 2.0,
         "before": 0.0, "after": 2.0},
    ]  # fmt: skip


def test_language_md_program() -> None:
    source = "x = 2          # a leaf\ny = 3\nu = x * y      # an intermediate\nL = u + x\n"
    d = run_dict(source)
    assert [n["label"] for n in d["nodes"]] == ["x", "y", "u", "L"]
    assert [n["kind"] for n in d["nodes"]] == ["leaf", "leaf", "op", "op"]
    assert deltas(d) == LESSON_STEPS
    assert step_table(d) == LESSON_TABLE
    assert d["grads"] == {"x": 4.0, "y": 2.0}
    d = run_dict(source, accumulate="assign")
    assert deltas(d) == LESSON_STEPS_ASSIGN
    assert d["grads"] == {"x": 3.0, "y": 2.0}


def test_lesson_runs_as_typed_with_default_values() -> None:
    """Free names with no value given default to 1.0: x*y + x gives x̄ = y + 1 = 2, ȳ = x = 1."""
    d = run_dict("x*y + x")
    assert d["value"] == 2.0
    assert d["grads"] == {"x": 2.0, "y": 1.0}
    assert [f["given"] for f in d["free"]] == [False, False]


@pytest.mark.parametrize(
    "source",
    ["L = (x*y) * max(x*y, z)", "a = x*y\nL = a * max(a, z)", "(x*y) * max(x*y, z)"],
)
def test_max_example_source(source: str) -> None:
    d = run_dict(source, {"x": 2, "y": 3, "z": 4})
    assert d["value"] == 36.0
    assert d["grads"] == MAX_GRADS


@pytest.mark.parametrize(
    "source",
    [
        "z = [2, 1, 0]\nL = cross_entropy(z, 0)",
        "z = [2.0, 1.0, 0.0]\nt = 0\nL = cross_entropy(z, t)",
        "z = [2, 1, 0]\nL = -log_softmax(z)[0]",
        "z = [2, 1, 0]\np = softmax(z)\nL = -log(p[0])",
    ],
)
def test_softmax_cross_entropy_source(source: str) -> None:
    d = run_dict(source)
    assert_close(d["value"], CE_LOSS)
    assert list(d["grads"]) == ["z"]
    assert_close(d["grads"]["z"], DZ)


@pytest.mark.parametrize("order", ["dfs", "kahn"])
def test_shared_node_example_source(order: str) -> None:
    d = run_dict("(x*y + x)*(x - y)", {"x": 2, "y": 3}, order=order)
    assert d["value"] == -8.0
    assert d["grads"] == {"x": 4.0, "y": -10.0}
    assert deltas(d) == SHARED_STEPS
    d = run_dict("(x*y + x)*(x - y)", {"x": 2, "y": 3}, accumulate="assign", order=order)
    assert deltas(d) == SHARED_STEPS_ASSIGN
    assert d["grads"] == {"x": -3.0, "y": -2.0}
