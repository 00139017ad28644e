"""The statements a program may run, one handler per syntax class (STATEMENTS); the
interpreter refuses any other class at its position.

Assignments bind names, with the leaf rule of programs that do not import torch (a name bound
to a literal, a constructor or an expression of them is a parameter); `x += e` is `x = x + e`,
except on a tensor inside `with torch.no_grad():`, where it updates it in place (a leaf keeps
its identity across updates). Loops and conditions are decided on the values as they are.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import shape_text
from engine.autograd.value import Value
from engine.errors import Msg
from engine.language.comparisons import compare
from engine.language.expressions import binary, truth
from engine.language.output import set_output
from engine.language.scopes import bind
from engine.language.sequences import iterate
from engine.language.values import (
    Break,
    Closure,
    Continue,
    Function,
    Grad,
    Ints,
    Pending,
    Return,
    is_number,
    length,
)

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

Handler = Callable[..., None]


# --- assignments --------------------------------------------------------------------------
def assign(it: Interpreter, node: ast.Assign, last: bool = False) -> None:
    targets = node.targets
    mark = len(it.nodes)
    single = targets[0] if len(targets) == 1 else None
    if len(targets) > 1 and all(isinstance(t, ast.Name) for t in targets):
        single = targets[0]  # a = b = 1: one value, bound to every name (the first names it)
    if (
        isinstance(single, ast.Name)
        and it.scope is None
        and not it.torch
        and single.id not in it.scan.numbers
        and it.scan.is_constant(node.value)
    ):
        value = constant_leaf(it, single.id, node.value, mark)
    elif isinstance(single, ast.Tuple) and isinstance(node.value, ast.Tuple) and it.scope is None:
        value = leaves_of_tuple(it, single, node.value, mark)
    else:
        value = it.eval(node.value)
        if isinstance(value, Value) and value.seq in it.passes.folded:
            it.drop_since(mark, keep=value)  # (0.01 * randn(2, 3)).requires_grad_(): one leaf
    for target in targets:
        bind(it, target, value, node)
    first = targets[0]
    if it.scope is None and isinstance(first, ast.Name):
        if isinstance(value, Value | Pending):
            set_output(it, value, first.id, alias=isinstance(node.value, ast.Name))
        elif is_number(value) and not isinstance(value, bool):
            set_output(it, (value, node.value, first.id), first.id, alias=False)
    if last:
        it.last_value = (node.value, value)


def constant_leaf(it: Interpreter, name: str, expr: ast.expr, mark: int) -> Any:
    """`x = 2`, `W = [[1, 2]]`, `W = 0.01 * randn(2, 3)`: computed, then one pending leaf
    holding the result (the constants it was made from are not kept: nothing else reads
    them)."""
    v = it.eval(expr)
    if isinstance(v, Value | Pending):
        data = v.node.data if isinstance(v, Pending) else v.data
        raw = None
    elif isinstance(v, bool) or not (is_number(v) or isinstance(v, list | tuple | Ints)):
        return v  # True, None, a string, a function: bound as it is
    else:
        raw = v.data.tolist() if isinstance(v, Ints) else v
        data = np.asarray(v, dtype=np.float64) if is_number(v) else it.array_of(raw, expr)
    it.drop_since(mark)
    pending = it.leaf(np.array(data, dtype=np.float64), expr, name=name, pending=True)
    pending.raw = raw
    return pending


def leaves_of_tuple(it: Interpreter, target: ast.Tuple, value: ast.Tuple, mark: int) -> Any:
    """`a, b = 1.0, 2.0` binds as `a = 1.0; b = 2.0` would (a leaf each), all read first."""
    if len(target.elts) != len(value.elts) or not all(isinstance(t, ast.Name) for t in target.elts):
        return it.eval(value)
    out = []
    for t, e in zip(target.elts, value.elts, strict=True):
        if not it.torch and t.id not in it.scan.numbers and it.scan.is_constant(e):  # type: ignore[attr-defined]
            out.append(constant_leaf(it, t.id, e, len(it.nodes)))  # type: ignore[attr-defined]
        else:
            out.append(it.eval(e))
    return tuple(out)


AUGMENTED = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def augmented(it: Interpreter, node: ast.AugAssign, last: bool = False) -> None:
    """`x += e`: `x = x + e`, or under no_grad on a tensor an update in place."""
    if not isinstance(node.op, AUGMENTED):
        raise it.error("augmented_target", node, "unsupported")
    target = node.target
    if isinstance(target, ast.Attribute) and target.attr == "data":
        owner = it.eval(target.value)
        if isinstance(owner, Pending):  # `w.data -= lr * w.grad` on a number leaf
            owner = it.materialize(owner, target)
        if isinstance(owner, Value):
            with it.no_grad():  # through .data: nothing of it is recorded
                right = it.eval(node.value)
            update_in_place(it, owner, node.op, right, node, counted=False)
            return
    if not isinstance(target, ast.Name):
        raise it.error("augmented_target", node, "unsupported")
    current = it.eval(ast.copy_location(ast.Name(target.id, ast.Load()), target))
    right = it.eval(node.value)
    if isinstance(current, Value) and not it.grad_enabled:
        update_in_place(it, current, node.op, right, node)
        return
    if isinstance(current, Value) and it.torch and current.kind == "leaf":
        raise it.error("leaf_in_place", node, "in_place", name=target.id)
    value = binary(it, node.op, current, right, node, (target, node.value))
    bind(it, target, value, node)
    if isinstance(value, Value) and it.scope is None:
        set_output(it, value, target.id, alias=False)
    if last:
        it.last_value = (node, value)


def update_in_place(
    it: Interpreter, owner: Value, op: ast.operator, right: Any, node: Any, counted: bool = True
) -> None:
    """`w -= lr * w.grad` under no_grad: w's own array changes; w stays the same leaf
    (`counted`: its version is bumped, as any in-place op but one through `.data`)."""
    with it.no_grad():
        result = binary(it, op, owner, right, node)
    data = result.data if isinstance(result, Value) else np.asarray(result, dtype=np.float64)
    if data.shape != owner.data.shape:
        raise it.error(
            "in_place_shape",
            node,
            "shape",
            a=shape_text(owner.data.shape),
            b=shape_text(data.shape),
        )
    it.passes.updated(owner, np.array(data, dtype=np.float64), counted)


# --- expressions as statements ---------------------------------------------------------------
def expression(it: Interpreter, node: ast.Expr, last: bool = False) -> None:
    """A bare expression: the output when it is the program's last statement (and no backward
    call named one); otherwise a display, as a notebook cell shows its value."""
    value = node.value
    if isinstance(value, ast.Yield | ast.YieldFrom | ast.Await):
        raise it.refuse(value)
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return  # a docstring or a string left as a comment
    left = None
    if last and isinstance(value, ast.Compare):  # `x * y >= 0.5`: shown, and x * y the output
        left = it.eval(value.left)
        result = compare(it, value, left)
    else:
        result = it.eval(value)
    if last and it.scope is None and not it.passes.passes:
        if isinstance(value, ast.Compare) and isinstance(result, Ints | bool):
            show(it, result, node)
            if isinstance(left, Value):
                set_output(it, left, "out", alias=False, anonymous=True)
            return
        if isinstance(result, Value | Pending) or is_number(result):
            out = it.tensor(result, value, Msg("what_output", {}))
            if is_number(result):
                out.text = repr(float(result))  # a number computed: its value, not its text
            set_output(it, out, "out", alias=False, anonymous=True)
            return
        if result is not None and not isinstance(result, Grad) and not it.library.is_effect(value):
            it.last_value = (value, result)
    if result is None or it.library.is_effect(value):
        return
    show(it, result, node)


def show(it: Interpreter, value: Any, node: ast.AST) -> None:
    """A notebook's display of a value, in `printed`."""
    it.emit(it.library.display(it, value, node), node)


