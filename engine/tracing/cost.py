"""What an answer will cost, counted before the work that would spend it.

The limits in engine/limits.py bound what a program *is* (its text, nodes and values). The
trace and the lessons *derive* more from it: every step of backward records, for each input
edge, the contribution and the grad before and after the `+=`, and the answer writes each of
them out. A 128×128 value summed 999 times is 66 characters of source and 65 million recorded
numbers. So the numbers an answer will carry are counted here from the graph alone, before
backward runs, and a program over `max_trace_numbers` is refused (413, naming the setting)
before any of that memory is spent. The lessons asked for are charged, as each is made, against
what the whole answer may carry (`max_answer_numbers`).

Every number in a JSON answer costs at most 25 bytes (`-1.2345678901234567e-100,`), so these
bound the answer's size too (README, "Limits").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.autograd.value import Value
from engine.errors import Msg, ProgramError, fail
from engine.limits import Limits

# What the trace JSON writes per input edge that carries gradient: the contribution, the grad
# before and after the `+=`, and the step's `grads` delta (docs/trace-format.md).
NUMBERS_PER_EDGE = 4


def trace_numbers(nodes: Iterable[Value]) -> Iterable[tuple[Value, int]]:
    """For each node in creation order, the numbers the trace will carry because of it: its
    value and grad, and when it is an op that backward runs, its upstream grad and each input
    edge's terms. An upper bound: it counts ops whose grad the output may not reach."""
    for node in nodes:
        size = node.data.size
        numbers = 2 * size  # value and grad in `nodes`
        if node.op is not None and node.requires_grad:
            numbers += size  # the step's upstream grad
            for x in node.inputs:
                if x.requires_grad:
                    numbers += NUMBERS_PER_EDGE * x.data.size
        yield node, numbers


def check_trace(nodes: list[Value], output: Value, limits: Limits) -> int:
    """The numbers the program's trace will carry; ProgramError (413) at the node that takes
    them over `max_trace_numbers`, before backward runs."""
    total = output.data.size  # the seed
    limit = limits.max_trace_numbers
    for node, numbers in trace_numbers(nodes):
        total += numbers
        if total > limit:
            raise over_limit("max_trace_numbers", limit, node)
    return total


def over_limit(limit: str, most: int, node: Value | None = None, **params: Any) -> ProgramError:
    """The error of the setting `limit` (its one message, msg_limit_<limit>), at `node`."""
    span = node.span if node is not None else None
    return fail("limit_" + limit, span, code="too_large", limit=limit, max=most, **params)


def count_numbers(data: Any, budget: int) -> int:
    """How many numbers `data` (JSON-ready: dicts, lists, numbers, strings) will write, counted
    until it passes `budget` (then that count is returned at once, so counting costs no more
    than the budget). A shared list is counted at each place it appears, as JSON writes it."""
    count = 0
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            if item and isinstance(item[0], float | int) and not isinstance(item[0], bool):
                count += len(item)  # a row of numbers: no need to look at each
            else:
                stack.extend(item)
        elif isinstance(item, float | int) and not isinstance(item, bool):
            count += 1
        if count > budget:
            return count
    return count


class AnswerBudget:
    """The numbers one answer may still carry (`max_answer_numbers`), charged part by part:
    the trace first, then each lesson as it is made."""

    def __init__(self, limits: Limits, spent: int = 0) -> None:
        self.limit = limits.max_answer_numbers
        self.spent = spent

    def charge(self, part: Msg, data: Any) -> None:
        """Spend what `data` will write, or refuse it (`part` says what it is, for the
        message: Msg("what_lesson", {"name": "orders"}))."""
        left = self.limit - self.spent
        numbers = count_numbers(data, left)
        if numbers > left:
            raise over_limit("max_answer_numbers", self.limit, what=part)
        self.spent += numbers
