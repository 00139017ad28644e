"""build(program, values) -> Graph: run the IR forward, unrolling loops, making graph nodes.

Every node is created in program order (nodes.py makes them), so ids (`n0, n1, …`) are stable
for a program. Each limit is checked before the work it guards: the node count before a node is
made, a result's element count before it is computed, a loop's length before it is unrolled.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import BINARY_FUNCTIONS, OPS, UNARY_FUNCTIONS, OpError
from engine.autograd.value import Span, Value
from engine.errors import ProgramError
from engine.language import ir
from engine.language.build_names import NamesBuilder
from engine.language.given import free_names, given_labels, given_value
from engine.language.positions import source_lines
from engine.language.printing import Printed
from engine.language.run_statements import MISSING, RUNTIME_KINDS, StatementRunner
from engine.language.runtime import ListValue, is_number
from engine.limits import DEFAULT_LIMITS, Limits, limit_named


@dataclass
class Graph:
    """Every node of a program in creation order, its output, and the free names' values."""

    nodes: list[Value]
    output: Value
    free: list[dict[str, Any]] = field(default_factory=list)
    # Each grad(L, x) call: {"output", "wrt", "result", "nodes": the nodes it built, "span"}.
    grads_built: list[dict[str, Any]] = field(default_factory=list)
    # What print(…) and x.grad showed, as printing.lines writes it out after backward.
    printed: list[Printed] = field(default_factory=list)
    seed: np.ndarray | None = None  # L.backward(gradient=v): the output's grad starts as v
    torch_mode: bool = False  # the program imports torch (printing as PyTorch does)


@dataclass(frozen=True, slots=True)
class LabelValue:
    """A name bound to class labels (for cross_entropy), which is not a graph node."""

    labels: int | tuple[int, ...]


def build(
    program: ir.Program, values: dict[str, Any] | None = None, limits: Limits = DEFAULT_LIMITS
) -> Graph:
    """Run the program with `values` for its free names; raise ProgramError at a limit."""
    return Builder(program, values or {}, limits).run()