# --- control flow ---------------------------------------------------------------------------
def for_loop(it: Interpreter, node: ast.For, last: bool = False) -> None:
    if node.orelse:
        raise it.error("loop_else", node, "unsupported", word="for")
    if isinstance(node.target, ast.Name) and node.target.id in it.library.functions:
        raise it.error("function_name_taken", node.target, name=node.target.id)
    items = iterate(it, it.eval(node.iter), node.iter)
    counts = id(node) not in it.scan.outer_loops
    if isinstance(items, range | list | tuple):  # its length known: refused before it runs
        it.check_turns(length(items) if counts else 0, node, length(items))
    it.loops += 1
    try:
        for item in items:
            it.count("turns", node, 1 if counts else 0)  # an outer turn: its statements count
            bind(it, node.target, item, node)
            if not turn(it, node.body):
                break
    finally:
        it.loops -= 1


def while_loop(it: Interpreter, node: ast.While, last: bool = False) -> None:
    if node.orelse:
        raise it.error("loop_else", node, "unsupported", word="while")
    it.loops += 1
    try:
        counts = 1 if id(node) not in it.scan.outer_loops else 0  # an outer turn: its statements
        while truth(it, it.eval(node.test), node.test):
            it.count("turns", node, counts)
            if not turn(it, node.body):
                break
    finally:
        it.loops -= 1


