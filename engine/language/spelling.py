"""Code as students already write it, the parser's part: imports and module prefixes
(modules.py's tables), PyTorch's leaves (`requires_grad=True`, `.requires_grad_()`), the
numbers a value's shape gives (`x.shape[0]`, `len(x)`, `*x.shape`), module constants
(`math.pi`) and integer-array indexing (`p[range(N), y]`). calls.py builds on it.
"""

from __future__ import annotations

import ast
from typing import Any

from engine.language import ir
from engine.language.modules import (
    CONSTANTS,
    SEEDS,
    STANDARD,
    function_error,
    is_module,
    module_error,
    not_imported,
)
from engine.language.modules import (
    FUNCTIONS as MODULE_FUNCTIONS,
)
from engine.language.parser_base import ParserBase
from engine.language.vocabulary import ATTRIBUTES, METHODS

# Calls that make a tensor from a list, as labels are written in PyTorch and NumPy.
TENSOR_CALLS = ("tensor", "as_tensor", "array", "asarray", "LongTensor")


def requires_grad_target(node: ast.Assign) -> str | None:
    """The name `x` of a statement `x.requires_grad = …`, else None."""
    target = node.targets[0] if len(node.targets) == 1 else None
    if (
        isinstance(target, ast.Attribute)
        and target.attr == "requires_grad"
        and isinstance(target.value, ast.Name)
    ):
        return target.value.id
    return None


