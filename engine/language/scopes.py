"""What a name holds where it is read: the calls' scopes (innermost first), the program's
names, a free name (a leaf with the value given, made at its first use), and then the
library's functions; else the error that says why not (used before it is bound, a module not
imported, a name one edit from a known one).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.value import Value
from engine.inputs.given import given_labels, given_value
from engine.language.sequences import items_of
from engine.language.source import close_match
from engine.language.values import Closure, Module, Pending

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


def lookup(it: Interpreter, name: str, node: ast.AST) -> Any:
    scope = it.scope
    while scope is not None:
        if name in scope.vars:
            return scope.vars[name]
        if name in scope.own:
            raise it.error("used_before_assigned_in", node, "unbound", name=name, f=scope.name)
        scope = scope.parent
    if name in it.env:
        return it.env[name]
    if name in it.scan.free:
        return free_leaf(it, name, node)
    functions = it.library.functions
    if name in functions:
        return functions[name]
    if name in it.scan.assigned:
        if it.scope is None and name not in it.scan.module_assigned:
            raise it.error("local_only", node, "unbound", name=name)
        raise it.error("used_before_assigned", node, "unbound", name=name)
    if name in it.library.standard:
        raise it.error("not_imported", node, "import", name=name, line=it.library.standard[name])
    if name.startswith("__") and name not in it.scan.called_names:
        raise it.error("dunder_name", node, "unsupported", name=name[:40])
    hint = close_match(name, sorted(set(functions) | set(it.env)))
    key = "unknown_function_hint" if hint else "unknown_function"
    if name not in it.scan.called_names:
        key = "unknown_name_hint" if hint else "unknown_name"
    raise it.error(key, node, "unknown_function", name=name[:40], hint=hint)


def free_leaf(it: Interpreter, name: str, node: Any) -> Any:
    """A free name at its first use: a leaf with the value given (1.0 by default), or the
    class labels given for a name used as labels."""
    if name in it.scan.labels:
        labels = given_labels(name, it.values, it.limits)
        value: Any = list(labels) if isinstance(labels, tuple) else labels
    else:
        given = name in it.values
        data = given_value(name, it.values, it.limits) if given else np.float64(1.0)
        value = it.leaf(np.array(data, dtype=np.float64), node, name=name)
    it.env[name] = value
    return value


def dotted(it: Interpreter, node: ast.Attribute) -> str | None:
    """`np.random.randn` as "numpy.random.randn" when its first name holds a module; None for
    an attribute of a value."""
    parts: list[str] = []
    base: ast.AST = node
    while isinstance(base, ast.Attribute):
        parts.append(base.attr)
        base = base.value
    if not isinstance(base, ast.Name):
        return None
    root = lookup(it, base.id, base)
    if not isinstance(root, Module):
        return None
    return ".".join([root.path, *reversed(parts)])


def bind(it: Interpreter, target: ast.expr, value: Any, node: ast.AST) -> None:
    """Bind a target: a name, names unpacked in turn, or an attribute that PyTorch lets a
    program set (`x.requires_grad = True`, `x.grad = None`, `w.data = …`)."""
    if isinstance(target, ast.Name):
        name = target.id
        if isinstance(value, Value) and value.name is None:
            value.name = name
        elif isinstance(value, Pending) and value.node.name is None:
            value.node.name = name
        elif isinstance(value, Closure) and value.name == "lambda":
            value.name = name  # `f = lambda …` is f in messages
        it.set_var(name, value, target)
        return
    if isinstance(target, ast.Tuple | ast.List):
        if any(isinstance(e, ast.Starred) for e in target.elts):
            raise it.refuse(next(e for e in target.elts if isinstance(e, ast.Starred)))
        items = items_of(it, value, node)
        if len(items) != len(target.elts):
            raise it.error("unpack_count", node, "arguments", n=len(items), m=len(target.elts))
        for t, item in zip(target.elts, items, strict=True):
            bind(it, t, item, node)
        return
    if isinstance(target, ast.Attribute):
        owner = it.eval(target.value)
        it.library.set_attribute(it, owner, target.attr, value, target)
        return
    if isinstance(target, ast.Subscript):
        raise it.error("assign_item", target, "unsupported")
    raise it.error("assign_target", target, "unsupported")
