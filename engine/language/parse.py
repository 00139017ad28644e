"""parse(source) -> Program: the program language (spec/language.md), deny by default.

Python's `ast` reads the text (never `eval`); one table maps each allowed AST class to a
handler, and anything else is refused with a named error at its line and column. Limits on
size and nesting are checked before `ast.parse` sees the text.
"""

from __future__ import annotations

import ast
import difflib
import functools
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from engine.autograd.ops import MAX_RANK
from engine.autograd.value import Span
from engine.errors import ProgramError
from engine.language import ir
from engine.limits import DEFAULT_LIMITS, Limits

UNARY = {"exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs"}
BINARY = {"max", "min", "matmul", "mse"}
CONSTRUCTORS = {"randn", "rand", "zeros", "ones", "full", "arange"}
# function -> keywords it takes
KEYWORDS: dict[str, tuple[str, ...]] = {
    "sum": ("axis", "keepdims"),
    "mean": ("axis", "keepdims"),
    "softmax": ("axis",),
    "log_softmax": ("axis",),
    "transpose": ("axes",),
    "reshape": (),
}
FUNCTIONS = (
    UNARY
    | BINARY
    | CONSTRUCTORS
    | set(KEYWORDS)
    | {"cross_entropy", "const", "detach", "seed", "grad"}
)
METHODS = UNARY | {"sum", "mean", "softmax", "log_softmax", "transpose", "reshape", "detach"}
BIN_OPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.Pow: "pow",
    ast.MatMult: "matmul",
}
STATIC_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Pow: "**"}

# What students might write, named in words for the error message.
CONSTRUCT_NAMES = {
    ast.Import: "import",
    ast.ImportFrom: "import",
    ast.Lambda: "lambda",
    ast.ListComp: "a list comprehension",
    ast.SetComp: "a set comprehension",
    ast.DictComp: "a dict comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.While: "a while loop",
    ast.FunctionDef: "def",
    ast.AsyncFunctionDef: "def",
    ast.ClassDef: "class",
    ast.If: "if",
    ast.IfExp: "an if-expression",
    ast.With: "with",
    ast.Try: "try",
    ast.Return: "return",
    ast.Delete: "del",
    ast.Global: "global",
    ast.Nonlocal: "nonlocal",
    ast.Raise: "raise",
    ast.Assert: "assert",
    ast.Pass: "pass",
    ast.Break: "break",
    ast.Continue: "continue",
    ast.JoinedStr: "an f-string",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.Compare: "a comparison",
    ast.BoolOp: "and/or",
    ast.NamedExpr: "the := operator",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Starred: "*unpacking",
    ast.AnnAssign: "an annotated assignment",
}

# Bidirectional controls reorder how text is shown, so code can read differently from what
# runs ("Trojan Source"); they have no place in a program.
BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
OPENERS, CLOSERS = "([{", ")]}"


def parse(source: str, limits: Limits = DEFAULT_LIMITS) -> ir.Program:
    """Check and parse a program into the IR; raise ProgramError with a position if it can't."""
    check_text(source, limits)
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as e:
        raise syntax_error(e, source) from None
    except (RecursionError, MemoryError, ValueError):
        operators = flat_operator_count(source, limits)
        if operators > limits.max_nodes:
            # Point at the operator that would make one node too many.
            over = list(re.finditer(r"\*\*|[-+*/@]", source))[limits.max_nodes]
            raise ProgramError(
                f"the program has about {operators:,} operators, more than the "
                f"{limits.max_nodes:,} graph nodes a program may make (max_nodes)",
                *position_of(source, over.start()),
                code="too_large",
                limit="max_nodes",
            ) from None
        raise ProgramError(
            f"the program is nested too deeply to read (the limit is {limits.max_depth} levels, "
            "max_depth)",
            code="too_deep",
            limit="max_depth",
        ) from None
    check_depth(tree, source, limits)
    return Parser(source, limits).program(tree)


def flat_operator_count(source: str, limits: Limits) -> int:
    """When Python's own parser gives up, was it a long flat chain (`x+x+…`, too many nodes)
    or real nesting (`---x`, `x**x**…`)? The count of binary operators, or 0 for nesting."""
    squeezed = re.sub(r"\s+", "", source)
    longest_unary_run = max((len(m) for m in re.findall(r"[-+~]+", squeezed)), default=0)
    if longest_unary_run > limits.max_depth or squeezed.count("**") > limits.max_depth:
        return 0
    return len(re.findall(r"\*\*|[-+*/@]", squeezed))


