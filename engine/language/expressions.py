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
from typing import Any

import numpy as np

from engine.autograd import ops
from engine.autograd.ops import BINARY_OPERATORS, shape_text
from engine.autograd.value import Value
from engine.language import names
from engine.errors import Msg
from engine.language.interpreter import Interpreter
from engine.language.printing import format_value
from engine.language.values import (
    Closure,
    Function,
    Grad,
    Ints,
    Pending,
    Scope,
    describe,
    is_number,
    length,
)

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
COMPARE: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Lt: ("<", operator.lt),
    ast.Gt: (">", operator.gt),
    ast.LtE: ("<=", operator.le),
    ast.GtE: (">=", operator.ge),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}
TENSORS = (Value, Pending, Grad, Ints)
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
    return names.lookup(it, node.id, node)


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
    if isinstance(a, TENSORS) or isinstance(b, TENSORS):
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


def numbers_list(v: Any) -> bool:
    """A list of numbers, nested: a tensor's value in a program without torch (a tuple, as
    a shape is, stays Python's)."""
    if not isinstance(v, list) or not v:
        return False
    return all(numbers_list(x) if isinstance(x, list | tuple) else is_number(x) for x in v)


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


def not_finite(it: Interpreter, node: Any, nan: bool) -> Any:
    """`1/0 gives an infinite value`, `(-8)**(1/3) gives NaN`: named by the program's text,
    as an op's non-finite result is."""
    text = it.src.segment(it.where(node))
    return it.error("gives_nan" if nan else "gives_infinite", node, "non_finite", text=text)


def sequence_op(it: Interpreter, symbol: str, python: Any, a: Any, b: Any, node: Any) -> Any:
    """`+` joins lists, tuples or strings, `*` repeats one, `%` formats a string: each
    result's size checked before it is made."""
    if symbol == "%" and isinstance(a, str):
        from engine.language.printing import percent_format

        return percent_format(it, a, b, node)
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
    if isinstance(v, TENSORS):
        return it.op(ops.Neg(), (v,), node, (node.operand,))
    if is_number(v) and not isinstance(v, bool):
        return -v
    raise it.error("operands", node, "invalid", op="-", a=describe(v), b="")


def truth(it: Interpreter, v: Any, node: Any) -> bool:
    """A condition decided on the values computed so far, as Python and PyTorch decide it."""
    if isinstance(v, Pending):
        v = v.raw if v.raw is not None else v.node
    if isinstance(v, Grad):
        v = v.owner.grad
        if v is None:
            return False
    if isinstance(v, Value | Ints | np.ndarray):
        data = v.data if isinstance(v, Value | Ints) else v
        if np.size(data) != 1:
            raise it.error("ambiguous_truth", node, "shape", shape=shape_text(np.shape(data)))
        return bool(np.asarray(data).reshape(()))
    if isinstance(v, bool | int | float | str | list | tuple | np.generic) or v is None:
        return bool(v)
    raise it.error("condition_needs_number", node, "invalid", v=describe(v))


def boolop(it: Interpreter, node: ast.BoolOp) -> Any:
    """`a and b`, `a or b`: Python's, stopping at the first operand that decides."""
    want = isinstance(node.op, ast.Or)
    value: Any = None
    for operand in node.values:
        value = it.eval(operand)
        if truth(it, value, operand) == want:
            return value
    return value


def compare(it: Interpreter, node: ast.Compare) -> Any:
    """Comparisons chained as Python chains them; of tensors, elementwise (True/False
    tensors), their shapes named when they do not broadcast."""
    left = it.eval(node.left)
    result: Any = True
    for op, right_node in zip(node.ops, node.comparators, strict=True):
        right = it.eval(right_node)
        one = compare_one(it, op, left, right, node)
        if isinstance(one, Ints):
            result = one if result is True else Ints(np.logical_and(as_bools(result), one.data))
        elif not one:
            return False
        left = right
    return result


def as_bools(v: Any) -> Any:
    return v.data if isinstance(v, Ints) else v