class Builder(StatementRunner, NamesBuilder):
    """Runs a program's statements in order, its loops unrolled and its calls inlined, each
    value a graph node (run_statements.py runs the statements)."""

    def __init__(self, program: ir.Program, values: dict[str, Any], limits: Limits) -> None:
        super().__init__(limits, source_lines(program.source))
        self.program = program
        # Python reads names in NFKC form (`𝐱` is `x`); the keys of `values` are read the same way.
        self.values = {unicodedata.normalize("NFKC", k): v for k, v in values.items()}
        self.env: dict[str, Value | LabelValue] = {}
        self.loop_env: dict[str, int] = {}
        self.rng = np.random.default_rng(0)
        self.iterations = 0
        self.statements = 0
        self.output: Value | None = None
        self.output_alias: str | None = None  # `L` when the output came from `L = h`
        self.grads_built: list[dict[str, Any]] = []
        self.init_statements()

    # --- the run ---------------------------------------------------------------------------
    def run(self) -> Graph:
        free = free_names(self.program, self.values, self.limits)
        self.block(self.program.body, multiplier=1)
        # Which node is the output: run_shown.py's docstring says it, in this order.
        if self.marked is not None:  # L.backward(): L is the output, whatever came after
            self.output, self.output_alias = self.marked, None
        elif self.shown_output is not None:  # `d_grad == d / a` last: d_grad
            self.output, self.output_alias = self.shown_output, None
        elif self.output is None and self.last_printed is not None:  # print(grad(tanh)(2.0))
            self.output = self.last_printed
        if self.output is None:
            raise ProgramError(
                "the program computes nothing: its last statement must give a value",
                1,
                1,
                code="no_output",
            )
        if self.output_alias is not None and self.output.kind == "op":
            # `L = h` as the last word: the output is L, as for a PyTorch user calling
            # L.backward(). A leaf keeps its own name (it names its value and its grad).
            self.output.name = self.output_alias
        return Graph(
            self.nodes,
            self.output,
            free,
            self.grads_built,
            self.printed,
            self.seed,
            self.program.torch_mode,
        )

    # --- expressions ---------------------------------------------------------------------------
    def expr(self, e: ir.Expr, leaf_name: str | None = None) -> Value | LabelValue:
        """Evaluate e; a literal bound straight to a name (leaf_name) becomes a leaf."""
        if isinstance(e, ir.Num):
            return self.new_node(
                np.float64(e.value), e.span, kind="leaf" if leaf_name else "const", name=leaf_name
            )
        if isinstance(e, ir.Array):
            return self.new_node(
                e.value.copy(), e.span, kind="leaf" if leaf_name else "const", name=leaf_name
            )
        if isinstance(e, ir.Name):
            return self.name(e)
        if isinstance(e, ir.BinOp):
            return self.chain(e)
        if isinstance(e, ir.Neg):
            return self.apply(ops.Neg(), (self.value(e.operand),), e.span)
        if isinstance(e, ir.Index):
            return self.index(e)  # build_names.py: a view, or a gather of index lists
        if isinstance(e, ir.IntOf):
            return self.int_of(e)
        if isinstance(e, ir.Call):
            return self.call(e, leaf_name)
        if isinstance(e, ir.Labels):
            return LabelValue(e.value)
        if isinstance(e, RUNTIME_KINDS):  # run_statements.py: calls, lists, if-expressions
            found = self.any(e)
            return self.as_value(found, e.span) if is_number(found) else found
        raise AssertionError(f"unhandled IR node {type(e).__name__}")

    def chain(self, e: ir.BinOp) -> Value:
        """A left-leaning chain `a + b + c + …`, evaluated with a loop, not recursion."""
        spine = [e]
        while isinstance(spine[-1].left, ir.BinOp):
            spine.append(spine[-1].left)
        result = self.value(spine[-1].left)
        for link in reversed(spine):
            right = self.value(link.right)
            if link.op == "pow":
                self.check_exponent(right, link.right)
            result = self.apply(OPS[link.op](), (result, right), link.span)
        return result

    def value(self, e: ir.Expr) -> Value:
        node = self.expr(e)
        span = getattr(e, "span", None)
        if isinstance(node, LabelValue):
            raise self.error(
                span,
                "these are class labels for cross_entropy; they cannot also be used as a value",
                "labels",
            )
        return self.as_value(node, span, f"'{e.id}'" if isinstance(e, ir.Name) else "")

    def name(self, e: ir.Name) -> Value | LabelValue:
        found = self.lookup(e.id, e.span)  # run_statements.py: the calls' scopes, then ours
        if is_number(found):  # a loop's counter, an int, a number argument: a constant
            return self.new_node(np.float64(found), e.span, kind="const")
        if found is not MISSING:
            return found  # type: ignore[no-any-return]
        if e.id in self.program.free:
            if e.id in self.program.label_names:
                found = LabelValue(given_labels(e.id, self.values))
            else:
                given = e.id in self.values
                value = given_value(e.id, self.values, self.limits) if given else np.float64(1.0)
                found = self.new_node(value, e.span, kind="leaf", name=e.id)
            self.env[e.id] = found
            return found
        raise self.error(e.span, f"'{e.id}' is used before it is assigned", "unbound")

    def call(self, e: ir.Call, leaf_name: str | None) -> Value | LabelValue:
        f = e.func
        if (made := self.more_call(e, leaf_name)) is not None:  # build_names.py's calls
            return made
        if f in UNARY_FUNCTIONS:
            x = self.value(e.args[0])  # type: ignore[arg-type]
            return self.apply(UNARY_FUNCTIONS[f](), (x,), e.span)
        if f in BINARY_FUNCTIONS:
            args = tuple(self.value(a) for a in e.args)  # type: ignore[arg-type]
            return self.apply(BINARY_FUNCTIONS[f](), args, e.span)
        kwargs = dict(e.kwargs)
        if f in ("sum", "mean"):
            op: ops.Op = (ops.Sum if f == "sum" else ops.Mean)(
                self.axis(kwargs.get("axis")), bool(kwargs.get("keepdims", False))
            )
            first = self.any(e.args[0])
            if f == "sum" and isinstance(first, ListValue) and not kwargs:
                return self.list_sum(first.items, None, e.span)  # Python's sum of a list
            return self.apply(op, (self.as_value(first, e.span),), e.span)
        if f in ("softmax", "log_softmax"):
            axis = self.axis(kwargs.get("axis", ir.SInt(-1)))
            if not isinstance(axis, int):
                raise self.error(e.span, f"{f} takes one axis")
            cls = ops.Softmax if f == "softmax" else ops.LogSoftmax
            return self.apply(cls(axis), (self.value(e.args[0]),), e.span)  # type: ignore[arg-type]
        if f == "reshape":
            shape = self.static_tuple(e.args[1])
            return self.apply(ops.Reshape(shape), (self.value(e.args[0]),), e.span)  # type: ignore[arg-type]
        if f == "transpose":
            axes = self.static_tuple(e.args[1]) if len(e.args) > 1 else None
            return self.apply(ops.Transpose(axes or None), (self.value(e.args[0]),), e.span)  # type: ignore[arg-type]
        if f == "cross_entropy":
            z = self.value(e.args[0])  # type: ignore[arg-type]
            labels = self.expr(e.args[1])  # type: ignore[arg-type]
            if not isinstance(labels, LabelValue):
                raise self.error(
                    e.span,
                    "cross_entropy's second argument is the class labels: an int or a list of ints",
                    "labels",
                )
            return self.apply(ops.CrossEntropy(labels.labels), (z,), e.span)
        if f == "grad":
            return self.grad_call(e)
        if f in ("const", "detach"):
            source = self.value(e.args[0])  # type: ignore[arg-type]
            return self.new_node(source.data.copy(), e.span, kind="const")
        return self.constructor(e, leaf_name)

    def constructor(self, e: ir.Call, leaf_name: str | None) -> Value:
        f = e.func
        shape = self.static_tuple(e.args[0])
        if any(d < 0 for d in shape):
            raise self.error(e.span, f"a shape cannot have negative sizes: {shape}", "shape")
        self.check_shape(shape, e.span)
        if f == "randn":
            data = self.rng.standard_normal(shape)
        elif f == "rand":
            data = self.rng.random(shape)
        elif f == "zeros":
            data = np.zeros(shape)
        elif f == "ones":
            data = np.ones(shape)
        elif f == "full":
            fill = e.args[1]
            assert isinstance(fill, ir.Num)
            data = np.full(shape, fill.value)
        else:  # arange
            data = np.arange(shape[0], dtype=np.float64)
        kind = "leaf" if leaf_name else "const"
        return self.new_node(
            np.asarray(data, dtype=np.float64), e.span, kind=kind, name=leaf_name, counted=True
        )

    def grad_call(self, e: ir.Call) -> Value:
        """grad(L, x): ∂L/∂x built as graph nodes by the ops' own rules
        (engine/autograd/higher.py), so it can be differentiated again. Every node it makes is
        placed at the call."""
        output = self.value(e.args[0])  # type: ignore[arg-type]
        wrt = self.value(e.args[1])  # type: ignore[arg-type]
        if not wrt.requires_grad:
            raise self.error(
                e.args[1].span,
                "grad(L, x): x is a constant here, so it has "  # type: ignore[union-attr]
                "no gradient; use a leaf or a value computed from one",
                "arguments",
            )
        return self.differentiate(output, wrt, e.span)

    def differentiate(self, output: Value, wrt: Value, span: Span) -> Value:
        """∂output/∂wrt as graph nodes, each placed at `span` (grad(L, x), grad(f)(x))."""
        from engine.autograd.higher import describe, grad

        made: list[Value] = []
        try:
            (result,) = grad(
                output,
                [wrt],
                on_node=made.append,
                max_new=max(1, self.limits.max_nodes - len(self.nodes)),
                max_elements=self.limits.max_tensor_elements,
                max_new_elements=max(1, self.limits.max_total_elements - self.total_elements),
            )
        except OpError as err:
            raise self.error(
                span,
                f"grad(…): {err.message}",
                err.code,
                limit=limit_named(err.message) if err.code == "too_large" else None,
            ) from None
        for node in made:
            self.count_node(span)
            self.check_elements(node.data.size, span)
            if not np.isfinite(node.data).all():
                raise self.error(span, "grad(…) gives a value that is not finite", "non_finite")
            self.total_elements += node.data.size
            self.place(node, span)
            node.text = describe(node) if node.op is not None else None
        self.grads_built.append(
            {"output": output, "wrt": wrt, "result": result, "nodes": made, "span": span}
        )
        return result

    # --- static ints -------------------------------------------------------------------------
    def static(self, s: ir.Static) -> int:
        if isinstance(s, ir.SInt):
            return s.value
        if isinstance(s, ir.SShape):
            return self.shape_static(s)  # x.shape[0], len(x): known once x's value is
        if isinstance(s, ir.SVar):
            return self.int_named(s)  # run_statements.py: a counter or a name bound to an int
        # A flat chain `1 + 1 + …` of any length: its left spine in a loop, not by recursion.
        spine: list[ir.SBin] = []
        top: ir.Static = s
        while isinstance(top, ir.SBin):
            spine.append(top)
            top = top.left
        result = self.static(top)
        for node in reversed(spine):
            result = self.static_op(node, result, self.static(node.right))
        return result

    def static_op(self, s: ir.SBin, a: int, b: int) -> int:
        """`a op b` for one whole-number operator, refused where it divides by zero or grows
        past 2**62."""
        if s.op == "//" and b == 0:
            raise self.error(s.span, "division by zero in a whole-number expression")
        if s.op == "**" and (b < 0 or b > 62 or abs(a) > 2**62):
            raise self.error(s.span, "this whole number is too large", "too_large")
        if s.op == "**":
            result = a**b if abs(a) < 2 or b * math.log2(abs(a)) <= 62 else 2**63
        elif s.op == "//":
            result = a // b
        else:
            result = {"+": a + b, "-": a - b, "*": a * b}[s.op]
        if abs(result) > 2**62:
            raise self.error(s.span, "this whole number is too large", "too_large")
        return result

    def static_tuple(self, arg: Any) -> tuple[int, ...]:
        assert isinstance(arg, ir.StaticArg)
        value = arg.value
        parts = value if isinstance(value, tuple) else (value,)
        return self.sizes(parts)  # `*x.shape` among them: all of x's sizes

    def axis(self, axis: Any) -> Any:
        if axis is None:
            return None
        if isinstance(axis, tuple):
            return tuple(self.static(a) for a in axis)
        return self.static(axis)

    def key_part(self, k: ir.Static | ir.SSlice, span: Span) -> int | slice:
        if isinstance(k, ir.SSlice):
            parts = [None if p is None else self.static(p) for p in (k.start, k.stop, k.step)]
            if parts[2] == 0:
                raise self.error(span, "a slice step cannot be 0", "index")
            return slice(*parts)
        return self.static(k)

    def check_exponent(self, exponent: Value, e: ir.Expr) -> None:
        if not exponent.requires_grad and exponent.data.ndim == 0:
            b = float(exponent.data)
            if abs(b) > self.limits.max_exponent:
                raise self.error(
                    getattr(e, "span", None),
                    f"the exponent {b:g} is larger than the limit of "
                    f"{self.limits.max_exponent:g} (max_exponent)",
                    "too_large",
                    limit="max_exponent",
                )