class SpellingParser(ParserBase):
    """Imports, module prefixes, shapes and index lists (parse.Parser is the whole)."""

    def __init__(self, source: str, limits: Any) -> None:
        super().__init__(source, limits)
        self.modules: dict[str, str] = {}  # local name -> module path (`np` -> "numpy")
        self.imported: dict[str, str] = {}  # local name -> function path (`exp` -> "math.exp")
        self.torch = False  # torch imported: a tensor without requires_grad is a constant
        self.leaf_calls: set[int] = set()  # ast ids of calls whose tensor is a leaf anyway
        self.leaf_names: set[str] = set()  # names whose assignment makes a leaf (ir.Program)

    # --- what must be known first --------------------------------------------------------
    def look_ahead_more(self, tree: ast.Module) -> None:
        """Names marked `x.requires_grad_()` (x's assignment makes a leaf), and names used as
        an index list or as F.cross_entropy's labels (they hold labels, not values)."""
        marked: set[str] = set()
        indexed: set[str] = set()
        listed: set[str] = set()
        assigned: set[str] = set()
        loops: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "requires_grad_" and isinstance(node.func.value, ast.Name):
                    marked.add(node.func.value.id)
                elif (
                    node.func.attr == "cross_entropy"
                    and len(node.args) == 2
                    and isinstance(node.args[1], ast.Name)
                ):
                    self.label_names.add(node.args[1].id)
            elif isinstance(node, ast.Subscript):
                parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                indexed.update(p.id for p in parts if isinstance(p, ast.Name))
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                loops.add(node.target.id)
            elif isinstance(node, ast.Assign):
                marks = requires_grad_target(node)  # x.requires_grad = True
                marked.update([marks] if marks else [])
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                assigned.update(names)
                if self.is_int_list(node.value):
                    listed.update(names)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            targets = {t.id for t in node.targets if isinstance(t, ast.Name)}
            value = node.value
            if (  # V = (0.01 * torch.randn(2, 3)).requires_grad_()
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr == "requires_grad_"
            ):
                self.leaf_names.update(targets)
            if targets & marked:
                self.leaf_names.update(targets & marked)
                self.leaf_calls.update(id(n) for n in ast.walk(node.value))
        self.label_names.update(n for n in indexed - loops if n in listed or n not in assigned)

    @staticmethod
    def is_int_list(node: ast.AST) -> bool:
        """A list of whole numbers, bare or in torch.tensor(…)/np.array(…)."""
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in TENSOR_CALLS:
                node = node.args[0]
        return (
            isinstance(node, ast.List | ast.Tuple)
            and bool(node.elts)
            and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)
        )

    # --- statements that make nothing -------------------------------------------------------
    def note(self, node: ast.stmt) -> ir.Stmt | None:
        """An import, `x.requires_grad_()` or a library's seed call as a statement; None for
        any other statement."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not is_module(alias.name):
                    raise self.error(node, module_error(alias.name), "import")
                local = alias.asname or alias.name.split(".")[0]
                self.check_name(node, local)  # `import torch as __builtins__`: refused
                self.modules[local] = alias.name if alias.asname else local
                self.torch |= alias.name.split(".")[0] == "torch"
            return ir.Note(ast.unparse(node), self.span(node))
        if isinstance(node, ast.ImportFrom):
            return self.import_from(node)
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            return None
        call, func = node.value, node.value.func
        path = self.qualified(func)
        if path in SEEDS:
            if len(call.args) != 1 or call.keywords:
                raise self.error(call, f"{ast.unparse(func)} takes one whole number", "arguments")
            n = self.static_value(call.args[0])
            if n < 0:
                raise self.error(call.args[0], "a seed is a whole number ≥ 0", "static")
            return ir.Seed(n, self.span(node))
        if isinstance(func, ast.Attribute) and func.attr == "requires_grad_":
            flag = call.args == [] or (
                len(call.args) == 1
                and isinstance(call.args[0], ast.Constant)
                and call.args[0].value is True
            )
            if not isinstance(func.value, ast.Name) or not flag or call.keywords:
                raise self.error(
                    call, "as a statement, write name.requires_grad_() for a named tensor"
                )
            self.name(func.value)
            return ir.Note(f"{func.value.id}.requires_grad_()", self.span(node))
        return None

    def import_from(self, node: ast.ImportFrom) -> ir.Stmt:
        module = node.module or ""
        if node.level or not is_module(module):
            raise self.error(node, module_error("." * node.level + module), "import")
        for alias in node.names:
            full = f"{module}.{alias.name}"
            local = alias.asname or alias.name
            self.check_name(node, local)
            if alias.name == "*":
                raise self.error(node, "import * is not supported: import the names you use")
            if is_module(full):
                self.modules[local] = full
            elif full in MODULE_FUNCTIONS:
                self.imported[local] = full
            elif full in CONSTANTS:
                raise self.error(
                    node, f"write {module}.{alias.name} where you use it (import {module})"
                )
            else:
                raise self.error(node, function_error(full), "import")
        self.torch |= module.split(".")[0] == "torch"
        return ir.Note(ast.unparse(node), self.span(node))

    # --- module prefixes ---------------------------------------------------------------------
    def qualified(self, func: ast.AST) -> str | None:
        """`np.random.randn` as "numpy.random.randn" when its first name is an imported module
        (or a function imported by name); None for a method of a value or a plain name. A
        well-known module name that was never imported is an error that says to import it."""
        if isinstance(func, ast.Name):
            return self.imported.get(func.id)
        parts: list[str] = []
        node = func
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or not parts:
            return None
        root = node.id
        if root in self.modules:
            return ".".join([self.modules[root], *reversed(parts)])
        if (
            root in STANDARD
            and root not in self.assigned
            and root not in self.free
            and root not in self.every_assigned
        ):
            raise self.error(node, not_imported(root), "import")
        return None

    def module_function(self, func: ast.AST) -> str | None:
        """The language's function a qualified name means (`torch.exp` -> "exp"), None when
        `func` is not a module's name, or a named error when the module lacks it."""
        path = self.qualified(func)
        if path is None:
            return None
        name = MODULE_FUNCTIONS.get(path)
        if name is None:
            if path in SEEDS:
                raise self.error(func, f"{path} is a statement of its own, on its own line")
            raise self.error(func, function_error(path), "unknown_function")
        return name

    # --- shapes as numbers ---------------------------------------------------------------------
    def static(self, node: ast.AST) -> ir.Static:
        found = self.shape_static(node)
        return found if found is not None else super().static(node)

    def statics(self, nodes: Any) -> tuple[ir.Static, ...]:
        """Whole numbers of a shape; `x.shape` or `*x.shape` among them stands for all of x's
        sizes."""
        out: list[ir.Static] = []
        for e in nodes:
            inner = e.value if isinstance(e, ast.Starred) else e
            if isinstance(inner, ast.Attribute) and inner.attr == "shape":
                out.append(ir.SShape(self.shape_owner(inner.value), None, self.span(e)))
            elif isinstance(e, ast.Starred):
                raise self.refuse(e)
            else:
                out.append(self.static(e))
        return tuple(out)

    def shape_static(self, node: ast.AST) -> ir.Static | None:
        """`x.shape[k]`, `len(x)` and `x.size(k)` as a static int; None for anything else."""
        span = self.span(node) if hasattr(node, "lineno") else None
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
        ):
            owner = self.shape_owner(node.value.value)
            return ir.SShape(owner, super().static(node.slice), span)  # type: ignore[arg-type]
        if isinstance(node, ast.Call) and not node.keywords:
            func = node.func
            if isinstance(func, ast.Name) and func.id == "len" and len(node.args) == 1:
                return ir.SShape(self.shape_owner(node.args[0]), ir.SInt(0), span)  # type: ignore[arg-type]
            if isinstance(func, ast.Attribute) and func.attr == "size" and len(node.args) == 1:
                axis = super().static(node.args[0])
                return ir.SShape(self.shape_owner(func.value), axis, span)  # type: ignore[arg-type]
        if isinstance(node, ast.Attribute) and node.attr == "shape":
            raise self.error(
                node,
                f"{ast.unparse(node)} is all of the sizes; one whole number is needed here, "
                f"as in {ast.unparse(node)}[0]",
                "static",
            )
        return None

    def shape_owner(self, node: ast.AST) -> str:
        if not isinstance(node, ast.Name):
            raise self.error(
                node, "the shape of a name only: give this value a name first", "static"
            )
        self.name(node)  # a free name, or one used too early, is found here as anywhere
        return node.id

    # --- attributes and indexes ---------------------------------------------------------------
    def attribute(self, node: ast.Attribute) -> ir.Expr:
        """`x.T`, a module's constant (`math.pi`); anything else is refused by name."""
        path = self.qualified(node)
        if path is not None:
            if path in CONSTANTS:
                return ir.Num(CONSTANTS[path], self.span(node))
            if path in MODULE_FUNCTIONS:
                raise self.error(node, f"{ast.unparse(node)} is a function: call it")
            raise self.error(node, function_error(path), "attribute")
        function = ATTRIBUTES.get(node.attr)  # x.T
        if function is not None:
            return ir.Call(function, (self.expr(node.value),), (), self.span(node), self.span(node))
        if node.attr in METHODS or node.attr == "requires_grad_":
            raise self.error(
                node, f".{node.attr} is a method: call it, as in x.{node.attr}()", "unsupported"
            )
        if node.attr == "shape":
            raise self.error(
                node,
                f"{ast.unparse(node)} is several numbers: index it ({ast.unparse(node)}[0]) "
                "or give it as a shape (zeros(*x.shape))",
                "static",
            )
        raise self.error(
            node,
            f"attribute access (.{node.attr}) is not part of the language; "
            "only methods such as .sum(), .tanh() and .T, and .shape",
            "attribute",
        )

    def subscript(self, node: ast.Subscript) -> ir.Expr:
        shape = self.shape_static(node)
        if shape is not None:  # x.shape[0] as a value
            return ir.IntOf(shape, self.span(node))
        inner = node.value
        if (
            isinstance(inner, ast.Call)
            and self.qualified(inner.func) == "torch.autograd.grad"
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == 0
        ):
            return self.expr(inner)  # torch.autograd.grad(y, x)[0]: the one gradient asked for
        value = self.expr(inner)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return ir.Index(value, tuple(self.index_part(p) for p in parts), self.span(node))

    def index_part(self, part: ast.AST) -> ir.IndexPart:
        if isinstance(part, ast.Slice):
            return ir.SSlice(
                None if part.lower is None else self.static(part.lower),
                None if part.upper is None else self.static(part.upper),
                None if part.step is None else self.static(part.step),
            )
        if isinstance(part, ast.List):
            if not part.elts:
                raise self.error(part, "an empty list of indices", "index")
            return ir.SList(tuple(self.static(e) for e in part.elts), self.span(part))
        if (
            isinstance(part, ast.Call)
            and isinstance(part.func, ast.Name)
            and part.func.id == "range"
            and 1 <= len(part.args) <= 3
            and not part.keywords
        ):
            b = [self.static(a) for a in part.args]
            start, stop = (ir.SInt(0), b[0]) if len(b) == 1 else (b[0], b[1])
            return ir.SRange(start, stop, b[2] if len(b) == 3 else ir.SInt(1), self.span(part))
        if isinstance(part, ast.Name) and part.id in self.label_names:
            named = self.name(part)
            assert isinstance(named, ir.Name)
            return named
        return self.static(part)