# --- text checks, before ast.parse -----------------------------------------------------------


NEWLINE = re.compile(r"\r\n|\r|\n")


@functools.lru_cache(maxsize=8)
def source_lines(source: str) -> list[str]:
    """The lines as Python's tokenizer counts them: only \r\n, \r and \n end a line
    (str.splitlines also splits at U+2028, U+000C, …, which Python allows in comments).
    Cached and shared: slice it, never mutate it."""
    return NEWLINE.split(source)


def position_of(source: str, index: int) -> tuple[int, int]:
    """1-based line and column (code points) of a character index."""
    lines = NEWLINE.split(source[:index])
    return len(lines), len(lines[-1]) + 1


def check_text(source: str, limits: Limits) -> None:
    if len(source) > limits.max_source_chars:
        raise ProgramError(
            f"the program is {len(source):,} characters long; "
            f"the limit is {limits.max_source_chars:,} (max_source_chars)",
            code="too_long",
            limit="max_source_chars",
        )
    if not source.strip():
        raise ProgramError(
            "the program is empty: type an expression such as x*y + x", 1, 1, code="empty"
        )
    depth = 0
    in_comment = False
    for i, ch in enumerate(source):
        if ch == "\n":
            in_comment = False
        if "\ud800" <= ch <= "\udfff":
            raise ProgramError(
                "the text holds a broken character (an unpaired surrogate)",
                *position_of(source, i),
                code="bad_character",
            )
        if ch in BIDI_CONTROLS:
            raise ProgramError(
                f"the text holds an invisible direction control character "
                f"(U+{ord(ch):04X}), which can make code read differently from what runs",
                *position_of(source, i),
                code="bidi_control",
            )
        if ch == "\x00" or (unicodedata.category(ch) == "Cc" and ch not in "\n\t\r"):
            raise ProgramError(
                f"the text holds a control character (U+{ord(ch):04X})",
                *position_of(source, i),
                code="bad_character",
            )
        if in_comment:
            continue
        if ch == "#":
            in_comment = True
        elif ch in OPENERS:
            depth += 1
            if depth > limits.max_depth:
                raise ProgramError(
                    f"brackets are nested more than {limits.max_depth} deep (max_depth)",
                    *position_of(source, i),
                    code="too_deep",
                    limit="max_depth",
                )
        elif ch in CLOSERS:
            depth = max(0, depth - 1)


def syntax_error(e: SyntaxError, source: str) -> ProgramError:
    message = (e.msg or "invalid syntax").rstrip(".")
    if "integer string conversion" in message:  # CPython's 4,300-digit guard
        message = "this number has too many digits"
    if e.lineno is None:
        return ProgramError(f"syntax error: {message}", code="syntax")
    lines = source_lines(source)
    line_text = lines[e.lineno - 1] if 0 < e.lineno <= len(lines) else ""
    column = e.offset or 1
    # CPython counts the offset in characters for str sources; keep it on the line.
    column = max(1, min(column, len(line_text) + 1))
    hint = ""
    if "'" in line_text or '"' in line_text:
        hint = " (strings are not part of the language)"
    return ProgramError(f"syntax error: {message}{hint}", e.lineno, column, code="syntax")


# What max_depth counts (README, "Limits"). Two nestings, each at most max_depth deep:
# - brackets: `(`, `[` and `{` open at one point of the text, outside comments (check_text);
# - constructs: each call, index, operator, list or tuple, `.T` and for-loop is one level for
#   what is inside it: `tanh(tanh(x))` is 2, `--x` is 2, `x[0][0]` is 2, `x**x**x` is 2, two
#   nested loops are 2, and `y = tanh(x)` in the inner one is 3. Names and numbers are no
#   level. The left operand of a binary operator is beside it, not inside it, so a flat
#   chain `a + b + c + …` is 1 however long. A loop's `range(…)` is the loop's own level, a
#   method's `.name` its call's, and a tuple of indices (`x[0, 1]`) its index's.
def nests(node: ast.AST) -> bool:
    """Is `node` a construct that counts a level (see above)?"""
    if isinstance(node, ast.expr):
        return not isinstance(node, ast.Name | ast.Constant | ast.Slice | ast.Starred)
    # compound statements: for, and those the parser refuses later (if, while, def, …)
    return isinstance(node, ast.stmt) and hasattr(node, "body")


