"""What every part of the parser shares: its state, the span of a syntax node, the error that
points at one (a refusal names what was written), and the fixed whole numbers of shapes,
indices and loop bounds, which stay symbolic (`ir.Static`) because they may read a loop variable.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any

from engine.autograd.value import Span
from engine.errors import ProgramError
from engine.language import ir
from engine.language.positions import char_column, source_lines
from engine.language.vocabulary import STATIC_OPS
from engine.limits import Limits

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
    ast.AsyncFunctionDef: "async def",
    ast.AsyncFor: "async for",
    ast.AsyncWith: "async with",
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


class ParserBase:
    """The parser's state and the helpers its parts share (parse.Parser is the whole)."""

    def __init__(self, source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits
        self.lines = source_lines(source)
        self.assigned: set[str] = set()
        self.free: list[str] = []
        self.label_names: set[str] = set()
        self.loop_vars: list[str] = []
        self.every_assigned: set[str] = set()

    def expr(self, node: ast.AST) -> ir.Expr:
        """An expression as IR (parse.Parser's table of handlers)."""
        raise NotImplementedError

    def name(self, node: ast.Name) -> ir.Expr:
        """A name read as a value (parse.Parser)."""
        raise NotImplementedError

    def check_name(self, node: ast.AST, name: str) -> None:
        """A name the program binds or reads: never one of Python's own `__…` names."""
        if name.startswith("__"):
            raise self.error(
                node,
                f"names starting with __ ('{name[:40]}') are not part of the language",
                "unsupported",
            )

    # positions and errors
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
            # A flat chain `1 + 1 + …` is one level however long (max_depth counts it so): its
            # left spine is walked in a loop, never by recursion.
            spine: list[ast.BinOp] = []
            while isinstance(node, ast.BinOp) and type(node.op) in STATIC_OPS:
                spine.append(node)
                node = node.left
            result = self.static(node)
            for b in reversed(spine):
                result = ir.SBin(STATIC_OPS[type(b.op)], result, self.static(b.right), self.span(b))
            return result
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

    def statics(self, nodes: Iterable[ast.AST]) -> tuple[ir.Static, ...]:
        return tuple(self.static(e) for e in nodes)
