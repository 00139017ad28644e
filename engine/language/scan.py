"""What is known of a program before it runs, from one walk of its syntax tree: the names it
binds anywhere, its free names (read but never bound: leaves with the values given, in the
order of their first use), which of those are class labels, whether it imports torch, the
names PyTorch makes leaves of by `x.requires_grad_()`, and its did-you-mean warnings.
"""

from __future__ import annotations

import ast

from engine.language.name_warnings import NameWarning, name_warnings
from engine.language.source import Source

# Calls whose arguments are sizes and numbers: their value is a constant tensor.
CONSTRUCTORS = frozenset({
    "randn", "rand", "zeros", "ones", "full", "arange", "linspace", "eye", "tensor", "array",
    "asarray", "as_tensor", "Tensor", "standard_normal", "random", "normal", "uniform",
})  # fmt: skip
NOT_CONSTANT = frozenset({"grad", "const", "detach", "stop_gradient", "print"})
# Calls whose arguments are sizes or counts, and keywords that are (a name read there holds a
# number, not a parameter: `n = 3` with `zeros(n, 2)`), and calls that run over a list.
SIZE_CALLS = CONSTRUCTORS | frozenset({"range", "reshape", "view", "size", "permute", "eye"})
SIZE_KEYWORDS = frozenset({"axis", "dim", "size", "shape", "steps", "num", "axes"})
LIST_CALLS = frozenset({"zip", "enumerate"})
LABEL_CALLS = frozenset({"cross_entropy"})


