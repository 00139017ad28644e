"""The run's output: the last value a program gave at its level (a name bound, a bare
expression), and the implicit pass on it when the program made no backward call of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.value import Span, Value
from engine.errors import Msg, ProgramError, fail
from engine.language.values import Function, Pending, describe, is_number

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


def set_output(
    it: Interpreter, value: Any, name: str, alias: bool, anonymous: bool = False
) -> None:
    """The last value given at the program's level: the implicit pass's output."""
    if isinstance(value, Pending | tuple):  # a pending leaf, or (number, node, name)
        it.output, it.output_alias = value, None
        return
    it.output = value
    it.output_alias = name if alias or value.name != name else None
    if anonymous:
        it.output_alias = None
        if value.name is None and value.kind != "leaf":
            value.name = "out"


def finish(it: Interpreter) -> None:
    """Leaves bound but never used as a value (`x = 2` and nothing more) are in the graph
    too, unused; those read only as numbers (`n = 3` in `range(n)`) are not. A program
    with no backward call gets its implicit pass on the last value it gave."""
    for _, p in it.pending:
        if p.node.seq not in it.registered and not p.read_as_number:
            it.register(p.node, p.node.span)
    if not it.passes.passes:
        if it.last_value is not None:
            node, value = it.last_value
            if is_number(value) and not isinstance(value, bool):
                it.output = it.constant(np.float64(value), node)  # a number: a constant
            elif not isinstance(value, Value | Pending):
                if it.passes.forward_output is None:
                    raise output_error(it, value, node)
                it.output = it.passes.forward_output  # jvp's function, when no pass ran
        out: Any = it.output if it.output is not None else it.last_printed
        if isinstance(out, Pending):
            out = it.materialize(out)
        if isinstance(out, tuple):  # `y = i` in a loop: a number, the output a constant
            number, where, name = out
            out = it.constant(np.float64(number), where, name=name)
            out.text = repr(float(number))
        if out is None:
            raise fail("no_output", Span(1, 1, 1, 1), code="no_output")
        if isinstance(out, Value) and out.seq in it.passes.forward_made:
            out = it.passes.forward_output  # jvp(…)[1], jacfwd(f)(x): f's graph, y its output
        if it.output_alias is not None and out.kind == "op":
            out.name = it.output_alias  # `L = h` as the last word: the output is L
        if out.seq not in it.registered:
            it.register(out, out.span)
        it.passes.implicit(out)
    it.nodes.sort(key=lambda n: n.seq)


def output_error(it: Interpreter, value: Any, node: Any) -> ProgramError:
    """Why the last statement's value cannot be the output."""
    what = Msg("what_output", {})
    if isinstance(value, Function) and value.bound is not None:
        return it.error("method_not_called", node, "unsupported", name=value.name)
    if isinstance(value, list) and not value:
        return it.error("empty_list", node, "bad_list")
    if isinstance(value, list | tuple):
        return it.error("list_not_tensor", node, "list", what=what, v=describe(value))
    if value is None:
        return it.error("none_not_tensor", node, "no_output", what=what)
    return it.error("output_not_value", node, "no_output", v=describe(value))
