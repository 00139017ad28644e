"""The program's expressions as Python text for PyTorch or for JAX (the code lesson): its own
syntax tree written back, its names kept (or renamed, names.py), its functions spelled as
each framework spells them (spellings.py, methods.py), with Python's precedence.

A long flat chain `x + x + … + x` is written with a loop down its left operands: the language
lets such a chain run to max_nodes terms, far past Python's recursion limit (everything else
nests at most max_depth deep). What the writer has no spelling for is refused at its place.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from engine.errors import ProgramError
from engine.language.scan import Scan
from engine.language.source import Source
from engine.lessons.code.facts import Facts
from engine.lessons.code.text import (
    AND,
    ATOM,
    BINARY,
    BOR,
    COMPARE,
    COMPARISONS,
    DOUBLE,
    IFEXP,
    LAMBDA,
    NOT,
    OR,
    POWER,
    SINGLE,
    UNARY,
    UNARY_OPS,
    number_text,
    unwritable,
)  # fmt: skip
from engine.library.names import BARE, CONSTANTS, MODULES

# The library's own draws (engine/library/draws.py: torch's generator, NumPy's RandomState)
# and seeds as the lesson writes them: its code draws from NumPy's generator in program order,
# so a torch.manual_seed program's written code draws other numbers than the run (issue 25).
LESSON_NAMES = {
    "torch_randn": "randn", "torch_rand": "rand", "torch_randn_like": "randn_like",
    "torch_rand_like": "rand_like", "np_randn": "randn", "np_rand": "rand",
    "manual_seed": "seed", "np_seed": "seed",
}  # fmt: skip


def lesson_name(name: str) -> str:
    return LESSON_NAMES.get(name, name)


@dataclass(eq=False)
class Context:
    """What both writers read: the program, its run's facts, the names the code gives it."""

    src: Source
    scan: Scan
    facts: Facts
    names: dict[str, str]  # program name -> name in the code (names.code_names)
    aliases: dict[str, str]  # a name an import binds -> the module or function it is
    own: set[str]  # the names the program binds (not imports)
    built: set[int] = field(default_factory=set)  # the nodes of gradients built as graphs
    # how often each name is bound at the program's level, with and without `x += e`
    counts: tuple[dict[str, int], dict[str, int]] = ({}, {})

    def path(self, node: ast.AST) -> str | None:
        """`np.random.randn` as "numpy.random.randn" when its first name is an import."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.own or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(parts)])

    def callee(self, func: ast.expr) -> tuple[str, str]:
        """What a call calls: ("library", its library name), ("builtin", name), ("module",
        path), ("method", attribute) of a value, or ("program", "") for the program's own."""
        from engine.library.builtins import BUILTINS

        path = self.path(func)
        if path is not None:
            module, _, attr = path.rpartition(".")
            if module in MODULES and attr in MODULES[module]:
                return "library", lesson_name(str(MODULES[module][attr]))
            return "module", path
        if isinstance(func, ast.Attribute):
            return "method", func.attr
        if isinstance(func, ast.Name) and func.id not in self.own:
            if func.id in BUILTINS:
                return "builtin", func.id
            if func.id in BARE:
                return "library", str(BARE[func.id])
        return "program", ""


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Each name an import binds, and the module (or module function) it is (imports are
    statements: the expressions are not walked)."""
    found: dict[str, str] = {}
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            for a in node.names:
                root = a.name.split(".")[0]
                found[a.asname or root] = a.name if a.asname else root
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                found[a.asname or a.name] = f"{node.module}.{a.name}"
        for field_name in ("body", "orelse"):
            todo += [n for n in getattr(node, field_name, []) if isinstance(n, ast.stmt)]
    return found


class Writer:
    """Writes expressions for one framework: "torch" or "jax"."""

    def __init__(self, ctx: Context, flavour: str) -> None:
        self.ctx = ctx
        self.flavour = flavour
        self.torch = flavour == "torch"

    def refuse(self, node: Any) -> ProgramError:
        return unwritable(self.ctx.src, node)

    def name(self, name: str) -> str:
        return self.ctx.names.get(name, name)

    def expr(self, node: ast.AST, prec: int = 0) -> str:
        text, own = self.written(node)
        return f"({text})" if own < prec else text

    def written(self, node: ast.AST) -> tuple[str, int]:
        """`node` as text, and the binding strength of what was written."""
        handler: Any = HANDLERS.get(type(node))
        if handler is None:
            raise self.refuse(node)
        return handler(self, node)  # type: ignore[no-any-return]

    # --- atoms --------------------------------------------------------------------------------
    def constant(self, node: ast.Constant) -> tuple[str, int]:
        v = node.value
        if isinstance(v, str | bool) or v is None:
            return repr(v), ATOM
        if isinstance(v, int | float):
            text = number_text(v)
            return text, UNARY if text.startswith("-") else ATOM
        raise self.refuse(node)

    def variable(self, node: ast.Name) -> tuple[str, int]:
        kind, what = self.ctx.callee(node)
        if kind == "library" and node.id not in self.ctx.scan.free:
            from engine.lessons.code.calls import function_value

            return function_value(self, what, node), ATOM
        if kind == "module":
            raise self.refuse(node)
        return self.name(node.id), ATOM

    def attribute(self, node: ast.Attribute) -> tuple[str, int]:
        path = self.ctx.path(node)
        if path is not None:
            module, _, attr = path.rpartition(".")
            if attr in CONSTANTS and module in ("math", "numpy", "torch", "jax.numpy"):
                value = CONSTANTS[attr]
                return (
                    (number_text(value), ATOM) if value != float("inf") else ('float("inf")', ATOM)
                )
            if module == "torch" and attr in ("float64", "double", "float32", "float"):
                return "torch.float64" if self.torch else "jnp.float64", ATOM
            if module in MODULES and attr in MODULES[module]:
                from engine.lessons.code.calls import function_value

                return function_value(self, lesson_name(str(MODULES[module][attr])), node), ATOM
            raise self.refuse(node)
        from engine.lessons.code.methods import attribute_of

        return attribute_of(self, node), ATOM

    def subscript(self, node: ast.Subscript) -> tuple[str, int]:
        key = node.slice
        parts = key.elts if isinstance(key, ast.Tuple) and key.elts else [key]
        op = self.ctx.facts.op_at(node)
        lists = op.op.key if op is not None and op.op is not None and op.op.name == "gather" else ()  # type: ignore[attr-defined]
        text = ", ".join(
            self.key_part(p, i < len(lists) and isinstance(lists[i], tuple))
            for i, p in enumerate(parts)
        )
        if isinstance(key, ast.Tuple) and len(key.elts) == 1:
            text += ","
        return f"{self.expr(node.value, ATOM)}[{text}]", ATOM

    def key_part(self, p: ast.expr, listed: bool = False) -> str:
        """One part of an index; in JAX an index list is an array (`listed`: the run read a
        list of indices there)."""
        if isinstance(p, ast.Slice):
            text = (self.expr(p.lower) if p.lower else "") + ":"
            text += self.expr(p.upper) if p.upper else ""
            return text + (":" + self.expr(p.step) if p.step else "")
        if self.torch or not (listed or isinstance(p, ast.List | ast.Tuple | ast.Call)):
            return self.expr(p)
        if isinstance(p, ast.Call) and self.ctx.callee(p.func) == ("builtin", "range"):
            return f"jnp.arange({self.arguments(p)})"
        return f"jnp.asarray({self.expr(p)})"  # JAX indexes with arrays, not lists or ranges

    # --- operators ----------------------------------------------------------------------------
    def binop(self, node: ast.BinOp) -> tuple[str, int]:
        spine: list[ast.BinOp] = [node]
        while isinstance(spine[-1].left, ast.BinOp):
            spine.append(spine[-1].left)
        first = spine[-1]
        text = self.operand(first.left, first, self.left_prec(first))
        own = ATOM
        for link in reversed(spine):
            symbol, own = BINARY.get(type(link.op), ("", -1))
            if not symbol:
                raise self.refuse(link)
            if spine[-1] is not link:
                text = f"({text})" if self.left_prec(link) > self.inner_prec(link.left) else text
            right = self.operand(link.right, link, own + 1 if own != POWER else UNARY)
            text = f"{text}**{right}" if own == POWER else f"{text} {symbol} {right}"
        return text, own

    @staticmethod
    def left_prec(link: ast.BinOp) -> int:
        own = BINARY.get(type(link.op), ("", 0))[1]
        return own if own != POWER else POWER + 1

    @staticmethod
    def inner_prec(node: ast.expr) -> int:
        return BINARY.get(type(node.op), ("", ATOM))[1] if isinstance(node, ast.BinOp) else ATOM

    def operand(self, node: ast.expr, op: ast.BinOp, prec: int) -> str:
        """One side of a binary operator: a list beside a tensor is a tensor in PyTorch."""
        if self.torch and isinstance(node, ast.List | ast.Tuple) and self.ctx.facts.op_at(op):
            return f"torch.tensor({self.expr(node)})"
        return self.expr(node, prec)

    def unary(self, node: ast.UnaryOp) -> tuple[str, int]:
        symbol = UNARY_OPS[type(node.op)]
        own = NOT if isinstance(node.op, ast.Not) else UNARY
        return symbol + self.expr(node.operand, own), own

    def boolop(self, node: ast.BoolOp) -> tuple[str, int]:
        own = AND if isinstance(node.op, ast.And) else OR
        word = " and " if own == AND else " or "
        return word.join(self.expr(v, own + 1) for v in node.values), own

    def compare(self, node: ast.Compare) -> tuple[str, int]:
        text = self.expr(node.left, COMPARE + 1)
        for op, right in zip(node.ops, node.comparators, strict=True):
            text += f" {COMPARISONS[type(op)]} {self.expr(right, COMPARE + 1)}"
        return text, COMPARE

    def if_expression(self, node: ast.IfExp) -> tuple[str, int]:
        body, test = self.expr(node.body, OR), self.expr(node.test, OR)
        return f"{body} if {test} else {self.expr(node.orelse, IFEXP)}", IFEXP

    # --- containers, functions, strings -------------------------------------------------------
    def sequence(self, node: ast.List | ast.Tuple | ast.Set) -> tuple[str, int]:
        items = ", ".join(self.item(e) for e in node.elts)
        if isinstance(node, ast.List):
            return f"[{items}]", ATOM
        if isinstance(node, ast.Set):
            return "{" + items + "}", ATOM
        return f"({items}{',' if len(node.elts) == 1 else ''})", ATOM

    def item(self, e: ast.expr) -> str:
        if isinstance(e, ast.Starred):
            return "*" + self.expr(e.value, BOR)
        return self.expr(e, IFEXP)

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> tuple[str, int]:
        parts = [self.expr(node.elt, IFEXP)]
        for g in node.generators:
            parts.append(f"for {self.target(g.target)} in {self.expr(g.iter, OR)}")
            parts += [f"if {self.expr(c, OR)}" for c in g.ifs]
        inner = " ".join(parts)
        return (f"[{inner}]" if isinstance(node, ast.ListComp) else f"({inner})"), ATOM

    def target(self, node: ast.expr) -> str:
        """An assignment's or a loop's target, a tuple of them without brackets."""
        if isinstance(node, ast.Tuple) and node.elts:
            items = ", ".join(self.item(e) for e in node.elts)
            return items + ("," if len(node.elts) == 1 else "")
        return self.expr(node)

    def lambda_expression(self, node: ast.Lambda) -> tuple[str, int]:
        params = self.parameters(node.args)
        return f"lambda{' ' if params else ''}{params}: {self.expr(node.body)}", LAMBDA

    def parameters(self, a: ast.arguments) -> str:
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.refuse(a.vararg or a.kwarg or (a.kwonlyargs or a.posonlyargs)[0])
        plain = len(a.args) - len(a.defaults)
        return ", ".join(
            self.name(p.arg)
            if i < plain
            else f"{self.name(p.arg)}={self.expr(a.defaults[i - plain])}"
            for i, p in enumerate(a.args)
        )

    def fstring(self, node: ast.JoinedStr) -> tuple[str, int]:
        body, exprs = self.fstring_body(node)
        quote = next((q for q in ('"', "'") if all(q not in e for e in exprs)), None)
        if quote is None:
            raise self.refuse(node)
        for mark, q in ((SINGLE, "'"), (DOUBLE, '"')):
            body = body.replace(mark, "\\" + q if q == quote else q)
        return "f" + quote + body + quote, ATOM

    def fstring_body(self, node: ast.JoinedStr) -> tuple[str, list[str]]:
        """The text between an f-string's quotes (its quote marks as SINGLE and DOUBLE, for
        the caller to escape), and the expressions in it."""
        parts: list[str] = []
        exprs: list[str] = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                text = repr(str(v.value))[1:-1].replace("\\'", "'")
                text = text.replace("'", SINGLE).replace('"', DOUBLE)
                parts.append(text.replace("{", "{{").replace("}", "}}"))
            elif isinstance(v, ast.FormattedValue):
                inner = self.expr(v.value, IFEXP)
                exprs.append(inner)
                conversion = "" if v.conversion == -1 else "!" + chr(v.conversion)
                spec = ""
                if isinstance(v.format_spec, ast.JoinedStr):
                    spec_text, spec_exprs = self.fstring_body(v.format_spec)
                    spec, exprs = ":" + spec_text, exprs + spec_exprs
                pad = " " if inner.startswith("{") else ""
                parts.append("{" + pad + inner + conversion + spec + "}")
            else:
                raise self.refuse(v)
        return "".join(parts), exprs

    def call(self, node: ast.Call) -> tuple[str, int]:
        from engine.lessons.code.calls import call_text

        return call_text(self, node)

    def arguments(self, node: ast.Call, skip: int = 0) -> str:
        """A call's arguments as written (after the first `skip`)."""
        parts = [self.item(a) for a in node.args[skip:]]
        for kw in node.keywords:
            if kw.arg is None:
                raise self.refuse(kw.value)
            parts.append(f"{kw.arg}={self.expr(kw.value, IFEXP)}")
        return ", ".join(parts)


HANDLERS = {
    ast.Constant: Writer.constant, ast.Name: Writer.variable, ast.Attribute: Writer.attribute,
    ast.Subscript: Writer.subscript, ast.BinOp: Writer.binop, ast.UnaryOp: Writer.unary,
    ast.BoolOp: Writer.boolop, ast.Compare: Writer.compare, ast.IfExp: Writer.if_expression,
    ast.List: Writer.sequence, ast.Tuple: Writer.sequence, ast.Set: Writer.sequence,
    ast.ListComp: Writer.comprehension, ast.GeneratorExp: Writer.comprehension,
    ast.Lambda: Writer.lambda_expression, ast.JoinedStr: Writer.fstring, ast.Call: Writer.call,
}  # fmt: skip
