"""The names the generated code uses for the program's names: the program's own, unless one
would shadow a name the generated code itself needs (`np`, `torch`, `print`, …)."""

from __future__ import annotations

from engine.language import flow_ir as fx
from engine.language import ir

# The names the generated code itself reads at the top level (PyTorch) or inside JAX's `f`:
# a program name equal to one would shadow it there (`np = 2` breaks every `np.…` after it,
# `print = x*y` the lines that print). Such a name is written with a trailing underscore
# (`print_`), everywhere in both codes. `out` is added when the generated code binds the
# program's bare last expression to `out`.
GENERATED_NAMES = frozenset(
    {"np", "torch", "F", "rng", "print", "range", "float", "jax", "jnp", "params"}
)


def code_names(program: ir.Program) -> dict[str, str]:
    """Program name -> the name the generated code uses for it (itself, unless it would
    shadow one of the code's own; then with `_` appended until it is unused)."""
    names = set(program.free)
    has_output = False
    todo = list(program.body)
    while todo:
        st = todo.pop()
        if isinstance(st, ir.Assign):
            names.add(st.name)
        elif isinstance(st, ir.Loop):
            names.add(st.var)
            todo += st.body
        elif isinstance(st, ir.Output):
            has_output = True
        expr = getattr(st, "expr", None)
        if isinstance(expr, fx.Lambda):  # `f = lambda np: …`: its parameters are names too
            names.update(expr.params)
    reserved = GENERATED_NAMES | ({"out"} if has_output else set())
    taken = names | reserved
    renamed = {}
    for name in sorted(names & reserved):
        new = name + "_"
        while new in taken:
            new += "_"
        taken.add(new)
        renamed[name] = new
    return {name: renamed.get(name, name) for name in names}
