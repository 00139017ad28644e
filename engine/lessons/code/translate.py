"""The program's statements, one by one, as the PyTorch script's lines or the body of JAX's
`def f(params):` (the code lesson): loops stay loops, defs stay defs, conditions stay
conditions, each backward() stays where it is; a name bound to a literal that the run made a
parameter is written as one (`torch.tensor(2.0, requires_grad=True)`; in JAX, one of
`params`). PyTorch's code keeps the program's prints, and prints what a notebook line showed;
JAX's leaves them out. The named results and their grad_fn are kept here for the lesson to
say after the statements (engine/lessons/code/__init__.py).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from engine.autograd.value import Value
from engine.language.values import Pending
from engine.lessons.code.grad_fns import grad_fn_of
from engine.lessons.code.made import MADE, made, made_text, numpy_text
from engine.lessons.code.text import BINARY, IFEXP, floats_text, literal
from engine.lessons.code.writer import Context, Writer
from engine.library.names import is_effect

IDENTIFIER = re.compile(r"[^\W\d]\w*")
# The library's functions that make a tensor (`randn`, `zeros`, `tensor`, `arange`, …).
CONSTRUCTORS = frozenset(("library", k) for k, (spell, _) in MADE.items() if spell is made)
# Calls that only PyTorch's code writes, and what JAX's leaves out (a parameter is one of
# `params` there already).
JAX_SKIPS = frozenset({"requires_grad_", "retain_grad", "print_settings", "default_dtype"})


def assignment_counts(body: list[ast.stmt], augmented: bool = True) -> dict[str, int]:
    """How often each name is bound at the program's level, up to 2 (once, or more): a loop's
    body counts twice (it may run more than once); a def's names are its own. Without
    `augmented`, `w -= …` is not counted (under no_grad it updates w in place, and
    otherwise w is no leaf afterwards)."""
    counts: dict[str, int] = {}

    def bound(target: ast.AST, times: int) -> None:
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                counts[n.id] = min(2, counts.get(n.id, 0) + times)

    todo: list[tuple[ast.stmt, int]] = [(st, 1) for st in body]
    while todo:
        st, times = todo.pop()
        if isinstance(st, ast.Assign):
            for t in st.targets:
                bound(t, times)
        elif isinstance(st, ast.AugAssign) and augmented:
            bound(st.target, times)
        elif isinstance(st, ast.FunctionDef):
            counts[st.name] = min(2, counts.get(st.name, 0) + times)
            continue
        if isinstance(st, ast.For | ast.While):
            if isinstance(st, ast.For):
                bound(st.target, 2)
            todo += [(s, 2) for s in st.body]
        elif isinstance(st, ast.If | ast.With):
            todo += [(s, times) for s in [*st.body, *getattr(st, "orelse", [])]]
    return counts


class Translation:
    """One framework's lines for the program, written as its statements are walked."""

    def __init__(self, ctx: Context, flavour: str, out: bool, displayed: set[int]) -> None:
        self.w = Writer(ctx, flavour)
        self.ctx, self.torch = ctx, flavour == "torch"
        self.tree = ctx.src.tree
        self.out = out  # the bare last expression is bound to `out`
        self.displayed = displayed  # the lines where the run showed a notebook line's value
        self.assigned, self.bound = ctx.counts  # `bound`: without x += e (for the leaves)
        self.lines: list[str] = []
        self.params: list[tuple[str, str]] = []  # JAX: (name in the code, its value's text)
        self.named: list[tuple[str, str]] = []  # (name in the code, grad_fn) of named results
        self.stop: ast.Expr | None = None  # JAX: the one backward call, where `f` returns
        self.preamble: list[str] = []  # JAX: what runs before its parameters are made
        self.stopped = False

    def emit(self, indent: str, text: str) -> None:
        self.lines.append(indent + text)

    def program(self) -> None:
        self.block(self.tree.body, "", top=True, module=True)

    def block(self, body: list[ast.stmt], indent: str, top: bool = False,
              module: bool = True, no_grad: bool = False) -> None:  # fmt: skip
        before = len(self.lines)
        for st in body:
            if self.stopped:
                return
            handler: Any = STATEMENTS.get(type(st))
            if handler is None:
                raise self.w.refuse(st)
            handler(self, st, indent, top, module, no_grad)
        if len(self.lines) == before and indent:
            self.emit(indent, "pass")

    # --- statements ---------------------------------------------------------------------------
    def expression(self, st: ast.Expr, indent: str, top: bool, module: bool, _: bool) -> None:
        v, w = st.value, self.w
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return  # a docstring, or a string left as a comment
        if top and st is self.tree.body[-1] and self.out:
            self.output(st, indent)
            return
        kind, what = self.ctx.callee(v.func) if isinstance(v, ast.Call) else ("", "")
        if what == "seed" and kind in ("library", "builtin") and isinstance(v, ast.Call):
            seed = f"rng = np.random.default_rng({w.expr(v.args[0]) if v.args else '0'})"
            if self.torch:
                self.emit(indent, seed)
            elif self.params or not top:  # JAX draws its parameters first, at its top
                raise w.refuse(st)
            else:
                self.preamble.append(seed)
        elif what in JAX_SKIPS and (kind == "library" or not self.torch):
            pass  # settings that change nothing here; in JAX, parameters are given already
        elif kind == "builtin" and what == "print":
            if self.torch:  # kept (without torch, the lesson runs the code to say what it prints)
                self.emit(indent, w.expr(v))
        elif self.stop is st:
            self.stopped = True
        elif is_effect(v) or (st.lineno not in self.displayed and isinstance(v, ast.Call)):
            self.emit(indent, w.expr(v))  # made for what it does
        elif st.lineno in self.displayed and self.torch:
            self.emit(indent, f"print({w.expr(v)})")  # a notebook line shows its value

    def output(self, st: ast.Expr, indent: str) -> None:
        """The bare last expression, bound to `out`; of a comparison (shown, as a notebook
        shows it), the left side is the output."""
        v, w = st.value, self.w
        if not isinstance(v, ast.Compare):
            self.emit(indent, f"out = {w.expr(v)}")
            self.name_result("out", v)
            return
        self.emit(indent, f"out = {w.expr(v.left)}")
        self.name_result("out", v.left)
        if st.lineno in self.displayed and self.torch:
            shown = ast.copy_location(
                ast.Compare(ast.Name("out", ast.Load()), v.ops, v.comparators), v
            )
            self.emit(indent, f"print({w.expr(shown)})")

    def assign(self, st: ast.Assign, indent: str, top: bool, module: bool, _: bool) -> None:
        w, scan = self.w, self.ctx.scan
        first, value = st.targets[0], st.value
        if isinstance(first, ast.Attribute) and first.attr == "requires_grad" and not self.torch:
            return
        single = isinstance(first, ast.Name) and all(isinstance(t, ast.Name) for t in st.targets)
        if single and module and self.leafy(first.id, value):  # type: ignore[attr-defined]
            text = self.literal_binding(first.id, value)  # type: ignore[attr-defined]
        elif (isinstance(first, ast.Tuple) and isinstance(value, ast.Tuple) and module
              and not scan.torch and len(first.elts) == len(value.elts)):  # fmt: skip
            parts = [
                self.literal_binding(t.id, e) if isinstance(t, ast.Name) and self.leafy(t.id, e)
                else w.expr(e, IFEXP)
                for t, e in zip(first.elts, value.elts, strict=True)
            ]  # fmt: skip
            text = ", ".join(parts)
        else:
            text = w.expr(value)
        targets = " = ".join(w.target(t) for t in st.targets)
        once = top and isinstance(first, ast.Name) and len(st.targets) == 1
        if once and not self.torch and self.is_param(first.id):  # type: ignore[attr-defined]
            value_text = self.param_text(first.id, text.split("  #")[0])  # type: ignore[attr-defined]
            self.params.append((targets, value_text))
            text = f'params["{targets}"]'
        self.emit(indent, f"{targets} = {text}")
        if once:
            self.name_result(targets, value)

    def param_text(self, name: str, text: str) -> str:
        """A parameter's value at JAX's top, where the program's names are not defined yet:
        one that reads them (`zeros(*x.shape)`) is written as the numbers the run made."""
        if not set(IDENTIFIER.findall(text)) & set(self.ctx.names.values()):
            return text
        v = self.ctx.facts.env[name]
        node = v.node if isinstance(v, Pending) else v
        return f"jnp.array({floats_text(node.data.tolist())})"

    def is_param(self, name: str) -> bool:
        """A leaf named once at the program's level: one of JAX's `params`."""
        v = self.ctx.facts.env.get(name)
        node = v.node if isinstance(v, Pending) else v
        return (
            isinstance(node, Value)
            and node.kind == "leaf"
            and node.seq in self.ctx.facts.registered
            and self.assigned.get(name, 0) <= 1
        )

    def leafy(self, name: str, value: ast.expr) -> bool:
        """Does the language read `name = value` as a literal binding (a parameter, or the
        number a literal is), as engine/language/statements.assign does?"""
        scan = self.ctx.scan
        return (
            (not scan.torch or name in scan.leaf_names)
            and name not in scan.numbers
            and scan.is_constant(value)
        )

    def literal_binding(self, name: str, value: ast.expr) -> str:
        """`x = 2`, `W = randn(2, 3)`, `t = [0, 2]`, as what the run made of it."""
        w, facts = self.w, self.ctx.facts
        made = facts.binding(value)
        if made is None:  # not a parameter (`rng = default_rng(2)`, `flag = True`), or not run
            made = "leaf" if literal(value) is not None or self.makes_tensor(value) else "number"
        raw = facts.raw(value)
        if made == "labels":
            lit = raw if raw is not None else literal(value)
            text = f"{'torch.tensor' if self.torch else 'jnp.array'}({lit!r})"
            return text + ("  # class labels" if self.torch else "")
        if made == "number":
            return w.expr(value)
        if self.ctx.scan.torch:  # PyTorch's own: a leaf once the program says so
            return f"torch.tensor({floats_text(raw)})" if raw is not None else w.expr(value)
        return self.leaf_text(value, raw)

    def leaf_text(self, value: ast.expr, raw: Any) -> str:
        """A parameter with the values the run gave it: numbers written out, a draw of the
        generator, a grid; or a constant computed as gradtrace computed it, then made the
        parameter itself (`W = 0.01 * randn(2, 3)`)."""
        w = self.w
        if isinstance(value, ast.Call) and self.ctx.callee(value.func) in CONSTRUCTORS:
            return made_text(w, value, ", requires_grad=True" if self.torch else "")
        numpy = numpy_text(w, value)
        if numpy is None and raw is not None:
            numpy = floats_text(raw)
        if numpy is not None:
            return (
                f"torch.tensor({numpy}, requires_grad=True)"
                if self.torch
                else f"jnp.array({numpy})"
            )
        return f"({w.expr(value)}).requires_grad_()" if self.torch else w.expr(value)

    def makes_tensor(self, value: ast.expr) -> bool:
        """Is a tensor made in `value` (`0.01 * randn(2, 3)`), by a statement the run did not
        reach? Then the language would have made it a parameter."""
        return any(
            isinstance(n, ast.Call) and self.ctx.callee(n.func) in CONSTRUCTORS
            for n in ast.walk(value)
        )

    def name_result(self, name: str, value: ast.expr) -> None:
        """Say the grad_fn of a result named once at the program's level, where predicted."""
        node = self.ctx.facts.op_at(value)
        if node is None or self.assigned.get(self.original(name), 0) > 1:
            return
        if node.seq in self.ctx.built:
            return  # a gradient built as a graph (grad(y, x)): PyTorch names its nodes otherwise
        predicted = grad_fn_of(node)
        if predicted and self.torch:
            self.named.append((name, predicted))

    def original(self, name: str) -> str:
        return next((k for k, v in self.ctx.names.items() if v == name), name)

    def augmented(self, st: ast.AugAssign, indent: str, top: bool, module: bool,
                  no_grad: bool) -> None:  # fmt: skip
        w, target = self.w, st.target
        symbol = BINARY.get(type(st.op), ("", 0))[0]
        if isinstance(target, ast.Attribute) or (no_grad and isinstance(target, ast.Name)):
            if not self.torch:
                raise w.refuse(st)
            self.emit(indent, f"{w.expr(target)} {symbol}= {w.expr(st.value)}")  # in place
            return
        if not isinstance(target, ast.Name) or not symbol:
            raise w.refuse(st)
        # x += e is x = x + e in the language (a new node); PyTorch's += would change x in place
        load = ast.Name(target.id, ast.Load())
        binop = ast.copy_location(ast.BinOp(ast.copy_location(load, target), st.op, st.value), st)
        self.emit(indent, f"{w.name(target.id)} = {w.expr(binop)}")

    def for_loop(self, st: ast.For, indent: str, top: bool, module: bool, no_grad: bool) -> None:
        self.emit(indent, f"for {self.w.target(st.target)} in {self.w.expr(st.iter)}:")
        self.block(st.body, indent + "    ", module=module, no_grad=no_grad)

    def while_loop(self, st: ast.While, indent: str, top: bool, module: bool,
                   no_grad: bool) -> None:  # fmt: skip
        self.emit(indent, f"while {self.w.expr(st.test)}:")
        self.block(st.body, indent + "    ", module=module, no_grad=no_grad)

    def condition(self, st: ast.If, indent: str, top: bool, module: bool, no_grad: bool,
                  word: str = "if") -> None:  # fmt: skip
        self.emit(indent, f"{word} {self.w.expr(st.test)}:")
        self.block(st.body, indent + "    ", module=module, no_grad=no_grad)
        if len(st.orelse) == 1 and isinstance(st.orelse[0], ast.If):
            self.condition(st.orelse[0], indent, top, module, no_grad, "elif")
        elif st.orelse:
            self.emit(indent, "else:")
            self.block(st.orelse, indent + "    ", module=module, no_grad=no_grad)

    def with_block(self, st: ast.With, indent: str, top: bool, module: bool,
                   no_grad: bool) -> None:  # fmt: skip
        if len(st.items) != 1 or st.items[0].optional_vars is not None or not self.torch:
            raise self.w.refuse(st)
        manager = st.items[0].context_expr
        self.emit(indent, f"with {self.w.expr(manager)}:")
        off = isinstance(manager, ast.Call) and self.ctx.callee(manager.func)[1] == "no_grad"
        self.block(st.body, indent + "    ", module=module, no_grad=off or no_grad)

    def function_def(self, st: ast.FunctionDef, indent: str, top: bool, module: bool,
                     no_grad: bool) -> None:  # fmt: skip
        if st.decorator_list:
            raise self.w.refuse(st.decorator_list[0])
        self.emit(indent, f"def {self.w.name(st.name)}({self.w.parameters(st.args)}):")
        self.block(st.body, indent + "    ", module=False)

    def simple(self, st: ast.stmt, indent: str, top: bool, module: bool, no_grad: bool) -> None:
        """return, break, continue, pass, assert: as they are."""
        w = self.w
        if isinstance(st, ast.Return):
            self.emit(indent, "return" + ("" if st.value is None else " " + w.expr(st.value)))
        elif isinstance(st, ast.Assert):
            msg = "" if st.msg is None else ", " + w.expr(st.msg, IFEXP)
            self.emit(indent, f"assert {w.expr(st.test)}{msg}")
        else:
            self.emit(indent, type(st).__name__.lower())


def nothing(t: Translation, st: ast.stmt, *rest: Any) -> None:
    """Imports: the generated code has its own."""


STATEMENTS = {
    ast.Expr: Translation.expression, ast.Assign: Translation.assign,
    ast.AugAssign: Translation.augmented, ast.For: Translation.for_loop,
    ast.While: Translation.while_loop, ast.If: Translation.condition,
    ast.With: Translation.with_block, ast.FunctionDef: Translation.function_def,
    ast.Return: Translation.simple, ast.Assert: Translation.simple, ast.Break: Translation.simple,
    ast.Continue: Translation.simple, ast.Pass: Translation.simple,
    ast.Import: nothing, ast.ImportFrom: nothing,
}  # fmt: skip


def leaf_bindings(env: dict[str, Any], registered: set[int]) -> dict[int, str]:
    """Leaf seq -> the program name bound to it at the end of the run."""
    found: dict[int, str] = {}
    for name, v in env.items():
        node = v.node if isinstance(v, Pending) else v
        if isinstance(node, Value) and node.kind == "leaf" and node.seq in registered:
            found.setdefault(node.seq, name)
    return found
