"""The codebase stays one a newcomer can find their way in: small modules, long functions only
with a reason, no import cycle, and an engine that knows nothing of the web."""

from __future__ import annotations

import ast
from pathlib import Path

from tests import structure_rules as rules

ROOT = Path(__file__).resolve().parents[1]
WEB = ("app", "fastapi", "starlette", "jinja2", "uvicorn", "markupsafe", "gradtrace")


def test_no_module_is_over_its_size() -> None:
    assert rules.too_long_modules(ROOT) == {}, (
        f"Python modules stay under {rules.MAX_PY_LINES} lines, page modules under "
        f"{rules.MAX_JS_LINES}: split by job"
    )


def test_no_function_is_long_without_a_comment_saying_why() -> None:
    found = [f"{f.module}.{f.name} (line {f.line}): {f.lines}" for f in rules.long_functions(ROOT)]
    assert found == [], f"over {rules.MAX_FUNCTION_LINES} lines with no '# ... long ...' comment"


def test_no_import_cycle() -> None:
    assert rules.cycles(rules.imports(ROOT)) == []


def test_the_page_modules_import_no_cycle() -> None:
    """A standalone file bundles static/js/ depth first, and refuses a cycle (gradtrace/assets.py);
    the browser would load one, so only this test sees it before an export fails."""
    from gradtrace.assets import page_script

    page_script.cache_clear()
    script = page_script()
    assert "const __main = " in script


def test_the_engine_imports_nothing_of_the_web_and_reads_no_page_files() -> None:
    graph = rules.imports(ROOT)
    for module, path in rules.modules(ROOT).items():
        if not module.startswith("engine"):
            continue
        tree = ast.parse(path.read_text("utf-8"))
        named = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        named |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        web = {m for m in named | graph[module] if m.split(".")[0] in WEB}
        assert not web, f"{module} imports {sorted(web)}"
        assert not _page_paths(tree), f"{module} reads the page's files"


def _page_paths(tree: ast.AST) -> list[str]:
    """The page's folders named as a path: `root / "static"`, `os.path.join(root, "templates")`,
    `x.joinpath("static")` (an error code "static" is not a path)."""
    parts: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts += [node.left, node.right]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("join", "joinpath"):
            parts += node.args
    return [
        p.value
        for p in parts
        if isinstance(p, ast.Constant) and p.value in ("templates", "static", "../templates")
    ]


def test_the_rules_see_what_they_are_for(tmp_path: Path) -> None:
    """The checks themselves: a cycle through a function-level import is found, one under
    TYPE_CHECKING is not; a long function passes only with its comment."""
    pkg = tmp_path / "engine"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from engine import b\n")
    (pkg / "b.py").write_text("def f():\n    from engine.a import x\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from engine import a\n"
    )
    body = "".join(f"    x{i} = {i}\n" for i in range(rules.MAX_FUNCTION_LINES))
    (pkg / "d.py").write_text(
        f"def plain():\n{body}\n\n# Long: one table, read top to bottom.\ndef told():\n{body}"
    )
    assert rules.cycles(rules.imports(tmp_path)) == [["engine.a", "engine.b"]]
    assert [f.name for f in rules.long_functions(tmp_path)] == ["plain"]
    (pkg / "e.py").write_text("x = 1\n" * (rules.MAX_PY_LINES + 1))
    assert _page_paths(ast.parse('root / "static" / "i18n"\nerror("no", "static")')) == ["static"]
    assert list(rules.too_long_modules(tmp_path)) == ["engine/e.py"]
