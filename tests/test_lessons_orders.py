"""Lesson 2, why topological order: DFS, Kahn and the naive recursion, with call counts."""

from __future__ import annotations

import pytest
import torch
from fastapi.testclient import TestClient

from app.main import app
from engine import kahn_order, lessons
from engine.lessons.orders import NAIVE_CALL_LIMIT
from engine.program import run_program

client = TestClient(app)


def diamonds(depth: int) -> str:
    return f"x = 0.5\nh = x\nfor i in range({depth}):\n    h = sin(h) + cos(h)\nL = h"


@pytest.mark.parametrize("depth", [1, 2, 3, 5, 8, 10])
def test_naive_calls_double_with_every_diamond(depth):
    data = lessons.orders(run_program(diamonds(depth)))
    assert data["counts"]["dfs"] == data["counts"]["kahn"] == 3 * depth
    # Diamond k from the top is entered 2**k times, each time running its add, sin and cos.
    assert data["counts"]["naive"] == 3 * (2**depth - 1)
    assert not data["naive"]["stopped"]
    assert len(data["naive"]["calls"]) == data["counts"]["naive"]


def test_the_naive_recursion_gets_the_right_grads_the_long_way():
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    h = x
    for _ in range(5):
        h = torch.sin(h) + torch.cos(h)
    h.backward()
    data = lessons.orders(run_program(diamonds(5)))
    assert data["naive"]["grads"]["n0"] == pytest.approx(x.grad.item(), rel=1e-12)


def test_the_naive_recursion_stops_at_its_stated_limit():
    r = client.post("/api/trace", json={"source": diamonds(12), "lessons": ["orders"]})
    assert r.status_code == 200
    data = r.json()["lessons"]["orders"]["naive"]
    assert data["stopped"] and data["limit"] == NAIVE_CALL_LIMIT
    assert len(data["calls"]) == NAIVE_CALL_LIMIT
    assert data["total"] == 3 * (2**12 - 1) and data["total_text"] == "12,285"
    assert data["grads"] is None  # not finished: no grads to show


def test_astronomical_counts_are_exact_text():
    data = lessons.orders(run_program(diamonds(60)))
    assert data["naive"]["total_text"] == f"{3 * (2**60 - 1):,}"
    assert isinstance(data["counts"]["naive"], str)


def test_kahn_pops_in_the_engines_order_and_counts_reach_zero():
    source = "(x*y + x)*(x - y)"
    data = lessons.orders(run_program(source, {"x": 2, "y": 3}))
    prog = run_program(source, {"x": 2, "y": 3})
    expected = [prog.id(n) for n in reversed(kahn_order(prog.output))]
    assert [e["node"] for e in data["kahn"]["events"]] == expected
    counts = dict(data["kahn"]["counts"])
    for e in data["kahn"]["events"]:
        assert counts[e["node"]] == 0  # popped only once nothing waits on it
        counts.update(e["lowered"])
    assert data["kahn"]["counts"]["n0"] == 3  # x feeds x*y, + x and x - y


def test_dfs_emits_the_topological_order():
    data = lessons.orders(run_program("x*y + x", {"x": 2, "y": 3}))
    emitted = [e["node"] for e in data["dfs"]["events"] if e["do"] == "emit"]
    assert emitted == data["dfs"]["topo"] == ["n0", "n1", "n2", "n3"]
    assert data["naive"]["per_node"] == {"n2": 1, "n3": 1}  # a tree: no repeated work
