"""What is known of a program before it runs, from one walk of its syntax tree: the names it
binds anywhere, its free names (read but never bound: leaves with the values given, in the
order of their first use), which of those are class labels, whether it imports torch, the
names PyTorch makes leaves of by `x.requires_grad_()`, and its did-you-mean warnings.
"""

from __future__ import annotations

import ast

from engine.errors import fail
from engine.language.libraries import Library
from engine.language.name_warnings import NameWarning, name_warnings
from engine.language.source import Source, nests, part_of, too_deep

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
    """The facts about a program its run needs first, gathered in one walk of its tree."""

    def __init__(self, src: Source, max_depth: int, library: Library) -> None:
        self.library = library
        self.assigned: set[str] = set()
        self.module_assigned: set[str] = set()  # bound outside any def or lambda
        self.imports: set[str] = set()
        self.torch = False
        self.libraries: set[str] = set()  # the roots of the modules imported
        self.leaf_names: set[str] = set()
        self.labels: set[str] = set()
        self.owns: dict[int, frozenset[str]] = {}
        self.call_funcs: set[int] = set()  # ids of the syntax nodes that are called
        self.called_names: set[str] = set()
        self.outer: set[int] = set()  # loops with a loop inside
        self.number_names: set[str] = set()
        self.values: dict[str, list[ast.AST]] = {}
        self.loads: list[ast.Name] = []
        self.called: set[int] = set()
        self.roots: set[int] = set()
        self.walk(src, max_depth)
        self.outer_loops = frozenset(self.outer)
        self.numbers = spread(self.number_names, self.values)
        self.free = self.free_names()
        self.labels &= set(self.free)
        bound = self.assigned - self.imports
        self.warnings: tuple[NameWarning, ...] = name_warnings(self.loads, bound, self.free, src)

    # Long because it is the one walk: each node's facts gathered where the node is met.
    def walk(self, src: Source, max_depth: int) -> None:
        """Every node once, with whether it is inside a function, the loops around it and its
        nesting (refused past max_depth: source.py says what counts)."""
        stack: list[tuple[ast.AST, bool, tuple[int, ...], int, bool]] = [
            (src.tree, False, (), 0, False)
        ]
        while stack:
            node, inside, loops, around, part = stack.pop()
            level = around + 1 if nests(node) and not part else around
            if level > max_depth:
                raise too_deep(src, node, max_depth)
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    self.assigned.add(node.id)
                    if not inside:
                        self.module_assigned.add(node.id)
                else:
                    self.loads.append(node)
            elif isinstance(node, ast.FunctionDef):
                self.assigned.add(node.name)
                self.owns[id(node)] = own_names(node)
                distinct(node, node.name, src)
                if not inside:
                    self.module_assigned.add(node.name)
            elif isinstance(node, ast.Lambda):
                self.owns[id(node)] = own_names(node)
                distinct(node, "lambda", src)
            elif isinstance(node, ast.arg):
                self.assigned.add(node.arg)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                self.imported(node, src)
                if not inside:
                    self.module_assigned.update(
                        a.asname or a.name.split(".")[0] for a in node.names
                    )
            elif isinstance(node, ast.Call):
                self.call(node, self.called)
                self.sizes(node)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                self.roots.add(id(node.value))
            elif isinstance(node, ast.Assign):
                self.assignment(node)
            elif isinstance(node, ast.Subscript):
                key = node.slice
                parts = key.elts if isinstance(key, ast.Tuple) else [key]
                self.labels.update(p.id for p in parts if isinstance(p, ast.Name))
                self.number_names |= names_in(key)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv | ast.Mod):
                self.number_names |= names_in(node.left) | names_in(node.right)
            if isinstance(node, ast.For | ast.While | ast.comprehension):
                self.outer.update(loops)  # the loops around this one have a loop inside
                if not isinstance(node, ast.While) and isinstance(node.iter, ast.Name):
                    self.number_names.add(node.iter.id)
                if not isinstance(node, ast.comprehension):
                    loops = (*loops, id(node))
            deeper = inside or isinstance(node, ast.FunctionDef | ast.Lambda)
            for child in ast.iter_child_nodes(node):
                beside = isinstance(node, ast.BinOp) and child is node.left
                stack.append((child, deeper, loops, around if beside else level,
                              part_of(node, child)))  # fmt: skip

    def free_names(self) -> tuple[str, ...]:
        """Names read but never bound (leaves with the values given), in source order; not
        those only called (an unknown function) or a module's name never imported."""
        self.loads.sort(key=lambda n: (n.lineno, n.col_offset))
        free: dict[str, None] = {}
        for n in self.loads:
            name = n.id
            if name in self.assigned or name in free or name.startswith("__"):
                continue
            if id(n) in self.called or name in self.library.functions:
                continue
            if id(n) in self.roots and name in self.library.standard:
                continue
            free[name] = None
        return tuple(free)

    def sizes(self, node: ast.Call) -> None:
        """The names read as sizes, counts or lists looped over by this call."""
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in SIZE_CALLS:
            for a in node.args:
                first_of_function = a is node.args[0] and isinstance(func, ast.Name)
                if not (name in ("reshape", "view") and first_of_function):
                    self.number_names |= names_in(a)
        if name in LIST_CALLS:
            self.number_names |= {a.id for a in node.args if isinstance(a, ast.Name)}
        for kw in node.keywords:
            if kw.arg in SIZE_KEYWORDS:
                self.number_names |= names_in(kw.value)

    def imported(self, node: ast.Import | ast.ImportFrom, src: Source) -> None:
        """An import's names; a module not allowed is refused where it is written, whether or
        not the run would reach it (deny by default)."""
        paths = (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        )
        level = node.level if isinstance(node, ast.ImportFrom) else 0
        for path in paths:
            if path not in self.library.modules or level:
                path = "." * level + path
                root = path.split(".")[0]
                key = (
                    "module_part_refused" if root in ("torch", "numpy", "jax") else "module_refused"
                )
                raise fail(key, src.span(node), code="import", path=path[:60], root=root,
                           named=self.library.named)  # fmt: skip
        if isinstance(node, ast.Import):
            self.imports.update(a.asname or a.name.split(".")[0] for a in node.names)
        else:
            self.imports.update(a.asname or a.name for a in node.names)
        self.libraries.update(p.split(".")[0] for p in paths)
        # leaves only where the program asks (requires_grad, tf.Variable, micrograd's Value)
        self.torch = bool(self.libraries & self.library.explicit)
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
        if (
            name == "requires_grad_"
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
        ):
            self.leaf_names.add(func.value.id)

    def assignment(self, node: ast.Assign) -> None:
        for t in node.targets:
            if isinstance(t, ast.Name):
                self.values.setdefault(t.id, []).append(node.value)
            if (
                isinstance(t, ast.Attribute)
                and t.attr == "requires_grad"
                and isinstance(t.value, ast.Name)
            ):
                self.leaf_names.add(t.value.id)

    # --- questions the interpreter asks ------------------------------------------------
    def is_constant(self, node: ast.AST) -> bool:
        """Is `node` made of numbers, lists of them and constructors only (`0.01 * randn(2,
        3)`, `[[1, 2]]`, `2 * math.pi`)? Names stand only for sizes, inside a constructor.
        A loop, not recursion: a flat chain `1 + 1 + …` may be as long as the source."""
        todo: list[tuple[ast.AST, bool]] = [(node, False)]
        while todo:
            n, sizes = todo.pop()
            if isinstance(n, ast.Constant):
                if not isinstance(n.value, int | float) or isinstance(n.value, complex):
                    return False
            elif isinstance(n, ast.UnaryOp):
                if not isinstance(n.op, ast.USub | ast.UAdd):
                    return False
                todo.append((n.operand, sizes))
            elif isinstance(n, ast.BinOp):
                todo += [(n.left, sizes), (n.right, sizes)]
            elif isinstance(n, ast.List | ast.Tuple):
                if not n.elts:
                    return False
                todo += [(e, sizes) for e in n.elts]
            elif isinstance(n, ast.Call):
                name = self.callee(n.func)
                if name is None or name in NOT_CONSTANT:
                    return False
                inner = sizes or name in CONSTRUCTORS
                todo += [(a, inner) for a in n.args] + [(k.value, inner) for k in n.keywords]
            elif isinstance(n, ast.Attribute):
                if not (sizes or self.module_path(n)):
                    return False
            elif not (isinstance(n, ast.Name | ast.Subscript | ast.Starred) and sizes):
                return False
        return True

    def callee(self, func: ast.AST) -> str | None:
        """The function a call names, when it is the language's or a module's (not a value's
        method, not one of the program's own functions)."""
        if isinstance(func, ast.Name):
            return None if func.id in self.assigned and func.id not in self.imports else func.id
        if isinstance(func, ast.Attribute) and self.module_path(func.value):
            return func.attr
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in self.imports:
                return func.attr
            if func.attr in CONSTRUCTORS and self.generator(func.value.id):
                return func.attr  # rng.standard_normal((2, 3)): a constructor too
        return None

    def generator(self, name: str) -> bool:
        """Is `name` bound only to NumPy's generator (`rng = np.random.default_rng(0)`)?"""
        made = self.values.get(name) or ()
        return bool(made) and all(
            isinstance(v, ast.Call) and self.callee(v.func) == "default_rng" for v in made
        )

    def module_path(self, node: ast.AST) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.imports

    def own_names(self, node: ast.FunctionDef | ast.Lambda) -> frozenset[str]:
        """The names a function's body binds anywhere (found by the walk; never changed)."""
        return self.owns[id(node)]


def distinct(node: ast.FunctionDef | ast.Lambda, name: str, src: Source) -> None:
    """A parameter named twice is Python's SyntaxError, refused before the run."""
    seen: set[str] = set()
    for a in node.args.args:
        if a.arg in seen:
            raise fail("duplicate_argument", src.span(a), code="syntax", f=name, name=a.arg)
        seen.add(a.arg)


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


def names_in(node: ast.AST) -> set[str]:
    """The bare names an expression reads: not those whose attribute, item or length it
    reads (`x.shape`, `xs[0]`, `len(x)`: x holds a value, not a number)."""
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


def spread(found: set[str], values: dict[str, list[ast.AST]]) -> frozenset[str]:
    """The names a program reads as numbers or lists of them, not as parameters (sizes,
    indices, `//` and `%` operands, lists looped over), and the names their values read
    (`m = n // 2 + 1`): such a name bound to a literal holds the number, not a leaf."""
    found = set(found)
    todo = list(found)
    while todo:
        for value in values.get(todo.pop(), ()):
            for name in names_in(value) - found:
                found.add(name)
                todo.append(name)
    return frozenset(found)
