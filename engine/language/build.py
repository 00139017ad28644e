"""build(program, values) -> Graph: run the IR forward, unrolling loops, making graph nodes.

Every node is created here, in program order, so ids (`n0, n1, …`) are stable for a program.
Each limit is checked before the work it guards: the node count before a node is made, a
result's element count before it is computed, a loop's length before it is unrolled.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import OpError, shape_text
from engine.autograd.value import Span, Value
from engine.errors import ProgramError
from engine.language import ir
from engine.language.parse import did_you_mean, source_lines
from engine.limits import DEFAULT_LIMITS, Limits, check_deadline, limit_named

BINARY_OPS: dict[str, type[ops.Op]] = {
    "add": ops.Add,
    "sub": ops.Sub,
    "mul": ops.Mul,
    "div": ops.Div,
    "pow": ops.Pow,
    "matmul": ops.MatMul,
    "max": ops.Maximum,
    "min": ops.Minimum,
    "mse": ops.Mse,
}
UNARY_OPS: dict[str, type[ops.Op]] = {
    "exp": ops.Exp,
    "log": ops.Log,
    "sqrt": ops.Sqrt,
    "sin": ops.Sin,
    "cos": ops.Cos,
    "tanh": ops.Tanh,
    "sigmoid": ops.Sigmoid,
    "relu": ops.Relu,
    "abs": ops.Abs,
}
# An op's source text (its label, and the start of a message about it) is cut here: a long flat
# chain `x+x+…` would otherwise repeat the program in every node, and answers would grow with
# the square of the source length.
TEXT_CHARS = 60


@dataclass
class Graph:
    """Every node of a program in creation order, its output, and the free names' values."""

    nodes: list[Value]
    output: Value
    free: list[dict[str, Any]] = field(default_factory=list)
    # Each grad(L, x) call: {"output", "wrt", "result", "nodes": the nodes it built, "span"}.
    grads_built: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LabelValue:
    """A name bound to class labels (for cross_entropy), which is not a graph node."""

    labels: int | tuple[int, ...]


def build(
    program: ir.Program, values: dict[str, Any] | None = None, limits: Limits = DEFAULT_LIMITS
) -> Graph:
    return Builder(program, values or {}, limits).run()


