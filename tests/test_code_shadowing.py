"""Lesson 7's generated code runs as shown whatever the program names its values: a program
name that would shadow one of the code's own (`print`, `np`, `torch`, `show`, `range`, …) is
written with a trailing underscore, the same way in every line of both codes. The PyTorch code
is run here and must print exactly the lines the panel shows; the names the generated code
itself reads are found from the code (symtable), so a new one cannot slip past the list."""

from __future__ import annotations

import builtins
import symtable

import pytest

from engine import ProgramError, lessons
from engine.lessons.code import GENERATED_NAMES, code_names
from engine.program import run_program
from tests.test_lessons_code import CASES, run_torch

SHADOWING = sorted(GENERATED_NAMES | {"out"})
# Names the generated code uses only where a program's names cannot reach them (show's own
# parameters, JAX's module level): they need no renaming, and a program may use them as is.
HARMLESS = ["name", "t", "g", "f", "grads"]
# Python's builtins among them: like Python, gradtrace refuses one read as a free value or used
# as a loop variable, so those two roles of theirs are not programs.
BUILTIN_SHADOWED = {n for n in GENERATED_NAMES if hasattr(builtins, n)}


def roles(name: str) -> list[tuple[str, str]]:
    """`name` as a leaf, an intermediate, a free name, a loop variable and class labels."""
    return [
        ("leaf", f"{name} = 2.0\ny = {name} * 3 + {name}**2\ny"),
        ("intermediate", f"x = 1.5\n{name} = tanh(x) * x\nL = {name} * {name}\nL"),
        ("free", f"{name} * y + {name}"),
        ("loop", f"x = 0.5\nh = x\nfor {name} in range(3):\n    h = h * x + {name}\nh"),
        ("tensor", f"{name} = randn(2, 3)\nW = ones(3)\nL = ({name} @ W).sum() + {name}.mean()"),
        ("labels", f"Z = randn(2, 3)\n{name} = [0, 2]\ncross_entropy(Z, {name})"),
        ("output", f"x = 3.0\n{name} = x * x\n{name} + x"),
    ]


def code_and_output(source: str) -> tuple[str, str, str | None]:
    data = lessons.code(run_program(source, {}))
    return data["torch"], data["torch_output"], data["jax"]


@pytest.mark.parametrize("name", SHADOWING + HARMLESS)
def test_a_program_name_equal_to_one_of_the_codes_own_runs_as_shown(name: str) -> None:
    ran = 0
    for role, source in roles(name):
        try:
            run_program(source, {})
        except ProgramError:  # a builtin's name read as a value or looped over: as Python
            assert name in BUILTIN_SHADOWED and role in ("free", "loop"), (role, source)
            continue
        ran += 1
        torch_code, expected, jax_code = code_and_output(source)
        assert expected, (role, source)  # something is printed and compared
        assert run_torch(torch_code) == expected, (role, torch_code)
        if jax_code is not None:
            compile(jax_code, "<jax>", "exec")
    assert ran >= len(roles(name)) - 2


@pytest.mark.parametrize("name", SHADOWING)
def test_a_shadowing_name_is_renamed_consistently(name: str) -> None:
    torch_code, expected, jax_code = code_and_output(f"{name} = 2.0\ny = {name} * 3\ny")
    new = name + "_"
    assert f"{new} = torch.tensor(2.0, requires_grad=True)" in torch_code
    assert f"y = {new} * 3" in torch_code
    assert f'print("{new}.grad =", {new}.grad)' in torch_code
    assert f"{new}.grad = tensor(3.)" in expected
    assert jax_code is not None
    assert f'"{new}": jnp.array(2.0),' in jax_code and f'{new} = params["{new}"]' in jax_code


def test_renaming_never_takes_a_name_the_program_already_uses() -> None:
    source = "print = 2.0\nprint_ = print * 3\nprint__ = print_ + print\nprint__ * 2"
    names = code_names(run_program(source))
    assert names == {"print": "print___", "print_": "print_", "print__": "print__"}
    torch_code, expected, _ = code_and_output(source)
    assert run_torch(torch_code) == expected
    assert "print___.grad = tensor(8.)" in expected  # d/dp of 2(3p + p) = 8


def test_names_that_shadow_nothing_are_kept() -> None:
    source = "x = 2.0\nloss = x * x\nloss"
    assert code_names(run_program(source)) == {"x": "x", "loss": "loss"}
    torch_code = code_and_output(source)[0]
    assert "loss = x * x" in torch_code and "loss_" not in torch_code and "x_" not in torch_code


def own_names_read(code: str, program_names: set[str]) -> set[str]:
    """The names the code reads that the program does not bind: the generator's own. For the
    PyTorch code that is every scope (program names are module globals there); for the JAX
    code, inside `f`, where the program's names live."""
    table = symtable.symtable(code, "<generated>", "exec")
    jax = any(child.get_name() == "f" for child in table.get_children())
    scopes = [c for c in table.get_children() if c.get_name() == "f"] if jax else [table]
    if not jax:
        scopes += [c for c in table.get_children()]
    read: set[str] = set()
    for scope in scopes:
        for symbol in scope.get_symbols():
            own_local = scope is not table and symbol.is_parameter() and not jax
            if symbol.is_referenced() and not own_local:
                read.add(symbol.get_name())
    return read - program_names


def test_every_name_the_generated_code_reads_is_protected() -> None:
    programs = [(source, values) for _, source, values in CASES] + [
        (source, {}) for _, source in roles("v") if "cross_entropy" in source or "for" in source
    ]
    seen: set[str] = set()
    for source, values in programs:
        data = lessons.code(run_program(source, values))
        program_names = set(code_names(run_program(source, values)).values())
        for code in (data["torch"], data["jax"]):
            if code is None:
                continue
            own = own_names_read(code, program_names)
            seen |= own
            assert own <= GENERATED_NAMES | {"out"}, (sorted(own - GENERATED_NAMES), code)
    # The check saw the code's names in use (it cannot pass by reading nothing).
    assert {"np", "torch", "F", "print", "range", "jnp", "jax", "params"} <= seen
    assert all(hasattr(builtins, n) for n in seen & {"print", "range", "float"})
