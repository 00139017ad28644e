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
import math
from typing import Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import OpError, shape_text
from engine.autograd.value import Span, Value
from engine.errors import Msg, ProgramError, fail
from engine.language.scan import Scan
from engine.language.source import Source
from engine.language.values import Grad, Ints, Pending, Scope, describe, is_number, length
from engine.limits import Limits, check_deadline
from engine.tracing.passes import Passes

_F64 = np.float64


class Interpreter:
    """One run of one program: its names, its graph, its passes and what it printed."""

    def __init__(
        self, source: Source, scan: Scan, values: dict[str, Any], limits: Limits, options: Any
    ) -> None:
        from engine.language import expressions, statements

        self.src, self.scan, self.values, self.limits = source, scan, values, limits
        self.torch = scan.torch
        self.statements, self.expressions = statements.STATEMENTS, expressions.EXPRESSIONS
        self.env: dict[str, Any] = {}
        self.scope: Scope | None = None
        self.calls: list[Any] = []  # the closures running, outermost first
        self.loops = 0  # loops open around the statement running (break/continue)
        self.grad_enabled = True
        self.rng = np.random.default_rng(0)
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
        limit = LIMITS[what]
        if total > getattr(self.limits, limit):
            raise fail(
                "limit_" + limit, self.where(node), code="too_large", limit=limit,
                max=getattr(self.limits, limit), n=total,
            )  # fmt: skip

    def check_chars(self, n: int, node: Any) -> None:
        """Charge `n` characters of text made (printed, formatted, joined) against
        max_print_chars, before making them."""
        check_deadline()
        self.print_chars += n
        if self.print_chars > self.limits.max_print_chars:
            limit = self.limits.max_print_chars
            raise fail(
                "limit_max_print_chars", self.where(node), code="too_large",
                limit="max_print_chars", max=limit,
            )  # fmt: skip

    def check_turns(self, n: int, node: Any, alone: int = 0) -> None:
        """A loop of `n` more turns may run (max_loop_iterations counts the turns of all
        innermost loops), and no loop runs more than that alone."""
        total = max(self.counted["turns"] + n, alone)
        if total > self.limits.max_loop_iterations:
            raise fail(
                "limit_max_loop_iterations", self.where(node), code="too_large",
                limit="max_loop_iterations", max=self.limits.max_loop_iterations, n=total,
            )  # fmt: skip

    def check_items(self, n: int, node: Any) -> None:
        """A list of `n` items may be made (max_list_items)."""
        if n > self.limits.max_list_items:
            raise fail(
                "limit_max_list_items", self.where(node), code="too_large",
                limit="max_list_items", max=self.limits.max_list_items, n=n,
            )  # fmt: skip

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
        kind = CONSTRUCT_NAMES.get(type(node))
        if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
            kind = "bytes"
        what = Msg(f"construct_{kind}" if kind else "construct_other",
                   {"kind": type(node).__name__})  # fmt: skip
        return self.error("not_in_language", node, "unsupported", what=what)

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
        if isinstance(v, Ints):
            return self.constant(v.data.astype(np.float64), node)
        if isinstance(v, Grad):
            g = v.owner.grad
            if g is None and not self.torch:
                g = np.zeros(v.owner.data.shape)  # no torch, no None: zeros until a pass
            if g is None:
                raise self.error("grad_is_none", node, "invalid")
            return self.constant(np.array(g, dtype=np.float64), node)
        if isinstance(v, list | tuple) and v and all(is_number(x) for x in _flat(v, 2)):
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
            raise fail(
                "limit_max_nodes", self.where(where), code="too_large", limit="max_nodes",
                max=self.limits.max_nodes,
            )  # fmt: skip
        size = node.data.size
        if self.elements + size > self.limits.max_total_elements and not self.passes.make_room():
            raise self.over_total(where)
        self.elements += size
        span = self.where(where)
        if span is not None and node.span is None:
            node.span = span
            node.text = self.src.segment(span)
        self.registered.add(node.seq)
        self.nodes.append(node)
        self.passes.joined(node)

    def over_total(self, where: Any) -> ProgramError:
        return fail(
            "limit_max_total_elements", self.where(where), code="too_large",
            limit="max_total_elements", max=self.limits.max_total_elements,
        )  # fmt: skip

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
            raise fail(
                "limit_max_tensor_elements", self.where(where), code="too_large",
                limit="max_tensor_elements", what=Msg("what_this_value", {}), n=charged,
                max=self.limits.max_tensor_elements,
            )  # fmt: skip

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
                        raise self.error("limit_max_tensor_elements", where, "too_large",
                                         limit="max_tensor_elements", what=inside,
                                         n=work, max=self.limits.max_tensor_elements)  # fmt: skip
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
        text = self.src.segment(span) if span is not None else ""
        if "text" in params and text:
            params["text"] = text
        return fail(err.msg.key, span, code=err.code, limit=err.limit, **params)

    # --- what the statements share ------------------------------------------------------
    def free_leaf(self, name: str, node: Any) -> Any:
        """A free name at its first use: a leaf with the value given (1.0 by default), or the
        class labels given for a name used as labels."""
        from engine.language.given import given_labels, given_value

        if name in self.scan.labels:
            labels = given_labels(name, self.values, self.limits)
            value: Any = list(labels) if isinstance(labels, tuple) else labels
        else:
            given = name in self.values
            data = given_value(name, self.values, self.limits) if given else _F64(1.0)
            value = self.leaf(np.array(data, dtype=np.float64), node, name=name)
        self.env[name] = value
        return value

    def items(self, v: Any, node: Any) -> list[Any]:
        """The items of what a program unpacks or joins: a list, a tuple, a range, a tensor's
        rows."""
        if isinstance(v, list | tuple):
            return list(v)
        if isinstance(v, range):
            self.check_items(length(v), node)
            return list(v)
        if isinstance(v, Pending) and isinstance(v.raw, list | tuple):
            v.read_as_number = True
            return list(v.raw)
        return list(self.iterate(v, node))

    def iterate(self, v: Any, node: Any) -> Any:
        """What a loop runs over, turn by turn (a range is never made whole)."""
        if isinstance(v, list | tuple | range):
            return v
        if (
            isinstance(v, Pending)
            and isinstance(v.raw, list | tuple)
            and v.node.seq not in self.registered
        ):
            v.read_as_number = True  # a list written out and looped over: Python's numbers
            return v.raw
        if isinstance(v, Ints):
            self.check_items(v.data.shape[0] if v.data.ndim else 0, node)
            return [Ints(r) if r.ndim else int(r) for r in v.data]
        if isinstance(v, Value | Pending | Grad):
            t = self.tensor(v, node)
            if t.data.ndim == 0:
                raise self.error("loop_over_scalar", node, "shape")
            return (self.op(ops.Index((i,)), (t,), node) for i in range(t.data.shape[0]))
        raise self.error("not_iterable", node, "shape", v=describe(v))

    def no_grad(self) -> Any:
        return _NoGrad(self)

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

    def set_output(self, value: Any, name: str, alias: bool, anonymous: bool = False) -> None:
        """The last value given at the program's level: the implicit pass's output."""
        if isinstance(value, Pending | tuple):  # a pending leaf, or (number, node, name)
            self.output, self.output_alias = value, None
            return
        self.output = value
        self.output_alias = name if alias or value.name != name else None
        if anonymous:
            self.output_alias = None
            if value.name is None and value.kind != "leaf":
                value.name = "out"

    # --- the end --------------------------------------------------------------------------
    def finish(self) -> None:
        """Leaves bound but never used as a value (`x = 2` and nothing more) are in the graph
        too, unused; those read only as numbers (`n = 3` in `range(n)`) are not. A program
        with no backward call gets its implicit pass on the last value it gave."""
        for _, p in self.pending:
            if p.node.seq not in self.registered and not p.read_as_number:
                self.register(p.node, p.node.span)
        if not self.passes.passes:
            if self.last_value is not None:
                node, value = self.last_value
                if is_number(value) and not isinstance(value, bool):
                    self.output = self.constant(_F64(value), node)  # a number: a constant
                elif not isinstance(value, Value | Pending):
                    raise self.output_error(value, node)
            out: Any = self.output if self.output is not None else self.last_printed
            if isinstance(out, Pending):
                out = self.materialize(out)
            if isinstance(out, tuple):  # `y = i` in a loop: a number, the output a constant
                number, where, name = out
                out = self.constant(_F64(number), where, name=name)
                out.text = repr(float(number))
            if out is None:
                raise fail("no_output", Span(1, 1, 1, 1), code="no_output")
            if self.output_alias is not None and out.kind == "op":
                out.name = self.output_alias  # `L = h` as the last word: the output is L
            if out.seq not in self.registered:
                self.register(out, out.span)
            self.passes.implicit(out)
        self.nodes.sort(key=lambda n: n.seq)