class Builder:
    def __init__(self, program: ir.Program, values: dict[str, Any], limits: Limits) -> None:
        self.program = program
        self.limits = limits
        # Python reads names in NFKC form (`𝐱` is `x`); the keys of `values` are read the same way.
        self.values = {unicodedata.normalize("NFKC", k): v for k, v in values.items()}
        self.nodes: list[Value] = []
        self.env: dict[str, Value | LabelValue] = {}
        self.loop_env: dict[str, int] = {}
        self.rng = np.random.default_rng(0)
        self.total_elements = 0
        self.iterations = 0
        self.statements = 0
        self.output: Value | None = None
        self.grads_built: list[dict[str, Any]] = []
        self.lines = source_lines(program.source)

    # --- the run ---------------------------------------------------------------------------
    def run(self) -> Graph:
        free = self.bind_free_names()
        self.block(self.program.body, multiplier=1)
        if self.output is None:
            raise ProgramError(
                "the program computes nothing: its last statement must give a value",
                1,
                1,
                code="no_output",
            )
        return Graph(self.nodes, self.output, free, self.grads_built)

    def bind_free_names(self) -> list[dict[str, Any]]:
        """Free names become leaves made at their first use; check `values` names them."""
        free = self.program.free
        for key in self.values:
            if key not in free:
                known = ", ".join(free) if free else "none"
                # the key is user input: quote a bounded, encodable piece of it, never all of it
                shown = key[:40].encode("utf-8", "replace").decode("utf-8")
                shown += "…" if len(key) > 40 else ""
                raise ProgramError(
                    f"a value is given for '{shown}', but the program has no free name "
                    f"'{shown}' (free names: {known}){did_you_mean(key[:100], free)}",
                    code="unknown_value",
                )
        out = []
        for name in free:
            given = name in self.values
            if name in self.program.label_names:
                out.append(
                    {
                        "name": name,
                        "value": self.values.get(name, 0),
                        "given": given,
                        "labels": True,
                    }
                )
                continue
            value = self.given_value(name) if given else np.float64(1.0)
            out.append({"name": name, "value": to_plain(value), "given": given})
        return out

    def given_value(self, name: str) -> np.ndarray:
        raw = self.values[name]
        try:
            array = np.asarray(raw, dtype=np.float64)
        except (ValueError, TypeError):
            raise ProgramError(
                f"the value for '{name}' must be a number or a nested list of "
                "numbers with rows of equal length",
                code="bad_value",
            ) from None
        if array.ndim > ops.MAX_RANK:
            raise ProgramError(
                f"the value for '{name}': {ops.rank_message(array.shape)}", code="bad_value"
            )
        if ops.footprint(array.shape) > self.limits.max_tensor_elements:
            raise ProgramError(
                f"the value for '{name}' has {ops.footprint(array.shape):,} numbers; the limit "
                f"is {self.limits.max_tensor_elements:,} (max_tensor_elements)",
                code="too_large",
                limit="max_tensor_elements",
            )
        if not np.isfinite(array).all():
            raise ProgramError(f"the value for '{name}' is not a finite number", code="bad_value")
        return array

    def given_labels(self, name: str) -> int | tuple[int, ...]:
        """Class labels given in `values` (JSON numbers arrive as floats): whole numbers only."""
        raw = self.values.get(name, 0)

        def whole(v: Any) -> int:
            if isinstance(v, bool) or not isinstance(v, int | float) or not float(v).is_integer():
                raise ProgramError(
                    f"the value for '{name}' is class labels for cross_entropy: "
                    "a whole number or a list of whole numbers",
                    code="labels",
                )
            return int(v)

        if isinstance(raw, list | tuple):
            if not raw:
                raise ProgramError(
                    f"the value for '{name}' is an empty list of labels", code="labels"
                )
            return tuple(whole(v) for v in raw)
        return whole(raw)

    def block(self, body: tuple[ir.Stmt, ...], multiplier: int) -> None:
        for stmt in body:
            self.statements += 1
            if self.statements > self.limits.max_statements:
                raise self.error(
                    stmt.span,
                    f"the program runs more than "
                    f"{self.limits.max_statements:,} statements once its loops "
                    "are unrolled (max_statements)",
                    "too_large",
                    limit="max_statements",
                )
            if isinstance(stmt, ir.Assign):
                self.assign(stmt)
            elif isinstance(stmt, ir.Output):
                node = self.expr(stmt.expr)
                if not isinstance(node, Value):
                    raise self.error(stmt.span, "the output must be a value, not labels")
                if node.name is None and node.kind != "leaf":
                    node.name = "out"
                self.output = node
            elif isinstance(stmt, ir.Seed):
                self.rng = np.random.default_rng(stmt.value)
            elif isinstance(stmt, ir.Loop):
                self.loop(stmt, multiplier)

    def assign(self, stmt: ir.Assign) -> None:
        if isinstance(stmt.expr, ir.Labels):
            self.env[stmt.name] = LabelValue(stmt.expr.value)
            return
        node = self.expr(stmt.expr, leaf_name=stmt.name)
        if not isinstance(node, Value):
            raise self.error(stmt.span, "labels can only be given to cross_entropy")
        if node.name is None and not isinstance(stmt.expr, ir.Name):
            node.name = stmt.name  # `u = x` only gives x a second name: no new node
        self.env[stmt.name] = node
        self.output = node

    def loop(self, stmt: ir.Loop, multiplier: int) -> None:
        start, stop, step = (self.static(s) for s in (stmt.start, stmt.stop, stmt.step))
        if step == 0:
            raise self.error(stmt.span, "range() step cannot be 0")
        # len(range(...)) raises OverflowError past 2**63 - 1 (range(-2**62, 2**62)): count
        # it in Python's unbounded ints instead.
        count = max(0, (stop - start + step - (1 if step > 0 else -1)) // step)
        if count * multiplier > self.limits.max_loop_iterations:
            raise self.error(
                stmt.span,
                f"this loop would run {count * multiplier:,} times; the limit is "
                f"{self.limits.max_loop_iterations:,} iterations (max_loop_iterations)",
                "too_large",
                limit="max_loop_iterations",
            )
        for i in range(start, stop, step):
            self.loop_env[stmt.var] = i
            self.block(stmt.body, multiplier * max(count, 1))
        self.loop_env.pop(stmt.var, None)

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
            key = tuple(self.key_part(k, e.span) for k in e.key)
            return self.apply(ops.Index(key), (self.value(e.value),), e.span)
        if isinstance(e, ir.Call):
            return self.call(e, leaf_name)
        if isinstance(e, ir.Labels):
            return LabelValue(e.value)
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
            result = self.apply(BINARY_OPS[link.op](), (result, right), link.span)
        return result

    def value(self, e: ir.Expr) -> Value:
        node = self.expr(e)
        if isinstance(node, LabelValue):
            span = getattr(e, "span", None)
            raise self.error(
                span,
                "these are class labels for cross_entropy; they cannot also be used as a value",
                "labels",
            )
        return node

    def name(self, e: ir.Name) -> Value | LabelValue:
        if e.id in self.loop_env:
            return self.new_node(np.float64(self.loop_env[e.id]), e.span, kind="const")
        found = self.env.get(e.id)
        if found is not None:
            return found
        if e.id in self.program.free:
            if e.id in self.program.label_names:
                found = LabelValue(self.given_labels(e.id))
            else:
                value = self.given_value(e.id) if e.id in self.values else np.float64(1.0)
                found = self.new_node(value, e.span, kind="leaf", name=e.id)
            self.env[e.id] = found
            return found
        raise self.error(e.span, f"'{e.id}' is used before it is assigned", "unbound")

    def call(self, e: ir.Call, leaf_name: str | None) -> Value | LabelValue:
        f = e.func
        if f in UNARY_OPS:
            return self.apply(UNARY_OPS[f](), (self.value(e.args[0]),), e.span)  # type: ignore[arg-type]
        if f in BINARY_OPS:
            args = tuple(self.value(a) for a in e.args)  # type: ignore[arg-type]
            return self.apply(BINARY_OPS[f](), args, e.span)
        kwargs = dict(e.kwargs)
        if f in ("sum", "mean"):
            op: ops.Op = (ops.Sum if f == "sum" else ops.Mean)(
                self.axis(kwargs.get("axis")), bool(kwargs.get("keepdims", False))
            )
            return self.apply(op, (self.value(e.args[0]),), e.span)  # type: ignore[arg-type]
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
        """grad(L, x): ∂L/∂x built as graph nodes by the ops' own rules (engine/autograd/higher.py), so
        it can be differentiated again. Every node it makes is placed at the call."""
        from engine.autograd.higher import describe, grad

        output = self.value(e.args[0])  # type: ignore[arg-type]
        wrt = self.value(e.args[1])  # type: ignore[arg-type]
        if not wrt.requires_grad:
            raise self.error(
                e.args[1].span,
                "grad(L, x): x is a constant here, so it has "  # type: ignore[union-attr]
                "no gradient; use a leaf or a value computed from one",
                "arguments",
            )
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
                e.span,
                f"grad(…): {err.message}",
                err.code,
                limit=limit_named(err.message) if err.code == "too_large" else None,
            ) from None
        for node in made:
            self.count_node(e.span)
            self.check_elements(node.data.size, e.span)
            if not np.isfinite(node.data).all():
                raise self.error(e.span, "grad(…) gives a value that is not finite", "non_finite")
            self.total_elements += node.data.size
            self.place(node, e.span)
            node.text = describe(node) if node.op is not None else None
        self.grads_built.append(
            {"output": output, "wrt": wrt, "result": result, "nodes": made, "span": e.span}
        )
        return result

    # --- making nodes ------------------------------------------------------------------------
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

    # --- static ints -------------------------------------------------------------------------
    def static(self, s: ir.Static) -> int:
        if isinstance(s, ir.SInt):
            return s.value
        if isinstance(s, ir.SVar):
            if s.name not in self.loop_env:
                raise self.error(s.span, f"'{s.name}' only exists inside its loop")
            return self.loop_env[s.name]
        a, b = self.static(s.left), self.static(s.right)
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
        return tuple(self.static(p) for p in parts)

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


def to_plain(value: Any) -> Any:
    array = np.asarray(value, dtype=np.float64)
    return float(array) if array.ndim == 0 else array.tolist()
