"""The newer names under attack: every limit holds for imports, joins, gathers, ranges and
shapes (a ProgramError naming the setting, before the work is done), and fuzzed imports and
module calls are refused with a position or run, never crash."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import ProgramError, run
from engine.library.names import MODULES, every_function
from engine.limits import DEFAULT_LIMITS

FUNCTIONS = every_function()

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def limit_of(source: str) -> str | None:
    with pytest.raises(ProgramError) as info:
        run(source)
    return info.value.limit


@pytest.mark.parametrize(
    ("source", "limit"),
    [
        ("x = zeros(128, 128)\ny = cat([x, x], axis=0)", "max_tensor_elements"),
        ("x = zeros(128, 128)\ny = stack([x, x])", "max_tensor_elements"),
        ("x = zeros(100, 100)\ny = cat([x, x, x, x, x, x])", "max_tensor_elements"),
        ("x = zeros(3)\ny = x[range(10 ** 6)]", "max_tensor_elements"),
        ("x = zeros(3)\ny = x[range(0, 2 ** 60, 1)]", "max_tensor_elements"),
        ("x = arange(0, 1e9, 0.5)", "max_tensor_elements"),
        ("x = linspace(0, 1, 10 ** 9)", "max_tensor_elements"),
        ("x = zeros(100, 100)\ny = zeros(*x.shape, *x.shape)", "max_tensor_elements"),
        ("x = zeros(100, 100)\nz = zeros(x.shape[0] ** 3)", "max_tensor_elements"),
        ("x = zeros(120, 120)\na = cat([x, x], 0)\nb = cat([a, a], 1)", "max_tensor_elements"),
    ],
)
def test_every_limit_holds_for_the_new_constructs(source: str, limit: str) -> None:
    started = time.perf_counter()
    assert limit_of(source) == limit
    assert time.perf_counter() - started < 2.0


def test_the_total_elements_limit_holds_for_joins() -> None:
    src = "x = zeros(60, 60)\n" + "".join(f"y{i} = cat([x, x], 0)\n" for i in range(8))
    assert limit_of(src) == "max_total_elements"


def test_deeply_nested_joins_stop_at_max_depth() -> None:
    deep = "x"
    for _ in range(DEFAULT_LIMITS.max_depth + 5):
        deep = f"cat([{deep}])"
    assert limit_of(f"x = [1.0]\ny = {deep}") == "max_depth"


dotted = st.lists(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), min_size=1, max_size=3).map(
    ".".join
)


@FUZZ
@given(dotted, st.sampled_from(["import {m}", "import {m} as q", "from {m} import a"]))
def test_fuzzed_imports_are_refused_with_a_position_or_accepted(module: str, form: str) -> None:
    src = "x = 1.0\n" + form.format(m=module) + "\ny = x * 2"
    try:
        d = run(src).to_dict()
    except ProgramError as e:
        assert e.line == 2 and e.column == 1, e.message
        assert "not supported" in e.message or "import" in e.message
    else:
        assert module in MODULES and d["value"] == 2.0


@FUZZ
@given(
    st.sampled_from(sorted(FUNCTIONS)),
    st.lists(st.sampled_from(["x", "2", "0.5", "[x, x]", "-1", "x.shape[0]"]), max_size=3),
    st.sampled_from(["", "dim=0", "keepdim=True", "requires_grad=True", "dtype=torch.float32"]),
)
def test_every_module_function_with_any_arguments_runs_or_is_refused(
    path: str, args: list[str], keyword: str
) -> None:
    module = path.rpartition(".")[0]
    call = ", ".join(args + ([keyword] if keyword else []))
    name = path[len(module) + 1 :]
    src = f"import torch\nimport {module} as m\nx = [0.5, 1.5]\ny = m.{name}({call})"
    try:
        run(src)
    except ProgramError as e:
        assert e.line is None or 1 <= e.line <= 4, e.message