class Scan:
    def __init__(self, src: Source) -> None:
        tree = src.tree
        self.assigned: set[str] = set()
        self.imports: set[str] = set()
        self.torch = False
        self.leaf_names: set[str] = set()
        self.labels: set[str] = set()
        self.owns: dict[int, frozenset[str]] = {}
        self.call_funcs: set[int] = set()  # ids of the syntax nodes that are called
        self.called_names: set[str] = set()
        loads: list[ast.Name] = []
        called: set[int] = set()
        roots: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    self.assigned.add(node.id)
                else:
                    loads.append(node)
            elif isinstance(node, ast.FunctionDef):
                self.assigned.add(node.name)
            elif isinstance(node, ast.arg):
                self.assigned.add(node.arg)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                self.imported(node)
            elif isinstance(node, ast.Call):
                self.call(node, called)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                roots.add(id(node.value))
            elif isinstance(node, ast.Assign):
                self.assignment(node)
            elif isinstance(node, ast.Subscript):
                key = node.slice
                parts = key.elts if isinstance(key, ast.Tuple) else [key]
                self.labels.update(p.id for p in parts if isinstance(p, ast.Name))
        self.module_assigned = outside_functions(tree)
        from engine.language.names import BUILTIN_NAMES, STANDARD

        loads.sort(key=lambda n: (n.lineno, n.col_offset))
        free: dict[str, None] = {}
        for n in loads:
            name = n.id
            if name in self.assigned or name in free or name.startswith("__"):
                continue
            if id(n) in called or name in BUILTIN_NAMES:
                continue
            if id(n) in roots and name in STANDARD:
                continue
            free[name] = None
        self.free = tuple(free)
        self.labels &= set(self.free)
        self.numbers = numbers_read(tree)
        self.outer_loops = outer_loops(tree)
        self.warnings: tuple[NameWarning, ...] = name_warnings(tree, self.free, src)

    def imported(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                self.imports.add(a.asname or a.name.split(".")[0])
                self.torch |= a.name.split(".")[0] == "torch"
        else:
            self.imports.update(a.asname or a.name for a in node.names)
            self.torch |= (node.module or "").split(".")[0] == "torch"
        self.assigned |= self.imports

    def call(self, node: ast.Call, called: set[int]) -> None:
        func = node.func
        self.call_funcs.add(id(func))
        if isinstance(func, ast.Name):
            called.add(id(func))
            self.called_names.add(func.id)
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in LABEL_CALLS and len(node.args) == 2 and isinstance(node.args[1], ast.Name):
            self.labels.add(node.args[1].id)
        if name == "requires_grad_" and isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name):
                self.leaf_names.add(func.value.id)

    def assignment(self, node: ast.Assign) -> None:
        for t in node.targets:
            if (
                isinstance(t, ast.Attribute)
                and t.attr == "requires_grad"
                and isinstance(t.value, ast.Name)
            ):
                self.leaf_names.add(t.value.id)

    # --- questions the interpreter asks ------------------------------------------------
    def is_constant(self, node: ast.AST, sizes: bool = False) -> bool:
        """Is `node` made of numbers, lists of them and constructors only (`0.01 * randn(2,
        3)`, `[[1, 2]]`, `2 * math.pi`)? Names stand only for sizes, inside a constructor."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, int | float) and not isinstance(node.value, complex)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, ast.USub | ast.UAdd) and self.is_constant(
                node.operand, sizes
            )
        if isinstance(node, ast.BinOp):
            return self.is_constant(node.left, sizes) and self.is_constant(node.right, sizes)
        if isinstance(node, ast.List | ast.Tuple):
            return bool(node.elts) and all(self.is_constant(e, sizes) for e in node.elts)
        if isinstance(node, ast.Call):
            name = self.callee(node.func)
            if name is None or name in NOT_CONSTANT:
                return False
            inner = sizes or name in CONSTRUCTORS
            return all(self.is_constant(a, inner) for a in node.args) and all(
                self.is_constant(k.value, inner) for k in node.keywords
            )
        if isinstance(node, ast.Attribute):
            return sizes or self.module_path(node)
        if isinstance(node, ast.Name | ast.Subscript | ast.Starred):
            return sizes
        return False

    def callee(self, func: ast.AST) -> str | None:
        """The function a call names, when it is the language's or a module's (not a value's
        method, not one of the program's own functions)."""
        if isinstance(func, ast.Name):
            return None if func.id in self.assigned and func.id not in self.imports else func.id
        if isinstance(func, ast.Attribute) and self.module_path(func.value):
            return func.attr
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            return func.attr if func.value.id in self.imports else None
        return None

    def module_path(self, node: ast.AST) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.imports

    def own_names(self, node: ast.FunctionDef | ast.Lambda) -> frozenset[str]:
        """The names a function's body binds anywhere (not inside functions it defines)."""
        key = id(node)
        if key not in self.owns:
            self.owns[key] = own_names(node)
        return self.owns[key]


def own_names(node: ast.FunctionDef | ast.Lambda) -> frozenset[str]:
    """The names a function's body binds anywhere (not inside functions it defines)."""
    found: set[str] = set()
    todo: list[ast.AST] = list(node.body) if isinstance(node.body, list) else [node.body]  # type: ignore[attr-defined]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.id)
        elif isinstance(n, ast.FunctionDef):
            found.add(n.name)
            continue  # the names a nested function binds are its own
        elif isinstance(n, ast.Lambda | ast.ListComp | ast.GeneratorExp):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return frozenset(found)


def numbers_read(tree: ast.AST) -> frozenset[str]:
    """The names a program reads as numbers or as lists of them, not as parameters: sizes
    (`zeros(n, m)`, `range(n)`, `axis=k`), indices (`xs[i]`), `//` and `%` operands, and
    lists looped over (`for row in X`, `zip(ws, xs)`); and the names their values read
    (`m = n // 2 + 1`). Such a name bound to a literal holds the number, not a leaf."""
    found: set[str] = set()
    values: dict[str, list[ast.AST]] = {}

    def names_in(node: ast.AST) -> set[str]:
        """The bare names an expression reads: not those whose attribute, item or length
        it reads (`x.shape`, `xs[0]`, `len(x)`: x holds a value, not a number)."""
        out: set[str] = set()
        todo = [node]
        while todo:
            n = todo.pop()
            if isinstance(n, ast.Name):
                out.add(n.id)
            elif isinstance(n, ast.Attribute):
                continue
            elif isinstance(n, ast.Subscript):
                todo.append(n.slice)
            elif isinstance(n, ast.Call):
                if getattr(n.func, "id", "") != "len":
                    todo.extend(n.args)
                    todo.extend(k.value for k in n.keywords)
            else:
                todo.extend(ast.iter_child_nodes(n))
        return out

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in SIZE_CALLS:
                for a in node.args:
                    if not (name in ("reshape", "view") and a is node.args[0] and
                            isinstance(func, ast.Name)):  # fmt: skip
                        found |= names_in(a)
            if name in LIST_CALLS:
                found |= {a.id for a in node.args if isinstance(a, ast.Name)}
            for kw in node.keywords:
                if kw.arg in SIZE_KEYWORDS:
                    found |= names_in(kw.value)
        elif isinstance(node, ast.Subscript):
            found |= names_in(node.slice)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv | ast.Mod):
            found |= names_in(node.left) | names_in(node.right)
        elif isinstance(node, ast.For | ast.comprehension) and isinstance(node.iter, ast.Name):
            found.add(node.iter.id)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    values.setdefault(t.id, []).append(node.value)
    todo = list(found)
    while todo:  # the names a number's value reads are numbers too
        for value in values.get(todo.pop(), ()):
            for name in names_in(value) - found:
                found.add(name)
                todo.append(name)
    return frozenset(found)


def outside_functions(tree: ast.Module) -> frozenset[str]:
    """The names bound outside any def or lambda: the program's own."""
    found: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.FunctionDef):
            found.add(n.name)
            continue
        if isinstance(n, ast.Lambda | ast.ListComp | ast.GeneratorExp):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.id)
        elif isinstance(n, ast.Import | ast.ImportFrom):
            found.update(a.asname or a.name.split(".")[0] for a in n.names)
        todo.extend(ast.iter_child_nodes(n))
    return frozenset(found)


def outer_loops(tree: ast.AST) -> frozenset[int]:
    """The loops with another loop inside (ids of their nodes): the turns max_loop_iterations
    counts are the innermost loops', so nested loops multiply (2 × 3 is 6 turns)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.While):
            inner = (n for s in node.body for n in ast.walk(s))
            if any(isinstance(n, ast.For | ast.While | ast.comprehension) for n in inner):
                found.add(id(node))
    return frozenset(found)
