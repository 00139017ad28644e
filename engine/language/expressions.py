"""The expressions a program may write, one handler per syntax class (EXPRESSIONS).

Numbers stay Python's numbers until they meet a tensor (then they are constants of the
graph), so whole numbers, shapes and indices are ordinary values: `x.shape[0] // 2`,
`range(n)`, `xs[i]`. Operators on tensors make graph nodes through the op registry; on numbers,
strings and lists they are Python's own, with every size they could grow to checked first.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import BINARY_OPERATORS
from engine.autograd.value import Value
from engine.errors import Msg
from engine.language.comparisons import compare, truth
from engine.language.scopes import bind, dotted, lookup
from engine.language.sequences import items_of, iterate
from engine.language.values import (
    Array,
    Closure,
    Function,
    Grad,
    Ints,
    Pending,
    Scope,
    SetItems,
    describe,
    is_number,
    length,
    numbers_list,
)

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter

# ast operator -> (its symbol, the Python function for numbers)
BINARY: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.Pow: ("**", operator.pow),
    ast.MatMult: ("@", operator.matmul),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
}
SYMBOLS = {ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^"}
TENSORS = (Value, Pending, Grad, Ints)  # what makes an operator a graph op
BIG_INT = 2**64  # whole numbers past this are refused: no program needs them, and they grow


def constant(it: Interpreter, node: ast.Constant) -> Any:
    v = node.value
    if isinstance(v, complex):
        raise it.error("complex_number", node, "unsupported")
    if isinstance(v, bytes) or v is Ellipsis:
        raise it.refuse(node)
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > BIG_INT:
        if abs(v) >= 2**1023:
            raise it.error("number_too_large", node, "non_finite")
        return float(v)
    if isinstance(v, float) and not math.isfinite(v):
        raise it.error("number_too_large", node, "non_finite")
    return v


def name(it: Interpreter, node: ast.Name) -> Any:
    return lookup(it, node.id, node)


# --- operators --------------------------------------------------------------------------
def binop(it: Interpreter, node: ast.BinOp) -> Any:
    """A left-leaning chain `a + b + c + …` is evaluated with a loop, not recursion: a flat
    chain may be as long as the source."""
    spine = [node]
    while isinstance(spine[-1].left, ast.BinOp):
        spine.append(spine[-1].left)
    result = it.eval(spine[-1].left)
    left: ast.AST = spine[-1].left
    for link in reversed(spine):
        result = binary(it, link.op, result, it.eval(link.right), link, (left, link.right))
        left = link
    return result


def binary(it: Interpreter, op: ast.operator, a: Any, b: Any, node: Any, parts: Any = None) -> Any:
    """`a op b` on what the program holds: a graph op when either side is a tensor."""
    entry = BINARY.get(type(op))
    if entry is None:
        raise it.error("operator_not_in_language", node, "unsupported", op=SYMBOLS.get(type(op)))
    symbol, python = entry
    for v in (a, b):
        if isinstance(v, Closure | Function):
            key = "function_as_value_grad" if isinstance(v, Closure) else "function_as_value"
            raise it.error(key, node, "invalid", name=v.name)
    if symbol == "%" and isinstance(a, str):
        return sequence_op(it, symbol, python, a, b, node)  # "%.4f" % loss
    arrays = isinstance(a, Array) or isinstance(b, Array)
    if arrays and not isinstance(a, TENSORS) and not isinstance(b, TENSORS):
        return array_op(it, symbol, python, a, b, node)  # x.numpy() * 2: NumPy's
    if arrays or isinstance(a, TENSORS) or isinstance(b, TENSORS):
        if symbol in ("//", "%"):
            raise it.error("operator_on_tensor", node, "unsupported", op=symbol)
        if symbol == "**":
            check_exponent(it, b, parts[1] if parts else node)
        return it.op(BINARY_OPERATORS[symbol](), (a, b), node, parts)
    if not it.torch and (numbers_list(a) or numbers_list(b)):  # without torch, a tensor
        if symbol == "**":
            check_exponent(it, b, parts[1] if parts else node)
        return it.op(BINARY_OPERATORS[symbol](), (a, b), node, parts)
    if isinstance(a, list | tuple | str) or isinstance(b, list | tuple | str):
        return sequence_op(it, symbol, python, a, b, node)
    if not (is_number(a) or isinstance(a, bool)) or not (is_number(b) or isinstance(b, bool)):
        raise it.error("operands", node, "invalid", op=symbol, a=describe(a), b=describe(b))
    if symbol == "**":
        check_exponent(it, b, parts[1] if parts else node)
    return number_op(it, symbol, python, a, b, node)


def number_op(it: Interpreter, symbol: str, python: Any, a: Any, b: Any, node: Any) -> Any:
    """Python's arithmetic on numbers, a whole number's growth checked before it is made."""
    if symbol == "@":
        raise it.error("operands", node, "invalid", op=symbol, a=describe(a), b=describe(b))
    if isinstance(a, int) and isinstance(b, int) and symbol in ("**", "*") and a and b:
        bits = b * math.log2(abs(a)) if symbol == "**" else math.log2(abs(a)) + math.log2(abs(b))
        if bits > 64:
            raise it.error("whole_too_large", node, "too_large")
    try:
        result = python(a, b)
    except ZeroDivisionError:
        nan = symbol in ("/", "//", "%") and a == 0
        raise not_finite(it, node, nan) from None
    except OverflowError:
        raise not_finite(it, node, False) from None
    if isinstance(result, complex):
        raise not_finite(it, node, True)
    if isinstance(result, float) and not math.isfinite(result):
        raise not_finite(it, node, math.isnan(result))
    return result


def array_op(it: Interpreter, symbol: str, python: Any, a: Any, b: Any, node: Any) -> Array:
    """NumPy's arithmetic on the arrays a PyTorch program holds (`w.grad.numpy() * 2`) and
    numbers: an array, its size checked before it is made."""
    x, y = (v.data if isinstance(v, Array) else v for v in (a, b))
    if not all(isinstance(v, np.ndarray) or is_number(v) for v in (x, y)) or symbol == "%":
        raise it.error("operands", node, "invalid", op=symbol, a=describe(a), b=describe(b))
    try:
        shape = np.broadcast_shapes(np.shape(x), np.shape(y)) if symbol != "@" else None
        if shape is not None:
            it.check_shape(shape, node)
            it.count("work", node, int(np.prod(shape)))
        with np.errstate(all="ignore"):
            out = np.asarray(python(np.asarray(x, float), np.asarray(y, float)), dtype=float)
    except ValueError:
        raise it.error(
            "operands", node, "invalid", op=symbol, a=describe(a), b=describe(b)
        ) from None
    if not np.isfinite(out).all():
        raise not_finite(it, node, bool(np.isnan(out).any()))
    return Array(out)


def not_finite(it: Interpreter, node: Any, nan: bool) -> Any:
    """`1/0 gives an infinite value`, `(-8)**(1/3) gives NaN`: named by the program's text,
    as an op's non-finite result is."""
    text = it.src.segment(it.where(node))
    return it.error("gives_nan" if nan else "gives_infinite", node, "non_finite", text=text)


