"""What a program shows rather than computes, run: `L.backward()` (which marks the output),
`print(…)`, comparisons that are only shown (`print(9*a**2 == a.grad)`, a last line
`x.grad == u`), and `.item()` as a number.

Which node is the output, precisely (build.Builder.run applies it):
1. the target of the last `L.backward()` run, whatever comes after it;
2. else, for a last line that is a shown comparison, its left side when that is a value (what
   the check computes: `d_grad == d / a` gives d_grad);
3. else the last value given at the program's level: a bare last expression, or the last
   assignment of a value;
4. else, for a program that computes only inside its prints (JAX's cookbook:
   `print(grad(jnp.tanh)(2.0))` on each line), the last value a print showed, one computed
   there or named (not a grad read, not a string). A print past max_print_chars is not run,
   so it shows nothing and gives no output.
A program with none of these computes nothing, and says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.autograd.ops import shape_text
from engine.autograd.value import Span, Value
from engine.language import flow_ir as fx
from engine.language import ir
from engine.language.nodes import NodeMaker
from engine.language.printing import CUT, ComparePart, GradPart, Printed, value_text
from engine.language.runtime import ListValue, describe, is_number


class ShownRunner(NodeMaker):
    """backward(), print, shown comparisons and .item() (build.Builder is the whole)."""

    program: Any
    output: Value | None
    output_alias: str | None

    def init_shown(self) -> None:
        self.marked: Value | None = None  # the last L.backward()'s L
        self.seed: np.ndarray | None = None
        self.backward_done = False
        self.printed: list[Printed] = []
        self.print_chars = 0
        self.last_printed: Value | None = None  # rule 4 of the docstring
        self.shown_output: Value | None = None  # rule 2

    def any(self, e: Any) -> Any:
        raise NotImplementedError

    def as_value(self, v: Any, span: Span | None, what: str = "") -> Value:
        raise NotImplementedError

    # --- backward ------------------------------------------------------------------------------
    def backward(self, stmt: fx.Backward) -> None:
        node = self.as_value(self.any(stmt.target), stmt.span, "what backward() is called on")
        name = str(stmt.target)
        if not node.requires_grad:
            raise self.error(
                stmt.span,
                f"{name} depends on no parameter, so backward() has nothing to find "
                "(PyTorch: element 0 of tensors does not require grad)",
                "backward",
            )
        seed = None
        if stmt.gradient is None and node.data.size != 1:
            raise self.error(
                stmt.span,
                f"{name}.backward() needs {name} to be one number, but its shape is "
                f"{shape_text(node.data.shape)} (PyTorch: grad can be implicitly created "
                f"only for scalar outputs); use {name}.sum().backward() or "
                f"{name}.backward(gradient=v)",
                "backward",
            )
        if stmt.gradient is not None:
            v = self.as_value(self.any(stmt.gradient), stmt.span, "the gradient")
            if v.data.shape != node.data.shape:
                raise self.error(
                    stmt.span,
                    f"backward(gradient=v) needs v of {name}'s shape "
                    f"{shape_text(node.data.shape)}, but v has shape {shape_text(v.data.shape)}",
                    "shape",
                )
            seed = np.array(v.data, dtype=np.float64)
        self.marked, self.seed, self.backward_done = node, seed, True

    # --- print ---------------------------------------------------------------------------------
    def print_statement(self, stmt: fx.Print) -> None:
        if self.print_chars > self.limits.max_print_chars:
            return  # past the limit: lines() has already cut the output here
        torch_mode = self.program.torch_mode
        after = self.backward_done or not torch_mode
        parts: list[str | GradPart | ComparePart] = []
        for arg in stmt.args:
            how = arg.how if isinstance(arg, fx.Shown) else None
            inner = arg.of if isinstance(arg, fx.Shown) else arg
            if isinstance(inner, fx.Text):
                parts.append(inner.value)
            elif isinstance(inner, fx.GradRead):
                parts.append(GradPart(self.grad_owner(inner), after, how))
            elif isinstance(inner, fx.Compare):
                parts.append(self.comparison(inner, after))
            else:
                shown = self.any(inner)
                if isinstance(shown, Value):
                    self.last_printed = shown
                parts.append(value_text(shown, torch_mode, how))
        self.print_chars += sum(len(p) + 1 for p in parts if isinstance(p, str))
        if self.print_chars > self.limits.max_print_chars:
            parts = [CUT]
        self.printed.append(Printed(stmt.span.line, tuple(parts)))

    def grad_owner(self, e: fx.GradRead) -> Value:
        return self.as_value(self.any(e.of), e.span, "what .grad is read of")

    def shown_line(self, stmt: fx.ShownLine) -> None:
        """A comparison as the last line: printed, and its left side the output if it is a
        value (rule 2; a backward() run before it still wins)."""
        self.print_statement(fx.Print((stmt.value,), stmt.span))
        compare = stmt.value
        assert isinstance(compare, fx.Compare)
        if not isinstance(compare.left, fx.GradRead):
            left = self.any(compare.left)
            if isinstance(left, Value):
                if left.name is None and left.kind != "leaf":
                    left.name = "out"
                self.shown_output = left

    # --- comparisons ---------------------------------------------------------------------------
    def comparison(self, e: fx.Compare, after: bool) -> ComparePart:
        """A shown comparison's operands, each a value now or a grad read after backward;
        their shapes must broadcast, and the result fit max_tensor_elements."""
        operands: list[np.ndarray | GradPart] = []
        shapes: list[tuple[int, ...]] = []
        for o in (e.left, *e.rights):
            if isinstance(o, fx.GradRead):
                node = self.grad_owner(o)
                operands.append(GradPart(node, after, None))
                shapes.append(node.data.shape)
                continue
            v = o.value if isinstance(o, ir.Num) else self.any(o)
            data: np.ndarray
            if is_number(v) or isinstance(v, bool):
                data = np.array(v, dtype=np.float64)
            elif isinstance(v, Value):
                data = np.array(v.data, dtype=np.float64)
            else:
                raise self.error(e.span, f"{describe(v)} cannot be compared here", "invalid")
            operands.append(data)
            shapes.append(np.shape(data))
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            listed = " and ".join(shape_text(s) for s in shapes)
            raise self.error(
                e.span, f"cannot compare values of shapes {listed}: they do not broadcast", "shape"
            ) from None
        size = math.prod(shape)
        if size > self.limits.max_tensor_elements:
            raise self.error(
                e.span,
                f"this comparison would have {size:,} elements; the limit is "
                f"{self.limits.max_tensor_elements:,} per value (max_tensor_elements)",
                "too_large",
                limit="max_tensor_elements",
            )
        return ComparePart(tuple(operands), e.ops)

    # --- .item() ---------------------------------------------------------------------------------
    def item_number(self, e: fx.Shown) -> float:
        """`x.item()`: x's one element as a number (a constant where it is used)."""
        v = self.any(e.of)
        if is_number(v):
            return float(v)
        if isinstance(v, ListValue) or not isinstance(v, Value):
            raise self.error(e.span, f"item() needs a tensor, not {describe(v)}", "invalid")
        if v.data.size != 1:
            raise self.error(
                e.span,
                f"item() needs a tensor of one element, but this one has shape "
                f"{shape_text(v.data.shape)} (PyTorch: a Tensor with {v.data.size} elements "
                "cannot be converted to Scalar)",
                "shape",
            )
        return float(v.data.reshape(()))
