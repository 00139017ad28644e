"""The interpreter: a program's statements run in order over Python's own syntax tree, on live
values, as eager PyTorch runs them (spec/language.md, "A program runs the way PyTorch runs it").

One table maps each statement class to its handler (statements.py), one each expression class
(expressions.py); a class in neither is refused at its position (deny by default). Every step
is metered before its work (`Meter`): statements, loop turns, calls, the graph's nodes and
elements, every op run forward or backward in any pass, printing, and the request's deadline.
Graph nodes are made here (`op`, `constant`, `leaf`), each after the limits it could break are
checked; backward passes are recorded by engine.tracing.passes.
"""

from __future__ import annotations

import ast
import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import OpError, shape_text
from engine.autograd.value import Span, Value
from engine.errors import Msg, ProgramError, fail
from engine.language import expressions, statements
from engine.language.libraries import Library
from engine.language.scan import Scan
from engine.language.source import Source, refusal
from engine.language.values import (
    Array,
    Grad,
    Ints,
    Pending,
    Scope,
    SetItems,
    describe,
    flat,
    is_number,
)
from engine.limits import Limits, check_deadline
from engine.tracing.passes import Passes

_F64 = np.float64


class Interpreter:
    """One run of one program: its names, its graph, its passes and what it printed."""

    def __init__(
        self,
        source: Source,
        scan: Scan,
        values: dict[str, Any],
        limits: Limits,
        options: Any,
        library: Library,
    ) -> None:
        self.src, self.scan, self.values, self.limits = source, scan, values, limits
        self.library = library
        self.torch = scan.torch
        self.statements, self.expressions = statements.STATEMENTS, expressions.EXPRESSIONS
        self.env: dict[str, Any] = {}
        self.scope: Scope | None = None
        self.calls: list[Any] = []  # the closures running, outermost first
        self.loops = 0  # loops open around the statement running (break/continue)
        self.grad_enabled = True
        self.rng: np.random.Generator = np.random.default_rng(0)
        self.library_state: dict[str, Any] = {}  # seeded generators, open tapes: engine/library
        self.nodes: list[Value] = []
        self.registered: set[int] = set()
        self.pending: list[tuple[str, Pending]] = []
        self.elements = 0
        self.spans: dict[int, Span] = {}
        self.printed: list[dict[str, Any]] = []
        self.print_chars = 0
        self.print_cut = False
        self.displays: list[Any] = []
        self.free: list[dict[str, Any]] = []
        self.output: Any = None  # the last value given at the program's level
        self.output_alias: str | None = None
        self.last_value: tuple[Any, Any] | None = None  # the last statement's value and node
        self.last_printed: Value | None = None
        self.warnings: list[dict[str, Any]] = []
        self.counted = {"statements": 0, "turns": 0, "ops": 0, "work": 0}
        self.passes = Passes(self, options)

    # --- running --------------------------------------------------------------------------
    def run(self) -> None:
        for line in self.src.magics:  # a notebook's magic: accepted, it does nothing here
            text = self.src.lines[line - 1].strip()
            span = Span(line, 1, line, len(self.src.lines[line - 1]) + 1)
            self.warn("magic_ignored", span, name=text[:60])
        body = self.src.tree.body
        if not body:
            raise fail("no_statements", Span(1, 1, 1, 1), code="empty")
        last = body[-1]
        for stmt in body:
            self.statement(stmt, last=stmt is last)

    def block(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.statement(stmt)

    def statement(self, node: ast.stmt, last: bool = False) -> None:
        self.count("statements", node)
        handler = self.statements.get(type(node))
        if handler is None:
            raise self.refuse(node)
        handler(self, node, last) if last else handler(self, node)

    def eval(self, node: ast.AST) -> Any:
        handler = self.expressions.get(type(node))
        if handler is None:
            raise self.refuse(node)
        return handler(self, node)

    # --- the meter --------------------------------------------------------------------------
    def count(self, what: str, node: Any, n: int = 1) -> None:
        """Charge `n` of `what` (statements, turns, ops, work) before doing it; the deadline is
        checked with every charge."""
        check_deadline()
        total = self.counted[what] + n
        self.counted[what] = total
        if total > getattr(self.limits, LIMITS[what]):
            raise self.over(LIMITS[what], node, n=total)

    def over(self, limit: str, where: Any, **params: Any) -> ProgramError:
        """The error for a limit passed, the limit's name and value stated."""
        return fail("limit_" + limit, self.where(where), code="too_large", limit=limit,
                    max=getattr(self.limits, limit), **params)  # fmt: skip

    def check_chars(self, n: int, node: Any) -> None:
        """Charge `n` characters of text made (printed, formatted, joined) against
        max_print_chars, before making them."""
        check_deadline()
        self.print_chars += n
        if self.print_chars > self.limits.max_print_chars:
            raise self.over("max_print_chars", node)

    def check_turns(self, n: int, node: Any, alone: int = 0) -> None:
        """A loop of `n` more turns may run (max_loop_iterations counts the turns of all
        innermost loops), and no loop runs more than that alone."""
        total = max(self.counted["turns"] + n, alone)
        if total > self.limits.max_loop_iterations:
            raise self.over("max_loop_iterations", node, n=total)

    def check_items(self, n: int, node: Any) -> None:
        """A list of `n` items may be made (max_list_items)."""
        if n > self.limits.max_list_items:
            raise self.over("max_list_items", node, n=n)

    # --- positions and refusals ---------------------------------------------------------
    def where(self, node: Any) -> Span | None:
        if node is None or isinstance(node, Span):
            return node
        key = id(node)
        span = self.spans.get(key)
        if span is None:
            if not hasattr(node, "lineno"):
                return None
            span = self.spans[key] = self.src.span(node)
        return span

    def error(self, key: str, node: Any, code: str = "invalid", **params: Any) -> ProgramError:
        return fail(key, self.where(node), code=code, **params)

    def refuse(self, node: ast.AST) -> ProgramError:
        return self.error("not_in_language", node, "unsupported", what=refusal(node))

    # --- names ----------------------------------------------------------------------------
    def set_var(self, name: str, value: Any, node: Any = None) -> None:
        if name.startswith("__"):
            raise self.error("dunder_name", node, "unsupported", name=name[:40])
        (self.scope.vars if self.scope is not None else self.env)[name] = value

    # --- values as tensors ----------------------------------------------------------------
    def tensor(self, v: Any, node: Any, what: Any = "") -> Value:
        """v as one tensor node of the graph: a number, a list of numbers, whole numbers or a
        grad become a constant; a pending leaf joins the graph; anything else is refused."""
        if type(v) is Value:
            if v.seq not in self.registered and self.grad_enabled:
                self.register(v, node)
            return v
        if isinstance(v, Pending):
            return self.materialize(v, node)
        if is_number(v) and not isinstance(v, bool):
            return self.constant(_F64(v), node)
        if isinstance(v, bool):
            return self.constant(_F64(float(v)), node)
        if isinstance(v, Ints | Array):
            return self.constant(v.data.astype(np.float64), node)
        if isinstance(v, Grad):
            g = v.owner.grad
            if g is None and not self.torch:
                g = np.zeros(v.owner.data.shape)  # no torch, no None: zeros until a pass
            if g is None:
                raise self.error("grad_is_none", node, "invalid")
            return self.constant(np.array(g, dtype=np.float64), node)
        if isinstance(v, list | tuple) and v and all(is_number(x) for x in flat(v, 2)):
            return self.constant(self.array_of(v, node), node)
        raise self.not_a_tensor(v, node, what)

    def not_a_tensor(self, v: Any, node: Any, what: Any = "") -> ProgramError:
        what = what or Msg("what_this", {})
        if isinstance(v, list | tuple):
            return self.error("list_not_tensor", node, "list", what=what, v=describe(v))
        if v is None:
            return self.error("none_not_tensor", node, "invalid", what=what)
        return self.error("not_a_tensor", node, "invalid", what=what, v=describe(v))

    def array_of(self, v: Any, node: Any) -> np.ndarray:
        """A nested list of numbers as a float64 array, within the limits."""
        if isinstance(v, SetItems):
            raise self.error("set_not_tensor", node, "invalid")
        try:
            a = np.array(v, dtype=np.float64)
        except (ValueError, TypeError):
            raise self.error("ragged_list", node, "bad_list") from None
        if a.ndim > ops.MAX_RANK:
            raise self.error("rank_too_high", node, "shape", max=ops.MAX_RANK)
        self.check_shape(a.shape, node)
        if not np.isfinite(a).all():
            raise self.error("number_too_large", node, "non_finite")
        return a

    def materialize(self, p: Pending, where: Any = None) -> Value:
        """A pending leaf at its first use as a value: its node joins the graph."""
        if p.labels:
            raise self.error("labels_as_value", where, "labels")
        node = p.node
        if node.seq not in self.registered:
            self.register(node, node.span)
        return node

    def whole(self, v: Any, node: Any) -> int:
        """v where a whole number is needed (a size, an index, range's bounds): an int, a
        name bound to one, or a one-element tensor of whole numbers."""
        if isinstance(v, Pending) and isinstance(v.raw, int) and not isinstance(v.raw, bool):
            v.read_as_number = True
            return v.raw
        if isinstance(v, Ints) and v.data.size == 1:
            return int(v.data.reshape(()))
        if isinstance(v, int | np.integer):
            if abs(int(v)) > 2**62:
                raise self.error("whole_too_large", node, "too_large")
            return int(v)
        if isinstance(v, float):
            text = self.src.segment(self.where(node)) if self.where(node) else ""
            if text and text != repr(v) and text != str(v):  # `2. * math.pi`: its value said
                raise self.error("not_whole_fraction", node, "static", text=text, v=repr(v))
            raise self.error("not_whole", node, "static", v=Msg("describe_fraction", {}))
        raise self.error("not_whole", node, "static", v=describe(v))

    # --- graph nodes ------------------------------------------------------------------------
    def register(self, node: Value, where: Any) -> None:
        """`node` joins the graph: counted against max_nodes and max_total_elements, placed at
        `where` with its source text, in the pass running."""
        check_deadline()
        if len(self.registered) >= self.limits.max_nodes and not self.passes.make_room():
            raise self.over("max_nodes", where)
        size = node.data.size
        if self.elements + size > self.limits.max_total_elements and not self.passes.make_room():
            raise self.over("max_total_elements", where)
        self.elements += size
        span = self.where(where)
        if span is not None and node.span is None:
            node.span = span
            node.text = self.src.segment(span)
        self.registered.add(node.seq)
        self.nodes.append(node)
        self.passes.joined(node)

    def constant(self, data: Any, where: Any, name: str | None = None) -> Value:
        node = Value(data, name=name, kind="const")
        if self.grad_enabled:
            self.register(node, where)
        return node

    def leaf(self, data: Any, where: Any, name: str | None = None, pending: bool = False) -> Any:
        """A parameter. `pending`: bound to a name, it joins the graph at its first use."""
        node = Value(data, name=name, kind="leaf")
        span = self.where(where)
        if pending:
            node.span, node.text = span, None if span is None else self.src.segment(span)
            p = Pending(node, None)
            self.pending.append((name or "", p))
            return p
        self.register(node, where)
        return node

    def check_shape(self, shape: tuple[int, ...], where: Any) -> None:
        """May a value of `shape` be made? Its rank and elements (an empty value charged as
        ops.footprint counts it), before NumPy is asked to make it."""
        if len(shape) > ops.MAX_RANK:
            raise fail("rank_message", self.where(where), code="shape", n=len(shape),
                       max=ops.MAX_RANK)  # fmt: skip
        size = math.prod(shape)
        charged = size or ops.footprint(shape)
        if charged > self.limits.max_tensor_elements:
            raise self.over(
                "max_tensor_elements", where, what=Msg("what_this_value", {}), n=charged
            )

    def op(self, op: ops.Op, inputs: tuple[Any, ...], where: Any, parts: Any = None) -> Value:
        """Run `op` forward on `inputs` (each made a tensor, a number a constant at `parts`,
        its own text): a node of the graph, or under no_grad a plain value. Its result's size
        and inside are checked before it is computed."""
        node = self.where(where)
        if parts is None:
            values = tuple(self.tensor(x, where) for x in inputs)
        else:
            values = tuple(self.tensor(x, p) for x, p in zip(inputs, parts, strict=True))
        self.count("ops", where)
        shapes = tuple(x.data.shape for x in values)
        try:
            if not op.elementwise or any(shapes):
                shape = op.out_shape(*shapes)
                if shape is not None:
                    self.check_shape(shape, where)
                if type(op).work_elements is not ops.Op.work_elements:
                    work = op.work_elements(*shapes)
                    if work > self.limits.max_tensor_elements:
                        inside = Msg(
                            "what_inside",
                            {"op": op.name, "shapes": ", ".join(map(shape_text, shapes))},
                        )
                        raise self.over("max_tensor_elements", where, what=inside, n=work)
            result = ops.apply(op, *values)
        except OpError as err:
            raise self.op_error(err, where) from None
        self.count("work", where, result.data.size)
        if not self.grad_enabled:
            return Value(result.data, kind="const")
        self.register(result, node)
        return result

    def op_error(self, err: OpError, where: Any) -> ProgramError:
        """An op's error at the text that wrote it (`log(0) gives an infinite value`: the
        program's text in place of the op's name), keyed as the op keyed it."""
        span = self.where(where)
        params = dict(err.msg.params)
        text = self.src.segment(span)
        if "text" in params and text:
            params["text"] = text
        return fail(err.msg.key, span, code=err.code, limit=err.limit, **params)

    # --- what the statements share ------------------------------------------------------
    @contextlib.contextmanager
    def no_grad(self) -> Iterator[None]:
        """Around an update the interpreter makes itself: nothing in it is recorded."""
        before, self.grad_enabled = self.grad_enabled, False
        try:
            yield
        finally:
            self.grad_enabled = before

    def emit(self, text: str, node: Any, end: str = "\n") -> None:
        """A printed line (or more), at its statement's line, after the passes so far."""
        span = self.where(node)
        line = span.line if span is not None else None
        if self.printed and self.printed[-1].get("open"):
            last = self.printed[-1]
            last["text"] += text
        else:
            done = len(self.passes.passes)
            last = {"line": line, "text": text, "pass": done - 1 if done else None}
            self.printed.append(last)
        last["open"] = not end.endswith("\n")
        if end.rstrip("\n"):
            last["text"] += end.rstrip("\n")

    def warn(self, key: str, node: Any, **params: Any) -> None:
        from engine.words.messages import say

        span = self.where(node)
        entry = {"message": say(key, "en", params), "key": key, "params": params}
        self.warnings.append({**entry, **(span.to_dict() if span else {})})

    def drop_since(self, mark: int, keep: Value | None = None) -> None:
        """The nodes made since `mark` leave the graph (a leaf made of constants keeps none
        of them), but `keep`."""
        gone = [n for n in self.nodes[mark:] if n is not keep]
        if not gone:
            return
        del self.nodes[mark:]
        if keep is not None and keep.seq in self.registered:
            self.nodes.append(keep)
        for n in gone:
            self.registered.discard(n.seq)
            self.elements -= n.data.size
            self.passes.pass_of.pop(n.seq, None)
            if n in self.passes.leaves:
                self.passes.leaves.remove(n)


# What the meter counts, and the limit of each.
LIMITS = {"statements": "max_statements", "turns": "max_loop_iterations", "ops": "max_ops",
          "work": "max_work"}  # fmt: skip
