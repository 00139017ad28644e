"""The codebase's shape, measured: module sizes, long functions, and the import graph.

Read by tests/test_structure.py (which holds the limits) and runnable on any tree to report:

    python -m tests.structure_rules [ROOT]     # the sizes, long functions and cycles of ROOT
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("engine", "app", "gradtrace")  # the source; tests/ and bench/ are not held to this
MAX_PY_LINES = 400
MAX_JS_LINES = 500
MAX_FUNCTION_LINES = 60


@dataclass(frozen=True)
class Function:
    module: str
    name: str
    line: int
    lines: int
    explained: bool  # a comment at its top says why it is long


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name → file, for every .py file of the source packages."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")) if (root / package).is_dir() else ():
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def line_counts(root: Path) -> dict[str, int]:
    """Lines of every source module (Python) and page module (static/**/*.js), by path."""
    counts = {str(p.relative_to(root)): _lines(p) for p in modules(root).values()}
    static = root / "static"
    for path in sorted(static.rglob("*.js")) if static.is_dir() else ():
        counts[str(path.relative_to(root))] = _lines(path)
    return counts


def _lines(path: Path) -> int:
    return len(path.read_text("utf-8").splitlines())


def too_long_modules(root: Path) -> dict[str, int]:
    return {
        path: n
        for path, n in line_counts(root).items()
        if n > (MAX_JS_LINES if path.endswith(".js") else MAX_PY_LINES)
    }


def functions(root: Path) -> Iterator[Function]:
    """Every function and method of the source, with its length in lines (decorators aside)."""
    for name, path in modules(root).items():
        text = path.read_text("utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                yield Function(name, node.name, node.lineno, length, _explained(node, lines))


def _explained(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> bool:
    """A comment that says why the function is long: on the lines just above its `def` (and
    decorators), or among the first lines of its body, mentioning that it is long."""
    top = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1  # 0-based
    above = lines[max(0, top - 3) : top]
    body_start = node.body[0].lineno - 1
    if isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
        assert node.body[0].end_lineno is not None
        body_start = node.body[0].end_lineno  # after the docstring
    first = lines[body_start : body_start + 4]
    return any(line.strip().startswith("#") and "long" in line.lower() for line in [*above, *first])


def long_functions(root: Path) -> list[Function]:
    """The functions over MAX_FUNCTION_LINES without a comment saying why."""
    return [f for f in functions(root) if f.lines > MAX_FUNCTION_LINES and not f.explained]


def imports(root: Path) -> dict[str, set[str]]:
    """Module → the source modules it imports, anywhere in it (inside functions too), except
    under `if TYPE_CHECKING:` (types only: never run)."""
    known = modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text("utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _runtime_nodes(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    targets.add(full if full in known else base)
        graph[name] = {t for t in targets if t in known and t != name}
    return graph


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from (n for child in node.orelse for n in [child, *_runtime_nodes(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: each strongly connected group of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def report(root: Path) -> str:
    counts = line_counts(root)
    long_ones = sorted(
        (f for f in functions(root) if f.lines > MAX_FUNCTION_LINES), key=lambda f: -f.lines
    )
    lines = [f"{len(counts)} modules, {sum(counts.values())} lines"]
    lines += [f"  {n:5d}  {p}" for p, n in sorted(counts.items(), key=lambda kv: -kv[1])[:15]]
    lines.append(f"{len(long_ones)} functions over {MAX_FUNCTION_LINES} lines:")
    lines += [
        f"  {f.lines:4d}  {f.module}.{f.name}" + ("" if f.explained else "  (no why-comment)")
        for f in long_ones
    ]
    found = cycles(imports(root))
    lines.append(f"{len(found)} import cycles:")
    lines += ["  " + " ↔ ".join(group) for group in found]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))  # noqa: T201