def check_depth(tree: ast.AST, source: str, limits: Limits) -> None:
    """Refuse constructs nested deeper than max_depth, counted as above, without recursion
    (the parser after this one recurses, and must not meet a deeper program)."""
    # (node, levels around it, whether it is part of its parent's construct)
    stack: list[tuple[ast.AST, int, bool]] = [(tree, 0, False)]
    while stack:
        node, around, part = stack.pop()
        level = around + 1 if nests(node) and not part else around
        if level > limits.max_depth:
            line = getattr(node, "lineno", None)
            col = getattr(node, "col_offset", None)
            column = None if col is None or line is None else char_column(source, line, col)
            raise ProgramError(
                f"the program is nested more than {limits.max_depth} "
                f"level{'s' if limits.max_depth != 1 else ''} deep (max_depth)",
                line,
                column,
                code="too_deep",
                limit="max_depth",
            )
        for child in ast.iter_child_nodes(node):
            beside = isinstance(node, ast.BinOp) and child is node.left
            part_of = (
                (isinstance(node, ast.For) and child is node.iter)
                or (isinstance(node, ast.Call) and child is node.func)
                or (
                    isinstance(node, ast.Subscript)
                    and child is node.slice
                    and isinstance(child, ast.Tuple)
                )
            )
            stack.append((child, around if beside else level, part_of))


def char_column(source: str, line: int, byte_offset: int) -> int:
    """ast counts columns in UTF-8 bytes; students count characters (1-based)."""
    lines = source_lines(source)
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1


# --- the parser proper -------------------------------------------------------------------------