def sequence_op(it: Interpreter, symbol: str, python: Any, a: Any, b: Any, node: Any) -> Any:
    """`+` joins lists, tuples or strings, `*` repeats one, `%` formats a string: each
    result's size checked before it is made."""
    if symbol == "%" and isinstance(a, str):
        return it.library.percent(it, a, b, node)
    if symbol == "+" and type(a) is type(b):
        size = len(a) + len(b)
    elif symbol == "*" and isinstance(b, int) and not isinstance(b, bool):
        size = len(a) * max(b, 0)
    elif symbol == "*" and isinstance(a, int) and not isinstance(a, bool):
        size = len(b) * max(a, 0)
    else:
        raise it.error("operands", node, "invalid", op=symbol, a=describe(a), b=describe(b))
    if isinstance(a, str) or isinstance(b, str):
        it.check_chars(size, node)
    else:
        it.check_items(size, node)
        it.count("work", node, size)
    return python(a, b)


def check_exponent(it: Interpreter, b: Any, node: Any) -> None:
    """A constant exponent beyond max_exponent (`x ** 1e6`) is refused."""
    value = b if is_number(b) else None
    if isinstance(b, Value) and not b.requires_grad and b.data.ndim == 0:
        value = float(b.data)
    if value is not None and abs(float(value)) > it.limits.max_exponent:
        raise it.error(
            "limit_max_exponent", node, "too_large", limit="max_exponent",
            b=f"{float(value):g}", max=f"{it.limits.max_exponent:g}",
        )  # fmt: skip


def unary(it: Interpreter, node: ast.UnaryOp) -> Any:
    v = it.eval(node.operand)
    if isinstance(node.op, ast.Not):
        return not truth(it, v, node.operand)
    if isinstance(node.op, ast.Invert):
        raise it.error("operator_not_in_language", node, "unsupported", op="~")
    if isinstance(node.op, ast.UAdd):
        return v
    if isinstance(v, Array):
        return Array(-v.data)
    if isinstance(v, TENSORS):
        return it.op(ops.Neg(), (v,), node, (node.operand,))
    if is_number(v) and not isinstance(v, bool):
        return -v
    raise it.error("operands", node, "invalid", op="-", a=describe(v), b="")


def boolop(it: Interpreter, node: ast.BoolOp) -> Any:
    """`a and b`, `a or b`: Python's, stopping at the first operand that decides."""
    want = isinstance(node.op, ast.Or)
    value: Any = None
    for operand in node.values:
        value = it.eval(operand)
        if truth(it, value, operand) == want:
            return value
    return value


def if_expression(it: Interpreter, node: ast.IfExp) -> Any:
    return it.eval(node.body if truth(it, it.eval(node.test), node.test) else node.orelse)


