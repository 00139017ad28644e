"""Deterministic topological orders of the nodes a root depends on, without recursion.

Both sorts visit inputs in argument order and never look at id(), so the same program always
gives the same order. `dfs_events` and `kahn_steps` are the same two sorts as they run, step by
step, for a lesson to show the order being built.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # nodes are read duck-typed (.inputs, .seq): nothing imported at run time
    from engine.autograd.value import Value


def dfs_order(root: Value) -> list[Value]:
    """Post-order depth-first search: every node after all of its inputs.

    A stack of iterators over the inputs still to visit (and a parallel stack of their nodes)
    replaces the recursion, so a chain of a million nodes sorts without RecursionError. A node
    without inputs (a leaf, a constant) is placed as soon as it is met, without a frame. The
    set of nodes seen is a set of the nodes themselves: membership only, never an order.
    """
    order: list[Value] = []
    place = order.append
    seen = {root}
    see = seen.add
    nodes = [root]
    frames = [iter(root.inputs)]
    todo = frames[0]
    while True:
        for child in todo:
            if child not in seen:
                see(child)
                inputs = child.inputs
                if inputs:
                    nodes.append(child)
                    todo = iter(inputs)
                    frames.append(todo)
                    break
                place(child)
        else:
            frames.pop()
            place(nodes.pop())
            if not frames:
                return order
            todo = frames[-1]


def dfs_events(root: Value) -> Iterator[tuple[str, Value, int]]:
    """The post-order DFS as it runs, for a lesson to show: ("enter", node, depth) when a node
    is first met, ("emit", node, depth) when it is placed, after all of its inputs. The emitted
    nodes are `dfs_order(root)`, in order (tests/test_backward.py holds the two equal);
    dfs_order is written apart because it is backward()'s hot path."""
    seen = {root}
    stack = [(root, iter(root.inputs))]
    yield "enter", root, 0
    while stack:
        node, todo = stack[-1]
        for child in todo:
            if child not in seen:
                seen.add(child)
                stack.append((child, iter(child.inputs)))
                yield "enter", child, len(stack) - 1
                break
        else:
            stack.pop()
            yield "emit", node, len(stack)


def reachable(root: Value) -> list[Value]:
    """Every node the root depends on, itself included (in no particular order)."""
    found = {root.seq: root}
    todo = [root]
    while todo:
        for child in todo.pop().inputs:
            if child.seq not in found:
                found[child.seq] = child
                todo.append(child)
    return list(found.values())


def consumer_counts(nodes: list[Value]) -> dict[int, int]:
    """seq → how many times the nodes use it as an input (`x*x` uses x twice)."""
    waiting = {node.seq: 0 for node in nodes}
    for node in nodes:
        for child in node.inputs:
            waiting[child.seq] += 1
    return waiting


def kahn_steps(
    root: Value,
) -> Iterator[tuple[Value, list[tuple[Value, int]], list[tuple[int, Value]]]]:
    """Kahn's algorithm run from the root, as PyTorch's engine schedules backward, one step per
    node taken off the ready queue: (node, each input with its count after this node lowered
    it, the ready queue after the step as (−seq, node) heap entries).

    Each node waits until every node that uses it has run (its dependency count reaches 0);
    among ready nodes the most recently created runs first.
    """
    waiting = consumer_counts(reachable(root))
    ready = [(-root.seq, root)]
    while ready:
        _, node = heapq.heappop(ready)
        lowered = []
        for child in node.inputs:
            waiting[child.seq] -= 1
            lowered.append((child, waiting[child.seq]))
            if waiting[child.seq] == 0:
                heapq.heappush(ready, (-child.seq, child))
        yield node, lowered, ready


def kahn_order(root: Value) -> list[Value]:
    """Kahn's order (`kahn_steps`) returned inputs-first (reversed), so it reads as a
    topological order like `dfs_order`."""
    backward = [node for node, _, _ in kahn_steps(root)]
    backward.reverse()
    return backward


ORDERS = {"dfs": dfs_order, "kahn": kahn_order}


def topological_order(root: Value, order: str = "dfs") -> list[Value]:
    """The nodes `root` depends on, each after its inputs, in the `order` named ("dfs", "kahn")."""
    try:
        return ORDERS[order](root)
    except KeyError:
        raise ValueError(f"order must be one of {sorted(ORDERS)}, not {order!r}") from None
