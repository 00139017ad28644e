"""Deterministic topological orders of the nodes a root depends on, without recursion.

Both sorts visit inputs in argument order and never look at id(), so the same program always
gives the same order.
"""

from __future__ import annotations

import heapq

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
