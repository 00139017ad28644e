"""The page's files as Python reads them: its words (engine/words/<lang>.json) and its script
(static/js/, ES modules) bundled into one classic script for a page that opens from disk.

A `file://` page cannot import modules, so `page_script()` concatenates them: each module in
its own scope, in dependency order, its `import` lines turned into reads of the modules before
it and its `export`s into the object its scope returns. It understands exactly the forms the
page uses (named imports, a JSON import, `export function|const`, `export {...} from`) and
refuses any other, so a new form fails loudly here rather than in a reader's browser.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine.words import all_words

ROOT = Path(__file__).resolve().parents[1]
# A checkout has static/ beside gradtrace/; GRADTRACE_ASSETS names another folder holding it.
ASSETS = Path(os.environ.get("GRADTRACE_ASSETS") or ROOT)
ENTRY = "main.js"
MESSAGE_PREFIX = "msg_"  # engine/words' message templates: server-side words

_IMPORT = re.compile(r'^import \{([^}]*)\} from "([^"]+\.js)";$')
_IMPORT_JSON = re.compile(r'^import (\w+) from "([^"]+\.json)" with \{ type: "json" \};$')
_REEXPORT = re.compile(r'^export \{([^}]*)\} from "([^"]+\.js)";$')
_EXPORT_DECL = re.compile(r"^export ((?:async )?function\*? ([\w$]+)|const ([\w$]+))")


@lru_cache(maxsize=1)
def ui_strings() -> dict[str, dict[str, str]]:
    """The words a page is sent, one table per language: {"en": {...}, "zh": {...}}, English
    first (engine/words: the page's, the exports' and the drawing's, one file per language).
    The messages' templates (`msg_…`) are left out: the server words every message from its key
    before it is sent, so a page never needs them."""
    return {
        lang: {k: v for k, v in table.items() if not k.startswith(MESSAGE_PREFIX)}
        for lang, table in all_words().items()
    }


@lru_cache(maxsize=1)
def page_script() -> str:
    """Every page module (static/js/) as one classic script, for the standalone HTML file."""
    js = ASSETS / "static" / "js"
    order: list[Path] = []
    _visit(js / ENTRY, order, set())
    parts = [_module(path, js) for path in order]
    body = "\n".join(parts)
    return f'(function () {{\n"use strict";\n{body}\n}})();\n'


def _visit(path: Path, order: list[Path], visiting: set[Path]) -> None:
    """Depth first: a module after every module it imports (an import cycle is refused)."""
    if path in order:
        return
    if path in visiting:
        raise ValueError(f"import cycle through {path.name}")
    visiting.add(path)
    for line in path.read_text("utf-8").splitlines():
        m = _IMPORT.match(line) or _REEXPORT.match(line)
        if m:
            _visit((path.parent / m.group(2)).resolve(), order, visiting)
    visiting.discard(path)
    order.append(path)


def _scope_name(path: Path, js: Path) -> str:
    rel = path.resolve().relative_to(js.resolve()).with_suffix("")
    return "__" + re.sub(r"\W", "_", rel.as_posix())


def _bindings(names: str) -> tuple[str, list[str]]:
    """`a, b as c` -> the destructuring `a, b: c` and the local names [a, c]."""
    pattern, local = [], []
    for item in (n.strip() for n in names.split(",")):
        if not item:
            continue
        src, _, alias = item.partition(" as ")
        pattern.append(f"{src}: {alias}" if alias else src)
        local.append(alias or src)
    return ", ".join(pattern), local


def _code_lines(text: str) -> list[str]:
    """The module's lines without those that are only a comment (`// …`, or a `/* … */` block
    whose lines hold nothing else): a standalone file or a notebook cell carries the page once
    per figure, and its comments are a fifth of it. The page's modules have no multi-line
    template literals, so a line is code or comment as it stands."""
    kept: list[str] = []
    in_block = False
    for line in text.splitlines():
        bare = line.strip()
        if in_block:
            in_block = not bare.endswith("*/")
        elif bare.startswith("//"):
            continue
        elif bare.startswith("/*") and "*/" not in bare:
            in_block = True
        elif not (bare.startswith("/*") and bare.endswith("*/") and bare.count("*/") == 1):
            kept.append(line)
    return kept


def _module(path: Path, js: Path) -> str:
    """One module as `const __name = (() => { ...; return {exports}; })();`."""
    out: list[str] = []
    exports: list[str] = []
    for line in _code_lines(path.read_text("utf-8")):
        if m := _IMPORT.match(line):
            names, _ = _bindings(m.group(1))
            out.append(f"const {{ {names} }} = {_scope_name(path.parent / m.group(2), js)};")
        elif m := _IMPORT_JSON.match(line):
            data: Any = json.loads((path.parent / m.group(2)).read_text("utf-8"))
            out.append(f"const {m.group(1)} = {json.dumps(data, ensure_ascii=False)};")
        elif m := _REEXPORT.match(line):
            names, local = _bindings(m.group(1))
            out.append(f"const {{ {names} }} = {_scope_name(path.parent / m.group(2), js)};")
            exports += local
        elif m := _EXPORT_DECL.match(line):
            exports.append(m.group(2) or m.group(3))
            out.append(line[len("export ") :])
        elif line.startswith(("import ", "export ")):
            raise ValueError(f"{path.name}: page_script() cannot bundle {line!r}")
        else:
            out.append(line)
    name = _scope_name(path, js)
    ret = ", ".join(exports)
    return f"// ---- {path.relative_to(js).as_posix()}\nconst {name} = (() => {{\n" + (
        "\n".join(out) + f"\nreturn {{ {ret} }};\n}})();"
    )