class Parser:
    """Turns an allowed AST into IR. Every handler is in one table; the rest is refused."""

    def __init__(self, source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits
        self.lines = source_lines(source)
        self.assigned: set[str] = set()
        self.free: list[str] = []
        self.label_names: set[str] = set()
        self.loop_vars: list[str] = []
        self.every_assigned: set[str] = set()
        self.expr_handlers: dict[type, Callable[[Any], ir.Expr]] = {
            ast.Constant: self.constant,
            ast.Name: self.name,
            ast.BinOp: self.binop,
            ast.UnaryOp: self.unary,
            ast.Call: self.call,
            ast.Subscript: self.subscript,
            ast.Attribute: self.attribute,
            ast.List: self.list_literal,
            ast.Tuple: self.list_literal,
        }

    # positions
    def span(self, node: Any) -> Span:
        line = node.lineno
        end_line = node.end_lineno or line
        return Span(
            line,
            char_column(self.source, line, node.col_offset),
            end_line,
            char_column(self.source, end_line, node.end_col_offset or node.col_offset),
        )

    def error(self, node: Any, message: str, code: str = "invalid", **kw: Any) -> ProgramError:
        s = self.span(node)
        return ProgramError(
            message, s.line, s.column, end_line=s.end_line, end_column=s.end_column, code=code, **kw
        )

    def refuse(self, node: ast.AST) -> ProgramError:
        what = CONSTRUCT_NAMES.get(type(node))
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            what = "a string"
        what = what or f"this kind of code ({type(node).__name__})"
        return self.error(node, f"{what} is not part of the language", "unsupported")

    # program and statements
    def program(self, tree: ast.Module) -> ir.Program:
        self.collect_label_names(tree)
        self.every_assigned = {
            t.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        body = self.block(tree.body, top=True)
        if not body:
            raise ProgramError("the program has no statements", 1, 1, code="empty")
        return ir.Program(body, self.source, tuple(self.free), frozenset(self.label_names))

    def collect_label_names(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "cross_entropy"
                and len(node.args) == 2
                and isinstance(node.args[1], ast.Name)
            ):
                self.label_names.add(node.args[1].id)

    def block(self, stmts: list[ast.stmt], top: bool = False) -> tuple[ir.Stmt, ...]:
        out = []
        for i, stmt in enumerate(stmts):
            last = top and i == len(stmts) - 1
            out.append(self.statement(stmt, last))
        return tuple(out)

    def statement(self, node: ast.stmt, last: bool) -> ir.Stmt:
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                raise self.error(node, "assign to one name at a time: name = expression")
            target = node.targets[0].id
            self.check_name(node.targets[0], target)
            if target in FUNCTIONS:
                raise self.error(
                    node.targets[0], f"'{target}' is a function name; choose another name"
                )
            if target in self.loop_vars:
                raise self.error(
                    node.targets[0],
                    f"'{target}' is the loop variable; it cannot be assigned inside its loop",
                )
            if target in self.label_names:
                expr: ir.Expr = self.labels(node.value)
            else:
                expr = self.expr(node.value)
            self.assigned.add(target)
            return ir.Assign(target, expr, self.span(node))
        if isinstance(node, ast.Expr):
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "seed"
            ):
                if len(value.args) != 1 or value.keywords:
                    raise self.error(value, "seed takes one whole number: seed(0)")
                n = self.static_value(value.args[0])
                if n < 0:
                    raise self.error(
                        value.args[0], "seed takes a whole number ≥ 0: seed(0)", "static"
                    )
                return ir.Seed(n, self.span(node))
            if not last:
                raise self.error(
                    node,
                    "only the last statement can be a bare expression; "
                    "give this one a name: name = …",
                    "bare_expression",
                )
            return ir.Output(self.expr(value), self.span(node))
        if isinstance(node, ast.For):
            return self.loop(node)
        if isinstance(node, ast.AugAssign):
            raise self.error(
                node,
                "augmented assignment (+=, *=, …) is not part of the language: write x = x + …",
                "unsupported",
            )
        raise self.refuse(node)

    def loop(self, node: ast.For) -> ir.Loop:
        if node.orelse:
            raise self.error(node, "a for loop cannot have an else block", "unsupported")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be one name: for i in range(n)")
        it = node.iter
        if not (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name)
            and it.func.id == "range"
            and 1 <= len(it.args) <= 3
            and not it.keywords
        ):
            raise self.error(
                it, "a loop must be for name in range(n) with a constant n", "unsupported"
            )
        bounds = [self.static(a) for a in it.args]
        start, stop, step = (
            (ir.SInt(0), bounds[0], ir.SInt(1))
            if len(bounds) == 1
            else (bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else ir.SInt(1))
        )
        var = node.target.id
        self.check_name(node.target, var)
        if var in FUNCTIONS:
            raise self.error(node.target, f"'{var}' is a function name; choose another name")
        self.loop_vars.append(var)
        try:
            body = self.block(node.body)
        finally:
            self.loop_vars.pop()
        return ir.Loop(var, start, stop, step, body, self.span(node))

    # expressions
    def expr(self, node: ast.AST) -> ir.Expr:
        handler = self.expr_handlers.get(type(node))
        if handler is None:
            raise self.refuse(node)
        return handler(node)

    def constant(self, node: ast.Constant) -> ir.Expr:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, int | float):
            if isinstance(v, complex):
                raise self.error(
                    node, "complex numbers are not part of the language", "unsupported"
                )
            raise self.refuse(node)
        value = float(v) if isinstance(v, float) or abs(v) < 2**1023 else float("inf")
        if not np.isfinite(value):
            raise self.error(node, "this number is too large for a float64", "non_finite")
        return ir.Num(value, self.span(node))

    def check_name(self, node: ast.AST, name: str) -> None:
        if name.startswith("__"):
            raise self.error(
                node,
                f"names starting with __ ('{name[:40]}') are not part of the language",
                "unsupported",
            )

    def name(self, node: ast.Name) -> ir.Expr:
        name = node.id
        self.check_name(node, name)
        if name in self.loop_vars:
            return ir.Name(name, self.span(node))  # the build reads it as a constant
        if name in FUNCTIONS:
            raise self.error(node, f"'{name}' is a function: call it, as in {name}(…)")
        if name in self.label_names and name not in self.assigned and name not in self.free:
            self.free.append(name)
        elif name not in self.assigned and name not in self.free:
            if self.assigned_later(name):
                raise self.error(node, f"'{name}' is used before it is assigned", "unbound")
            self.free.append(name)
        return ir.Name(name, self.span(node))

    def assigned_later(self, name: str) -> bool:
        """Is `name` assigned anywhere in the program (so using it now is too early)?"""
        return name in self.every_assigned

    def binop(self, node: ast.BinOp) -> ir.Expr:
        op = BIN_OPS.get(type(node.op))
        if op is None:
            symbol = {
                ast.Mod: "%",
                ast.FloorDiv: "//",
                ast.LShift: "<<",
                ast.RShift: ">>",
                ast.BitOr: "|",
                ast.BitAnd: "&",
                ast.BitXor: "^",
            }.get(type(node.op), "?")
            raise self.error(
                node,
                f"the operator {symbol} is not part of the language (use + - * / ** @)",
                "unsupported",
            )
        # `a + b + c + …` is a left-leaning chain: walk its spine with a loop, not recursion,
        # so a long flat sum is not mistaken for deep nesting.
        spine = [node]
        while isinstance(spine[-1].left, ast.BinOp) and type(spine[-1].left.op) in BIN_OPS:
            spine.append(spine[-1].left)
        result = self.expr(spine[-1].left)
        for link in reversed(spine):
            result = ir.BinOp(
                BIN_OPS[type(link.op)], result, self.expr(link.right), self.span(link)
            )
        return result

    def unary(self, node: ast.UnaryOp) -> ir.Expr:
        if isinstance(node.op, ast.UAdd):
            return self.expr(node.operand)
        if not isinstance(node.op, ast.USub):
            raise self.error(node, "only - and + can stand before a value", "unsupported")
        operand = self.expr(node.operand)
        if isinstance(operand, ir.Num):  # -2 is a number, not an op
            return ir.Num(-operand.value, self.span(node))
        return ir.Neg(operand, self.span(node))

    def list_literal(self, node: ast.List | ast.Tuple) -> ir.Expr:
        def numbers(n: ast.AST, rank: int = 1) -> Any:
            if isinstance(n, ast.List | ast.Tuple):
                if rank > MAX_RANK:  # else NumPy's own ValueError past 64 reads as ragged rows
                    raise self.error(
                        node,
                        f"a value can have at most {MAX_RANK} dimensions "
                        "(NumPy broadcasts no more); this list nests deeper",
                        "shape",
                    )
                return [numbers(e, rank + 1) for e in n.elts]
            if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub | ast.UAdd):
                inner = numbers(n.operand)
                if isinstance(inner, list):
                    raise self.error(n, "a minus sign can stand only before a number here")
                return -inner if isinstance(n.op, ast.USub) else inner
            if (
                isinstance(n, ast.Constant)
                and isinstance(n.value, int | float)
                and not isinstance(n.value, bool)
            ):
                return self.constant(n).value  # type: ignore[union-attr]
            raise self.error(n, "a list can hold only numbers (or lists of numbers)", "bad_list")

        data = numbers(node)
        try:
            array = np.array(data, dtype=np.float64)
        except ValueError:
            raise self.error(
                node, "the rows of this list have different lengths", "bad_list"
            ) from None
        if array.size > self.limits.max_tensor_elements:
            raise self.error(
                node,
                f"this list has {array.size:,} numbers; the limit is "
                f"{self.limits.max_tensor_elements:,} (max_tensor_elements)",
                "too_large",
                limit="max_tensor_elements",
            )
        if array.size == 0:
            raise self.error(node, "an empty list has no values", "bad_list")
        return ir.Array(array, self.span(node))

    def labels(self, node: ast.AST) -> ir.Labels:
        def one(n: ast.AST) -> int:
            if isinstance(n, ast.Constant) and type(n.value) is int:
                return int(n.value)
            raise self.error(n, "class labels are whole numbers: 0, 1, 2, …", "labels")

        if isinstance(node, ast.List | ast.Tuple):
            if not node.elts:
                raise self.error(node, "an empty list of labels", "labels")
            return ir.Labels(tuple(one(e) for e in node.elts), self.span(node))
        return ir.Labels(one(node), self.span(node))

    def attribute(self, node: ast.Attribute) -> ir.Expr:
        if node.attr == "T":
            return ir.Call(
                "transpose", (self.expr(node.value),), (), self.span(node), self.span(node)
            )
        if node.attr in METHODS:
            raise self.error(
                node, f".{node.attr} is a method: call it, as in x.{node.attr}()", "unsupported"
            )
        raise self.error(
            node,
            f"attribute access (.{node.attr}) is not part of the language; "
            "only methods such as .sum(), .tanh() and .T",
            "attribute",
        )

    def subscript(self, node: ast.Subscript) -> ir.Expr:
        value = self.expr(node.value)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        key: list[ir.Static | ir.SSlice] = []
        for part in parts:
            if isinstance(part, ast.Slice):
                key.append(
                    ir.SSlice(
                        None if part.lower is None else self.static(part.lower),
                        None if part.upper is None else self.static(part.upper),
                        None if part.step is None else self.static(part.step),
                    )
                )
            else:
                key.append(self.static(part))
        return ir.Index(value, tuple(key), self.span(node))

    def call(self, node: ast.Call) -> ir.Expr:
        func = node.func
        args: list[ast.AST] = list(node.args)
        if isinstance(func, ast.Attribute):
            if func.attr not in METHODS:
                known = sorted(METHODS)
                hint = did_you_mean(func.attr, known)
                raise self.error(func, f"unknown method .{func.attr}(){hint}", "unknown_method")
            name = func.attr
            args.insert(0, func.value)
        elif isinstance(func, ast.Name):
            name = func.id
            if name not in FUNCTIONS:
                if name in self.assigned or name in self.free:
                    raise self.error(func, f"'{name}' is a value, not a function")
                hint = did_you_mean(name, sorted(FUNCTIONS - {"seed"}))
                raise self.error(func, f"unknown function '{name}'{hint}", "unknown_function")
            if name == "seed":
                raise self.error(node, "seed(n) is a statement of its own, on its own line")
        else:
            raise self.error(node, "only named functions can be called", "unsupported")
        for a in args:
            if isinstance(a, ast.Starred):
                raise self.refuse(a)
        return self.function(name, node, args)

    def function(self, name: str, node: ast.Call, args: list[ast.AST]) -> ir.Expr:
        span = self.span(node)
        func_span = self.span(node.func)
        allowed = KEYWORDS.get(name, ())
        kwargs: list[tuple[str, object]] = []
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**unpacking is not part of the language", "unsupported")
            if kw.arg not in allowed:
                can = f"; {name} takes {', '.join(allowed)}" if allowed else ""
                raise self.error(kw, f"{name}() has no keyword '{kw.arg}'{can}", "keyword")
            kwargs.append((kw.arg, self.keyword_value(kw.arg, kw.value)))

        def count(lo: int, hi: int, usage: str) -> None:
            if not lo <= len(args) <= hi:
                raise self.error(node, f"{name} takes {usage}", "arguments")

        if name == "grad":  # the gradient as a graph (engine/autograd/higher.py)
            count(2, 2, "an output and a name: grad(L, x)")
            if not isinstance(args[1], ast.Name):
                raise self.error(
                    args[1],
                    "grad(L, x) takes the gradient with respect to a "
                    "name: x must be a name bound to a value",
                    "arguments",
                )
            return ir.Call(name, (self.expr(args[0]), self.expr(args[1])), (), span, func_span)
        if name in UNARY or name in {"const", "detach"}:
            count(1, 1, f"one value: {name}(x)")
            return ir.Call(name, (self.expr(args[0]),), (), span, func_span)
        if name in BINARY:
            count(2, 2, f"two values: {name}(a, b)")
            return ir.Call(name, (self.expr(args[0]), self.expr(args[1])), (), span, func_span)
        if name == "cross_entropy":
            count(2, 2, "logits and labels: cross_entropy(z, t)")
            second = args[1]
            labels: ir.Expr = (
                self.name(second) if isinstance(second, ast.Name) else self.labels(second)
            )
            return ir.Call(name, (self.expr(args[0]), labels), (), span, func_span)
        if name in ("sum", "mean", "softmax", "log_softmax"):
            count(1, 2, f"a value and an optional axis: {name}(x, axis=…)")
            if len(args) == 2:
                if any(k == "axis" for k, _ in kwargs):
                    raise self.error(node, "axis is given twice", "arguments")
                kwargs.append(("axis", self.axis(args[1])))
            return ir.Call(name, (self.expr(args[0]),), tuple(kwargs), span, func_span)
        if name in ("reshape", "transpose"):
            if name == "reshape" and len(args) < 2:
                raise self.error(node, "reshape needs a shape: reshape(x, (2, 3))", "arguments")
            shape: tuple[Any, ...] = ()
            if len(args) == 2 and isinstance(args[1], ast.Tuple | ast.List):
                shape = tuple(self.static(e) for e in args[1].elts)
            elif len(args) >= 2:
                shape = tuple(self.static(e) for e in args[1:])
            if name == "transpose" and kwargs:
                if len(args) > 1:
                    raise self.error(node, "axes is given twice", "arguments")
                axes = kwargs[0][1]
                shape = axes if isinstance(axes, tuple) else ()
            rest: tuple[ir.Expr | ir.StaticArg, ...] = (self.expr(args[0]),)
            if shape or name == "reshape":
                rest += (ir.StaticArg(shape, span),)
            return ir.Call(name, rest, (), span, func_span)
        if name in CONSTRUCTORS:
            return self.constructor(name, node, args, span, func_span)
        raise self.error(node, f"unknown function '{name}'", "unknown_function")

    def constructor(
        self, name: str, node: ast.Call, args: list[ast.AST], span: Span, func_span: Span
    ) -> ir.Expr:
        if name == "full":
            if len(args) != 2:
                raise self.error(
                    node, "full takes a shape and a number: full((2, 3), 0.5)", "arguments"
                )
            shape_node = args[0]
            dims = shape_node.elts if isinstance(shape_node, ast.Tuple | ast.List) else [shape_node]
            fill = self.expr(args[1])
            if not isinstance(fill, ir.Num):
                raise self.error(args[1], "full's fill value must be a number", "arguments")
            return ir.Call(
                name,
                (ir.StaticArg(tuple(self.static(d) for d in dims), span), fill),
                (),
                span,
                func_span,
            )
        if name == "arange":
            if len(args) != 1:
                raise self.error(node, "arange takes one whole number: arange(5)", "arguments")
            return ir.Call(
                name, (ir.StaticArg((self.static(args[0]),), span),), (), span, func_span
            )
        if len(args) == 1 and isinstance(args[0], ast.Tuple | ast.List):
            dims = list(args[0].elts)
        else:
            dims = args
        if not dims:
            raise self.error(node, f"{name} needs a shape: {name}(2, 3)", "arguments")
        return ir.Call(
            name, (ir.StaticArg(tuple(self.static(d) for d in dims), span),), (), span, func_span
        )

    def keyword_value(self, key: str, node: ast.AST) -> object:
        if key == "keepdims":
            if isinstance(node, ast.Constant) and isinstance(node.value, bool):
                return node.value
            raise self.error(node, "keepdims is True or False", "keyword")
        if key == "axis":
            return self.axis(node)
        if key == "axes":
            if isinstance(node, ast.Constant) and node.value is None:
                return None
            if isinstance(node, ast.Tuple | ast.List):
                return tuple(self.static(e) for e in node.elts)
            raise self.error(node, "axes is a tuple of whole numbers: axes=(1, 0)", "keyword")
        raise self.error(node, f"unknown keyword {key}", "keyword")

    def axis(self, node: ast.AST) -> object:
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self.static(e) for e in node.elts)
        return self.static(node)

    # static ints
    def static(self, node: ast.AST) -> ir.Static:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            if abs(node.value) > 2**62:
                raise self.error(node, "this whole number is too large", "too_large")
            return ir.SInt(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.static(node.operand)
            if isinstance(inner, ir.SInt):
                return ir.SInt(-inner.value)
            return ir.SBin("-", ir.SInt(0), inner, self.span(node))
        if isinstance(node, ast.Name) and node.id in self.loop_vars:
            return ir.SVar(node.id, self.span(node))
        if isinstance(node, ast.BinOp) and type(node.op) in STATIC_OPS:
            return ir.SBin(
                STATIC_OPS[type(node.op)],
                self.static(node.left),
                self.static(node.right),
                self.span(node),
            )
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            raise self.error(node, "a whole number is needed here, not a fraction", "static")
        if isinstance(node, ast.Name):
            raise self.error(
                node,
                f"'{node.id}' is a value, but a fixed whole number (or a "
                "loop variable) is needed here",
                "static",
            )
        raise self.error(node, "a fixed whole number (or a loop variable) is needed here", "static")

    def static_value(self, node: ast.AST) -> int:
        s = self.static(node)
        if not isinstance(s, ir.SInt):
            raise self.error(node, "a fixed whole number is needed here", "static")
        return s.value


def did_you_mean(word: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" — did you mean '{close[0]}'?" if close else ""