def _output_error(it: Interpreter, value: Any, node: Any) -> ProgramError:
    """Why the last statement's value cannot be the output."""
    from engine.language.values import Function

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


Interpreter.output_error = _output_error  # type: ignore[attr-defined]


class _NoGrad:
    """`with it.no_grad():` around an update the interpreter makes itself."""

    def __init__(self, it: Interpreter) -> None:
        self.it = it

    def __enter__(self) -> None:
        self.before = self.it.grad_enabled
        self.it.grad_enabled = False

    def __exit__(self, *exc: Any) -> None:
        self.it.grad_enabled = self.before


def _flat(v: Any, depth: int) -> list[Any]:
    """The items of a nested list, `depth` levels down (a check needs only a few)."""
    out: list[Any] = []
    for x in v:
        if isinstance(x, list | tuple) and depth > 0:
            out.extend(_flat(x, depth - 1) if x else [None])
        elif isinstance(x, list | tuple):
            continue
        else:
            out.append(x)
    return out


LIMITS = {
    "statements": "max_statements",
    "turns": "max_loop_iterations",
    "ops": "max_ops",
    "work": "max_work",
}

# What students might write, named in words for the error message.
CONSTRUCT_NAMES = {
    ast.Import: "import", ast.ImportFrom: "import", ast.Lambda: "lambda",
    ast.SetComp: "set_comprehension", ast.DictComp: "dict_comprehension",
    ast.FunctionDef: "def", ast.AsyncFunctionDef: "async_def", ast.AsyncFor: "async_for",
    ast.AsyncWith: "async_with", ast.ClassDef: "class", ast.With: "with", ast.Try: "try",
    ast.Delete: "del", ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Raise: "raise",
    ast.Dict: "dict", ast.NamedExpr: "walrus", ast.Await: "await", ast.Yield: "yield",
    ast.YieldFrom: "yield", ast.Starred: "starred", ast.AnnAssign: "annotated",
    ast.Match: "match", ast.TryStar: "try",
}  # fmt: skip
