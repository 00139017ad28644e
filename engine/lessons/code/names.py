"""The names the generated code uses for the program's names: the program's own, unless one
would shadow a name the generated code itself needs (`np`, `torch`, `print`, …)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.lessons.code.facts import Facts, binds_out
from engine.library.builtins import BUILTINS

if TYPE_CHECKING:
    from engine.language.scan import Scan
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


def program_names(scan: Scan) -> set[str]:
    """Every name the program binds (assignments, loop variables, defs and their parameters),
    not the modules it imports: those the generated code imports itself."""
    return set(scan.assigned) - set(scan.imports)


def code_names(run: Run, facts: Facts | None = None) -> dict[str, str]:
    """Program name -> the name the generated code uses for it (itself, unless it would
    shadow one of the code's own; then with `_` appended until it is unused)."""
    names = program_names(run.scan) | set(run.scan.free)
    reserved = GENERATED_NAMES | ({"out"} if binds_out(run, facts) else set())
    taken = names | reserved
    renamed = {}
    for name in sorted(names & reserved):
        new = name + "_"
        while new in taken:
            new += "_"
        taken.add(new)
        renamed[name] = new
    return {name: renamed.get(name, name) for name in names}
