"""Deterministic topological orders of the nodes a root depends on, without recursion.

Both sorts visit inputs in argument order and never look at id(), so the same program always
gives the same order.
"""

from __future__ import annotations

import heapq

from engine.value import Value


def dfs_order(root: Value) -> list[Value]:
    """Post-order depth-first search: every node after all of its inputs.

    An explicit stack of (node, inputs still to visit) replaces the recursion, so a chain of a
    million nodes sorts without RecursionError.
    """
    order: list[Value] = []
    seen = {root.seq}
    # Each frame: a node and the iterator over the inputs still to visit.
    stack = [(root, iter(root.inputs))]
    while stack:
        node, todo = stack[-1]
        for child in todo:
            if child.seq not in seen:
                seen.add(child.seq)
                stack.append((child, iter(child.inputs)))
                break
        else:
            stack.pop()
            order.append(node)
    return order


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


def kahn_order(root: Value) -> list[Value]:
    """Kahn's algorithm run from the root, as PyTorch's engine schedules backward.

    Each node waits until every node that uses it has run (its dependency count reaches 0);
    among ready nodes the most recently created runs first. The result is returned inputs-first
    (reversed), so it reads as a topological order like `dfs_order`.
    """
    nodes = reachable(root)
    waiting = {node.seq: 0 for node in nodes}
    for node in nodes:
        for child in node.inputs:
            waiting[child.seq] += 1
    ready = [(-root.seq, root)]
    backward: list[Value] = []
    while ready:
        _, node = heapq.heappop(ready)
        backward.append(node)
        for child in node.inputs:
            waiting[child.seq] -= 1
            if waiting[child.seq] == 0:
                heapq.heappush(ready, (-child.seq, child))
    backward.reverse()
    return backward


ORDERS = {"dfs": dfs_order, "kahn": kahn_order}


def topological_order(root: Value, order: str = "dfs") -> list[Value]:
    try:
        return ORDERS[order](root)
    except KeyError:
        raise ValueError(f"order must be one of {sorted(ORDERS)}, not {order!r}") from None