# --- containers -----------------------------------------------------------------------------
def sequence(it: Interpreter, node: ast.List | ast.Tuple | ast.Set) -> Any:
    items: list[Any] = []
    for e in node.elts:
        if isinstance(e, ast.Starred):
            items.extend(items_of(it, it.eval(e.value), e))
        else:
            items.append(it.eval(e))
        it.check_items(len(items), node)
    if isinstance(node, ast.List):
        return items
    return tuple(items) if isinstance(node, ast.Tuple) else frozenset_of(it, items, node)


def frozenset_of(it: Interpreter, items: list[Any], node: Any) -> Any:
    """A set literal, as membership reads it (`epoch in {0, 9}`): its items, in order."""
    if not all(is_number(x) or isinstance(x, str | bool) or x is None for x in items):
        raise it.error("set_items", node, "unsupported")
    return SetItems(dict.fromkeys(items))


def comprehension(it: Interpreter, node: ast.ListComp | ast.GeneratorExp) -> list[Any]:
    """A list comprehension (or a generator, read as a list), in a scope of its own."""
    out: list[Any] = []
    outer = it.scope
    it.scope = Scope({}, outer, frozenset(), "comprehension")
    try:
        generate(it, node, 0, out)
    finally:
        it.scope = outer
    return out


def generate(
    it: Interpreter, node: ast.ListComp | ast.GeneratorExp, k: int, out: list[Any]
) -> None:
    """The k-th generator's turns, each running the later ones (a nested loop each)."""
    if k == len(node.generators):
        it.count("statements", node)
        out.append(it.eval(node.elt))
        it.check_items(len(out), node)
        return
    g = node.generators[k]
    if g.is_async:
        raise it.error("not_in_language", node, "unsupported", what=Msg("construct_async_for", {}))
    items = iterate(it, it.eval(g.iter), g.iter)
    if isinstance(items, range | list | tuple):  # its length known: refused before it runs
        it.check_turns(length(items), node)
    for item in items:
        it.count("turns", node)
        bind(it, g.target, item, node)
        if all(truth(it, it.eval(c), c) for c in g.ifs):
            generate(it, node, k + 1, out)


def lambda_expression(it: Interpreter, node: ast.Lambda) -> Closure:
    from engine.language.calls import make_function

    return make_function(it, node)


def fstring(it: Interpreter, node: ast.JoinedStr) -> str:
    parts: list[str] = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
        elif isinstance(v, ast.FormattedValue):
            spec = "" if v.format_spec is None else fstring(it, v.format_spec)  # type: ignore[arg-type]
            parts.append(it.library.format_value(it, it.eval(v.value), spec, v.conversion, v))
        else:
            raise it.refuse(v)
        it.check_chars(len(parts[-1]), node)
    return "".join(parts)


# --- reading parts ----------------------------------------------------------------------
def attribute(it: Interpreter, node: ast.Attribute) -> Any:
    path = dotted(it, node)
    if path is not None:
        return it.library.module_attribute(it, path, node)
    return it.library.attribute(it, it.eval(node.value), node.attr, node)


def dictionary(it: Interpreter, node: ast.Dict) -> dict[Any, Any]:
    """A dict of names (`{'x': x, 'y': y}`, as tape.gradient takes and gives): keys that are
    strings or numbers, read by `d[key]`."""
    out: dict[Any, Any] = {}
    for k, v in zip(node.keys, node.values, strict=True):
        key = it.eval(k) if k is not None else None
        if k is None or not (isinstance(key, str) or is_number(key)):
            raise it.error("dict_keys", k or v, "unsupported")
        out[key] = it.eval(v)
        it.check_items(len(out), node)
    return out


def subscript(it: Interpreter, node: ast.Subscript) -> Any:
    from engine.language.indexing import index

    owner = it.eval(node.value)
    if isinstance(owner, dict):
        key = it.eval(node.slice)
        if not (isinstance(key, str) or is_number(key)) or key not in owner:
            raise it.error("dict_key", node.slice, "index", name=repr(key)[:40])
        return owner[key]
    return index(it, owner, node.slice, node)


def call(it: Interpreter, node: ast.Call) -> Any:
    from engine.language.calls import call_value

    f = it.eval(node.func)
    args: list[Any] = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            args.extend(items_of(it, it.eval(a.value), a))
        else:
            args.append(it.eval(a))
    kwargs: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise it.error("double_star", kw.value, "unsupported")
        if kw.arg in kwargs:
            raise it.error("given_twice", kw, "arguments", name=kw.arg)
        kwargs[kw.arg] = it.eval(kw.value)
    return call_value(it, f, args, kwargs, node)


EXPRESSIONS: dict[type, Callable[[Interpreter, Any], Any]] = {
    ast.Constant: constant,
    ast.Name: name,
    ast.BinOp: binop,
    ast.UnaryOp: unary,
    ast.BoolOp: boolop,
    ast.Compare: compare,
    ast.IfExp: if_expression,
    ast.List: sequence,
    ast.Tuple: sequence,
    ast.Set: sequence,
    ast.Dict: dictionary,
    ast.ListComp: comprehension,
    ast.GeneratorExp: comprehension,
    ast.Lambda: lambda_expression,
    ast.JoinedStr: fstring,
    ast.Attribute: attribute,
    ast.Subscript: subscript,
    ast.Call: call,
}
