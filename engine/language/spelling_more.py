"""More of the spellings students already write, the parser's part: keywords that name a
position (`linspace(0, 1, steps=5)`, `randn(size=(2, 3))`), numbers written as constant
expressions (`2. * math.pi`, `-np.pi`), `norm` and `square` as the ops they are made of
(`sqrt(sum(x ** 2))`, `x ** 2`), conversions that change nothing here (`.double()`,
`.float()`: every value is float64), `.data` (a constant view: `const(x)`), `.item()` (a
number), `x.requires_grad = True` as a statement, and the tensors made from numbers, a shape
or a range (`tensor`, `zeros`, `linspace`), which read all of these. calls.py builds on it.
"""

from __future__ import annotations

import ast
import math

from engine.autograd.value import Span
from engine.errors import ProgramError
from engine.language import ir
from engine.language.modules import CONSTANTS
from engine.language.shown_ir import Shown
from engine.language.spelling import SpellingParser

# function -> its positional parameters, each with the keywords that may name it (PyTorch's
# first, then NumPy's): `linspace(0., 1., steps=25)` is `linspace(0., 1., 25)`.
POSITIONAL = {
    "linspace": (("start",), ("end", "stop"), ("steps", "num")),
    "full": (("size", "shape"), ("fill_value",)),
    **{f: (("size", "shape"),) for f in ("randn", "rand", "zeros", "ones")},
}
# Methods that convert a tensor's type: every value is float64 already, so they change nothing.
CONVERSIONS = ("double", "float")
FOLDED = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
FOLD_TEXT = 60  # a constant expression is named in a message up to this many characters
LIKE = {"zeros_like": "zeros", "ones_like": "ones", "randn_like": "randn", "rand_like": "rand"}


def whole_only(node: ast.AST) -> bool:
    """Is this written with whole numbers only (no fraction, no constant, no `/`)?"""
    return not any(
        isinstance(n, ast.Attribute)
        or (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div))
        or (isinstance(n, ast.Constant) and isinstance(n.value, float))
        for n in ast.walk(node)
    )