def compare_one(it: Interpreter, op: ast.cmpop, a: Any, b: Any, node: Any) -> Any:
    if isinstance(op, ast.Is | ast.IsNot):
        same = (a is None and b is None) or (a is b and a is not None)
        return same if isinstance(op, ast.Is) else not same
    if isinstance(op, ast.In | ast.NotIn):
        if not isinstance(b, list | tuple | str | frozenset):
            raise it.error("membership", node, "invalid", v=describe(b))
        found = any(_equal(a, x) for x in b)
        return found if isinstance(op, ast.In) else not found
    symbol, python = COMPARE[type(op)]
    a, b = (none_grad(it, v) for v in (a, b))
    if a is None or b is None:
        return python(a, b) if symbol in ("==", "!=") else False  # PyTorch's None == t
    if isinstance(a, TENSORS) or isinstance(b, TENSORS):
        x, y = tensor_data(it, a, node), tensor_data(it, b, node)
        try:
            shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        except ValueError:
            raise it.error(
                "compare_shapes",
                node,
                "shape",
                a=shape_text(np.shape(x)),
                b=shape_text(np.shape(y)),
            ) from None
        it.check_shape(shape, node)
        return Ints(np.asarray(python(x, y), dtype=np.bool_))
    try:
        return bool(python(a, b))
    except TypeError:
        raise it.error("cannot_compare", node, "invalid", a=describe(a), b=describe(b)) from None


def none_grad(it: Interpreter, v: Any) -> Any:
    """A grad not yet made: None in PyTorch (compared as None), zeros without torch."""
    if isinstance(v, Grad) and v.owner.grad is None:
        return None if it.torch else Ints(np.zeros(v.owner.data.shape))
    return v


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) if not isinstance(a, TENSORS) else a is b
    except (TypeError, ValueError):
        return False


def tensor_data(it: Interpreter, v: Any, node: Any) -> np.ndarray:
    """The numbers a comparison reads of a value: a grad that is None compares as nothing."""
    if isinstance(v, Grad):
        if v.owner.grad is None:
            raise it.error("grad_is_none", node, "invalid")
        return np.asarray(v.owner.grad, dtype=np.float64)
    if isinstance(v, Pending):
        return np.asarray(v.node.data)
    if isinstance(v, Value | Ints):
        return np.asarray(v.data)
    if is_number(v) or isinstance(v, bool):
        return np.asarray(float(v))
    if isinstance(v, list | tuple):
        return it.array_of(v, node)
    raise it.error("cannot_compare", node, "invalid", a=describe(v), b=Msg("describe_tensor", {}))


def if_expression(it: Interpreter, node: ast.IfExp) -> Any:
    return it.eval(node.body if truth(it, it.eval(node.test), node.test) else node.orelse)


# --- containers -----------------------------------------------------------------------------
def sequence(it: Interpreter, node: ast.List | ast.Tuple | ast.Set) -> Any:
    items: list[Any] = []
    for e in node.elts:
        if isinstance(e, ast.Starred):
            items.extend(it.items(it.eval(e.value), e))
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
    return tuple(dict.fromkeys(items))


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
    from engine.language.statements import bind

    g = node.generators[k]
    if g.is_async:
        raise it.error("not_in_language", node, "unsupported", what=Msg("construct_async_for", {}))
    items = it.iterate(it.eval(g.iter), g.iter)
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
            parts.append(format_value(it, it.eval(v.value), spec, v.conversion, v))
        else:
            raise it.refuse(v)
        it.check_chars(len(parts[-1]), node)
    return "".join(parts)


# --- reading parts ----------------------------------------------------------------------
def attribute(it: Interpreter, node: ast.Attribute) -> Any:
    path = names.dotted(it, node)
    if path is not None:
        return names.module_attribute(it, path, node)
    return names.attribute(it, it.eval(node.value), node.attr, node)


def subscript(it: Interpreter, node: ast.Subscript) -> Any:
    from engine.language.indexing import index

    return index(it, it.eval(node.value), node.slice, node)


def call(it: Interpreter, node: ast.Call) -> Any:
    from engine.language.calls import call_value

    f = it.eval(node.func)
    args: list[Any] = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            args.extend(it.items(it.eval(a.value), a))
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
    ast.ListComp: comprehension,
    ast.GeneratorExp: comprehension,
    ast.Lambda: lambda_expression,
    ast.JoinedStr: fstring,
    ast.Attribute: attribute,
    ast.Subscript: subscript,
    ast.Call: call,
}
