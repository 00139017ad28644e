"""The names the generated code uses for the program's names: the program's own, unless one
would shadow a name the generated code itself needs (`np`, `torch`, `print`, …)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from engine.language.builtins import BUILTINS
from engine.lessons.code.facts import binds_out

if TYPE_CHECKING:
    from engine.program import Run

# The names the generated code reads that the program does not bind: its modules and its
# generator, and Python's builtins (those the program calls, and `float`, `range`, `print`,
# which the code writes itself). A program name equal to one would shadow it there (`np = 2`
# breaks every `np.…` after it, `print = x*y` the lines that print). Such a name is written
# with a trailing underscore (`print_`), everywhere in both codes. `out` is added when the
# generated code binds the program's bare last expression to `out`.
GENERATED_NAMES = frozenset(
    {"np", "torch", "F", "rng", "jax", "jnp", "params"} | (set(BUILTINS) - {"seed"})
)


def program_names(tree: ast.Module) -> set[str]:
    """Every name the program binds (assignments, loop variables, defs and their parameters),
    not the modules it imports: those the generated code imports itself."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def code_names(run: Run) -> dict[str, str]:
    """Program name -> the name the generated code uses for it (itself, unless it would
    shadow one of the code's own; then with `_` appended until it is unused)."""
    names = program_names(run.source.tree) | set(run.scan.free)
    reserved = GENERATED_NAMES | ({"out"} if binds_out(run) else set())
    taken = names | reserved
    renamed = {}
    for name in sorted(names & reserved):
        new = name + "_"
        while new in taken:
            new += "_"
        taken.add(new)
        renamed[name] = new
    return {name: renamed.get(name, name) for name in names}