def turn(it: Interpreter, body: list[ast.stmt]) -> bool:
    """One turn of a loop's body; False when it ended with break."""
    try:
        it.block(body)
    except Continue:
        pass
    except Break:
        return False
    return True


def if_statement(it: Interpreter, node: ast.If, last: bool = False) -> None:
    it.block(node.body if truth(it, it.eval(node.test), node.test) else node.orelse)


def jump(it: Interpreter, node: ast.Break | ast.Continue, last: bool = False) -> None:
    word = "break" if isinstance(node, ast.Break) else "continue"
    if not it.loops:
        raise it.error("jump_outside_loop", node, "unsupported", word=word)
    raise Break if word == "break" else Continue


def nothing(it: Interpreter, node: ast.Pass, last: bool = False) -> None:
    pass


def with_block(it: Interpreter, node: ast.With, last: bool = False) -> None:
    """`with torch.no_grad():` (nothing inside is recorded), `with torch.enable_grad():`,
    `with tf.GradientTape() as tape:` (the tape bound to its name); several items nest."""

    def enter(i: int) -> None:
        if i == len(node.items):
            return it.block(node.body)
        target = node.items[i].optional_vars
        if target is not None and not isinstance(target, ast.Name):
            raise it.error("with_only", target, "unsupported")
        manager = it.eval(node.items[i].context_expr)
        it.library.enter(it, manager, node, lambda: enter(i + 1), getattr(target, "id", None))

    enter(0)


# --- functions ------------------------------------------------------------------------------
def function_def(it: Interpreter, node: ast.FunctionDef, last: bool = False) -> None:
    from engine.language.calls import call_value, make_function

    value: Any = make_function(it, node)
    for d in reversed(node.decorator_list):  # `@jax.jit`, `@jax.grad`: f = d(f), as Python's
        if isinstance(d, ast.Name) and d.id in it.scan.free:
            raise it.error("decorator", d, "unsupported")
        dec = it.eval(d)
        if not isinstance(dec, Closure | Function):
            raise it.error("decorator", d, "unsupported")
        value = call_value(it, dec, [value], {}, d)
    it.set_var(node.name, value, node)


def return_statement(it: Interpreter, node: ast.Return, last: bool = False) -> None:
    if not it.calls:
        raise it.error("return_outside", node, "unsupported")
    raise Return(None if node.value is None else it.eval(node.value))


# --- imports, assertions --------------------------------------------------------------------
def import_statement(
    it: Interpreter, node: ast.Import | ast.ImportFrom, last: bool = False
) -> None:
    for local, value in it.library.imported(it, node):
        it.set_var(local, value, node)


def assertion(it: Interpreter, node: ast.Assert, last: bool = False) -> None:
    if truth(it, it.eval(node.test), node.test):
        return
    text = (
        "" if node.msg is None else it.library.display(it, it.eval(node.msg), node.msg, plain=True)
    )
    raise it.error("assertion", node, "assertion", text=text or it.src.segment(it.where(node.test)))


STATEMENTS: dict[type, Handler] = {
    ast.Assign: assign,
    ast.AugAssign: augmented,
    ast.Expr: expression,
    ast.For: for_loop,
    ast.While: while_loop,
    ast.If: if_statement,
    ast.Break: jump,
    ast.Continue: jump,
    ast.Pass: nothing,
    ast.With: with_block,
    ast.FunctionDef: function_def,
    ast.Return: return_statement,
    ast.Import: import_statement,
    ast.ImportFrom: import_statement,
    ast.Assert: assertion,
}

__all__ = ["STATEMENTS", "Grad", "ops"]