class MoreSpellingParser(SpellingParser):
    """Positional keywords, constant expressions, norm, conversions (parse.Parser is whole)."""

    def count(
        self, name: str, node: ast.Call, args: list[ast.AST], usage: str, lo: int, hi: int = 0
    ) -> None:
        """Refuse a call without lo (to hi) arguments (calls.CallParser)."""
        raise NotImplementedError

    # --- numbers written as expressions ---------------------------------------------------
    def fold(self, node: ast.AST) -> float | None:
        """The number a constant expression stands for (`2. * math.pi`, `-np.pi`, `1 / 3`), or
        None when it reads anything but numbers and module constants. An explicit stack, not
        recursion: a flat chain `1 + 1 + …` may be as long as the source."""
        values: list[float] = []
        todo: list[tuple[ast.AST, bool]] = [(node, False)]
        while todo:
            n, ready = todo.pop()
            if isinstance(n, ast.BinOp) and type(n.op) in FOLDED:
                if not ready:
                    todo += [(n, True), (n.right, False), (n.left, False)]
                    continue
                b, a = values.pop(), values.pop()
                values.append(self.fold_op(n, FOLDED[type(n.op)], a, b))
            elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub | ast.UAdd):
                if not ready:
                    todo += [(n, True), (n.operand, False)]
                elif isinstance(n.op, ast.USub):
                    values[-1] = -values[-1]
            else:
                leaf = self.fold_leaf(n)
                if leaf is None:
                    return None
                values.append(leaf)
        return values[0]

    def fold_leaf(self, node: ast.AST) -> float | None:
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or not isinstance(v, int | float):
                return None
            if isinstance(v, int) and abs(v) > 2**62:
                return None  # the whole-number reading says it is too large
            number = self.constant(node)  # parse.Parser: refuses 1e400
            return number.value if isinstance(number, ir.Num) else None
        if isinstance(node, ast.Attribute):
            path = self.qualified(node)  # `math.pi` without `import math` says to import it
            return CONSTANTS.get(path) if path is not None else None
        return None

    def fold_op(self, node: ast.BinOp, op: str, a: float, b: float) -> float:
        try:
            if op == "+":
                result = a + b
            elif op == "-":
                result = a - b
            elif op == "*":
                result = a * b
            elif op == "/":
                result = a / b
            else:
                result = a**b
        except (ZeroDivisionError, OverflowError):
            result = math.nan  # 1 / 0, 10. ** 400: refused below
        if not isinstance(result, float) or not math.isfinite(result):  # (-8.) ** 0.5 is complex
            raise self.error(
                node, f"{self.folded_text(node)} does not give a finite number", "non_finite"
            )
        return result

    def constant(self, node: ast.Constant) -> ir.Expr:
        """A number written out (parse.Parser)."""
        raise NotImplementedError

    def folded_text(self, node: ast.AST) -> str:
        """A constant expression as the program writes it, cut at FOLD_TEXT characters."""
        text = " ".join((ast.get_source_segment(self.source, node) or ast.unparse(node)).split())
        return text if len(text) <= FOLD_TEXT else text[: FOLD_TEXT - 1] + "…"

    def is_constant_number(self, node: ast.AST) -> bool:
        """A number where a list of numbers may hold one: written out, or an expression of
        numbers and a module's constant (`math.pi / 2`)."""
        if not any(isinstance(n, ast.Attribute) for n in ast.walk(node)):
            return False
        return self.fold(node) is not None

    def static(self, node: ast.AST) -> ir.Static:
        """A whole number; a constant expression that is not one (`2. * math.pi`) is refused
        with its value, so the message names the problem, not a part of it."""
        try:
            return super().static(node)
        except ProgramError as err:
            if err.code != "static" or isinstance(node, ast.Constant | ast.Name):
                raise
            value = self.fold(node)
            if value is None:
                raise
            raise self.error(
                node,
                f"a whole number is needed here, not a fraction: {self.folded_text(node)} "
                f"is {value!r}",
                "static",
            ) from None

    def bound_number(self, node: ast.AST) -> ir.Num | ir.StaticArg:
        """A range's bound: a whole number as a static int (it may be a loop variable or a
        shape), else a constant expression as its number (`0.5`, `2. * math.pi`)."""
        value = self.fold(node)  # None when it reads a name (a loop variable, a shape)
        if value is None or (value.is_integer() and whole_only(node)):
            return ir.StaticArg(self.static(node), self.span(node))
        return ir.Num(value, self.span(node))  # 0.5, 2. * math.pi, 2 ** -1

    def number(self, node: ast.AST, what: str, code: str = "arguments") -> float:
        """A number written as a constant expression (full's fill, clamp's bounds)."""
        value = self.fold(node)
        if value is None:
            raise self.error(node, what, code)
        return value

    # --- keywords that name a position ----------------------------------------------------
    def positional(self, name: str, node: ast.Call, args: list[ast.AST]) -> list[ast.AST]:
        """args with the keywords that name a position (`steps=`, `size=`) put in it."""
        params = POSITIONAL.get(name)
        if params is None:
            return args
        out: list[ast.AST | None] = list(args)
        for kw in node.keywords:
            at = next((i for i, words in enumerate(params) if kw.arg in words), None)
            if at is None:
                continue
            out += [None] * (at + 1 - len(out))
            if out[at] is not None:
                raise self.error(kw, f"{kw.arg} is given twice", "arguments")
            out[at] = kw.value
        if any(a is None for a in out):
            words = ", ".join(p[0] for p in params)
            raise self.error(node, f"{name} takes {words}, in order or by name", "arguments")
        return out  # type: ignore[return-value]

    @staticmethod
    def positional_keyword(name: str, keyword: str | None) -> bool:
        return any(keyword in words for words in POSITIONAL.get(name, ()))

    # --- methods that change nothing, or make a number ------------------------------------
    def conversion(self, node: ast.Call, func: ast.Attribute) -> ir.Expr:
        """`x.double()`, `x.float()` (x itself: float64 always) and `x.item()` (a number)."""
        if node.args or node.keywords:
            raise self.error(node, f".{func.attr}() takes no arguments", "arguments")
        if func.attr == "item":
            return Shown(self.expr(func.value), "item", self.span(node))  # type: ignore[return-value]
        return self.expr(func.value)

    def data_view(self, node: ast.Attribute) -> ir.Expr:
        """`x.data`: x's value with no gradient through it, as const(x)."""
        span = self.span(node)
        return ir.Call("const", (self.expr(node.value),), (), span, span)

    def norm(
        self, node: ast.Call, args: list[ast.AST], kwargs: list[tuple[str, object]]
    ) -> ir.Expr:
        """norm(x) (`x.norm()`, `torch.norm(x)`, `np.linalg.norm(x)`): the 2-norm of all of
        x's elements, or along an axis (`dim=`), built as sqrt(sum(x ** 2)); its gradient,
        x / ‖x‖, follows from those ops'."""
        self.count("norm", node, args, "one value: norm(x), or norm(x, dim=1)", 1)
        span = self.span(node)
        square = ir.BinOp("pow", self.expr(args[0]), ir.Num(2.0, span), span)
        total = ir.Call("sum", (square,), tuple(kwargs), span, span)
        return ir.Call("sqrt", (total,), (), span, self.span(node.func))

    def square(self, node: ast.Call, args: list[ast.AST]) -> ir.Expr:
        """square(x) (`np.square(x)`, `x.square()`) is x ** 2."""
        self.count("square", node, args, "one value: square(x)", 1)
        span = self.span(node)
        return ir.BinOp("pow", self.expr(args[0]), ir.Num(2.0, span), span)

    # --- x.requires_grad = True, and other assignments to a part --------------------------
    def part_assignment(self, node: ast.Assign) -> ir.Stmt | None:
        """`x.requires_grad = True` (as x.requires_grad_()); another assignment to an attribute
        or an index is refused by name. None for an assignment to names."""
        target = node.targets[0] if len(node.targets) == 1 else None
        if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
            value = node.value
            if not isinstance(target.value, ast.Name):
                raise self.error(target, "write name.requires_grad = True for a named tensor")
            if not (isinstance(value, ast.Constant) and value.value is True):
                raise self.error(
                    value,
                    "only x.requires_grad = True is supported: a tensor without it is "
                    "already a constant",
                    "unsupported",
                )
            self.name(target.value)
            return ir.Note(ast.unparse(node), self.span(node))
        if any(isinstance(t, ast.Attribute) for t in node.targets):
            raise self.error(
                node,
                "assigning to an attribute (x.grad = …) is not part of the language; only "
                "x.requires_grad = True",
                "unsupported",
            )
        if any(isinstance(t, ast.Subscript) for t in node.targets):
            raise self.error(
                node,
                "assigning to an index (x[i] = …) is not part of the language: values are "
                "never changed in place; build a new one (cat, stack, or arithmetic)",
                "unsupported",
            )
        return None

    def note(self, node: ast.stmt) -> ir.Stmt | None:
        """A statement that makes nothing (spelling.py's), or `x.requires_grad = True`."""
        if isinstance(node, ast.Assign):
            return self.part_assignment(node)  # None for an assignment to names
        return super().note(node)

    def attribute(self, node: ast.Attribute) -> ir.Expr:
        """`x.data` as const(x); the other attributes as spelling.py reads them."""
        if node.attr == "data" and self.qualified(node) is None:
            return self.data_view(node)
        return super().attribute(node)

    # --- tensors made from numbers, a shape or a range ------------------------------------
    def made(
        self, name: str, node: ast.Call, args: list[ast.AST], span: Span, func_span: Span
    ) -> ir.Expr:
        """A tensor from numbers (`tensor([1.0, 2.0])`), a shape (`zeros(2, 3)`, `zeros_like(x)`,
        `randn(size=(2, 3))`) or a range (`arange(0, 1, 0.25)`, `linspace(0, 1, steps=5)`)."""
        if name == "tensor":
            return self.tensor_of(node, args)
        if name in LIKE:
            self.count(name, node, args, f"one value: {name}(x)", 1)
            shape = (ir.SShape(self.shape_owner(args[0]), None, self.span(args[0])),)
            return ir.Call(LIKE[name], (ir.StaticArg(shape, span),), (), span, func_span)
        if name == "full":
            if len(args) != 2:
                raise self.error(
                    node, "full takes a shape and a number: full((2, 3), 0.5)", "arguments"
                )
            shape_node = args[0]
            dims = shape_node.elts if isinstance(shape_node, ast.Tuple | ast.List) else [shape_node]
            value = self.number(args[1], "full's fill value must be a number")
            fill = ir.Num(value, self.span(args[1]))
            return ir.Call(
                name, (ir.StaticArg(self.statics(dims), span), fill), (), span, func_span
            )
        if name in ("arange", "linspace"):
            usage = "start, stop and a count: linspace(0, 1, 5)"
            if name == "arange":
                usage = "a stop, or start, stop and step: arange(4) or arange(0, 1, 0.25)"
            self.count(name, node, args, usage, *((3, 3) if name == "linspace" else (1, 3)))
            numbers = [self.bound_number(a) for a in args[:-1]]
            last = self.static(args[-1]) if name == "linspace" else None
            end = [ir.StaticArg(last, span) if last is not None else self.bound_number(args[-1])]
            return ir.Call(name, (*numbers, *end), (), span, func_span)
        if len(args) == 1 and isinstance(args[0], ast.Tuple | ast.List):
            sizes: list[ast.AST] = list(args[0].elts)
        else:
            sizes = args
        if not sizes and name not in ("randn", "rand"):  # randn() is one number
            raise self.error(node, f"{name} needs a shape: {name}(2, 3)", "arguments")
        return ir.Call(name, (ir.StaticArg(self.statics(sizes), span),), (), span, func_span)

    def tensor_of(self, node: ast.Call, args: list[ast.AST]) -> ir.Expr:
        """tensor(2.0), tensor([1.0, math.pi]); `torch.Tensor(n)` (n elements, uninitialised
        in PyTorch) is refused."""
        usage = "a number or a list of numbers: tensor([1.0, 2.0])"
        self.count("tensor", node, args, usage, 1)
        arg = args[0]
        lists = isinstance(arg, ast.List | ast.Tuple)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "Tensor" and not lists:
            raise self.error(
                node,
                "torch.Tensor(n) makes n uninitialised numbers; write torch.Tensor([n]) or "
                "torch.tensor(n) for a tensor holding n",
                "arguments",
            )
        if not lists and not isinstance(arg, ast.Constant | ast.UnaryOp):
            folded = self.fold(arg)
            if folded is not None:
                return ir.Num(folded, self.span(arg))
            raise self.error(arg, "tensor takes a number or a list of numbers", "arguments")
        value = self.expr(arg)
        if not isinstance(value, ir.Num | ir.Array):
            raise self.error(arg, "tensor takes a number or a list of numbers", "arguments")
        return value
