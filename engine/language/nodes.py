"""Graph nodes, each made only after the limits it could break are checked: the node count
before a node is made, a result's elements (and an op's inside, `work_elements`) before NumPy
computes it, the program's total as it grows; and the errors that point at a node's source.
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import OpError, shape_text
from engine.autograd.value import Span, Value
from engine.errors import ProgramError
from engine.limits import Limits, check_deadline

# An op's source text (its label, and the start of a message about it) is cut here: a long flat
# chain `x+x+…` would otherwise repeat the program in every node, and answers would grow with
# the square of the source length.
TEXT_CHARS = 60


class NodeMaker:
    """Makes a program's graph nodes in order, within its limits (build.Builder is the whole)."""

    def __init__(self, limits: Limits, lines: list[str]) -> None:
        self.limits = limits
        self.lines = lines  # the source's (positions.source_lines): slice, never mutate
        self.nodes: list[Value] = []
        self.total_elements = 0

    def count_node(self, span: Span | None) -> None:
        check_deadline()  # max_request_seconds, when the app set a deadline
        if len(self.nodes) >= self.limits.max_nodes:
            raise self.error(
                span,
                f"the program makes more than {self.limits.max_nodes:,} "
                "graph nodes once its loops are unrolled (max_nodes)",
                "too_large",
                limit="max_nodes",
            )

    def check_shape(self, shape: tuple[int, ...], span: Span | None) -> None:
        """May a value of `shape` be made? Its rank, its elements (an empty value charged as
        ops.footprint counts it) and the program's total, before NumPy is asked to make it."""
        if len(shape) > ops.MAX_RANK:
            raise self.error(span, ops.rank_message(shape), "shape")
        size = math.prod(shape)
        charged = size or ops.footprint(shape)
        if charged > self.limits.max_tensor_elements and not size:
            raise self.error(
                span,
                f"this value of shape {shape_text(shape)} is empty, but "
                f"counting its length-0 axes as 1 it has {charged:,} elements; "
                f"the limit is {self.limits.max_tensor_elements:,} per value "
                "(max_tensor_elements)",
                "too_large",
                limit="max_tensor_elements",
            )
        self.check_elements(size, span)

    def check_work(
        self, op: ops.Op, shapes: tuple[tuple[int, ...], ...], span: Span | None
    ) -> None:
        """Refuse an op whose inside (op.work_elements) is larger than one value may be:
        `mse(zeros(16384, 1), zeros(1, 16384))` is one number, made from 268 million."""
        if type(op).work_elements is ops.Op.work_elements:
            return  # its inputs' or result's size, each checked already
        work = op.work_elements(*shapes)
        if work > self.limits.max_tensor_elements:
            listed = " and ".join(shape_text(s) for s in shapes)
            raise self.error(
                span,
                f"{op.name} of {listed} would make {work:,} elements "
                "inside it (a value larger than its result); the limit is "
                f"{self.limits.max_tensor_elements:,} per value "
                "(max_tensor_elements)",
                "too_large",
                limit="max_tensor_elements",
            )

    def check_elements(self, size: int, span: Span | None) -> None:
        if size > self.limits.max_tensor_elements:
            raise self.error(
                span,
                f"this value would have {size:,} elements; the limit is "
                f"{self.limits.max_tensor_elements:,} per value "
                "(max_tensor_elements)",
                "too_large",
                limit="max_tensor_elements",
            )
        if self.total_elements + size > self.limits.max_total_elements:
            raise self.error(
                span,
                f"the program's values would hold more than "
                f"{self.limits.max_total_elements:,} elements in all "
                "(max_total_elements)",
                "too_large",
                limit="max_total_elements",
            )

    def new_node(
        self,
        data: Any,
        span: Span | None,
        kind: str,
        name: str | None = None,
        counted: bool = False,
    ) -> Value:
        self.count_node(span)
        array = np.asarray(data, dtype=np.float64)
        if not counted:
            self.check_shape(array.shape, span)
        self.total_elements += array.size
        node = Value(array, name=name, kind=kind)
        self.place(node, span)
        return node

    def apply(self, op: ops.Op, inputs: tuple[Value, ...], span: Span) -> Value:
        self.count_node(span)
        try:
            shapes = tuple(x.data.shape for x in inputs)
            # An elementwise op on scalars makes a scalar: nothing to check (the fast path).
            if not op.elementwise or any(shapes):
                shape = op.out_shape(*shapes)
                if shape is not None:
                    self.check_shape(shape, span)
                self.check_work(op, shapes, span)
            node = ops.apply(op, *inputs)
        except OpError as err:
            raise self.error(span, self.op_message(op, span, err), err.code) from None
        self.total_elements += node.data.size
        self.place(node, span)
        return node

    def place(self, node: Value, span: Span | None) -> None:
        node.span = span
        node.text = shorten(self.text(span))
        self.nodes.append(node)

    def op_message(self, op: ops.Op, span: Span, err: OpError) -> str:
        text = shorten(self.text(span))
        if err.code == "non_finite" and text:
            return f"{text} {err.message}"
        return err.message

    # --- errors --------------------------------------------------------------------------------
    def text(self, span: Span | None) -> str | None:
        if span is None:
            return None
        lines = self.lines[span.line - 1 : span.end_line]
        if not lines:
            return None
        if len(lines) == 1:
            return lines[0][span.column - 1 : span.end_column - 1]
        lines[-1] = lines[-1][: span.end_column - 1]
        lines[0] = lines[0][span.column - 1 :]
        # A span over several lines may hold comments; strings are not in the language, so a
        # `#` always starts one. Keep only the code.
        return " ".join(part.split("#", 1)[0].strip() for part in lines)

    def error(
        self, span: Span | None, message: str, code: str = "invalid", limit: str | None = None
    ) -> ProgramError:
        if span is None:
            return ProgramError(message, code=code, limit=limit)
        return ProgramError(
            message,
            span.line,
            span.column,
            end_line=span.end_line,
            end_column=span.end_column,
            code=code,
            limit=limit,
        )


def shorten(text: str | None) -> str | None:
    """An op's source text as shown: with its names as Python reads them (NFKC, so `𝐱 * 3`
    is `x * 3`; the language has no strings for NFKC to change), cut at TEXT_CHARS."""
    if text is None:
        return None
    text = unicodedata.normalize("NFKC", text)
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"
