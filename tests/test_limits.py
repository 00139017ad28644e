"""Every limit of engine/limits.py: just under it runs, just over it is a ProgramError whose
`limit` names the setting and whose message states the limit's value — and the check happens
before the work it guards (hostile programs return fast and allocate nothing big)."""

from __future__ import annotations

import dataclasses
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from engine import DEFAULT_LIMITS, Limits, ProgramError, run

FAST = 2.0  # seconds: generous, but a hang or a real allocation of the bomb would exceed it
SMALL = 20 * 1024 * 1024  # bytes: peak Python/NumPy allocation allowed while refusing a bomb


def over(
    source: str, limit: str, limits: Limits = DEFAULT_LIMITS, values: dict[str, Any] | None = None
) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(source, values, limits=limits)
    e = info.value
    assert e.limit == limit, (e.limit, e.message)
    assert e.status == 413
    value = getattr(limits, limit)
    shown = f"{value:,}" if isinstance(value, int) else f"{value:g}"
    assert shown in e.message, e.message
    assert limit in e.message  # the setting is named, so the README can be looked up
    assert e.to_dict()["error"]["limit"] == limit
    return e


def under(
    source: str, limits: Limits = DEFAULT_LIMITS, values: dict[str, Any] | None = None
) -> dict[str, Any]:
    return run(source, values, limits=limits).to_dict()


@contextmanager
def bounded(seconds: float = FAST, memory: int | None = SMALL) -> Iterator[None]:
    """Fail if the block takes longer than `seconds` or allocates more than `memory` bytes
    (memory=None: time only, for work that is allowed up to the limit and that tracemalloc
    would slow down)."""
    if memory is not None:
        tracemalloc.start()
    start = time.perf_counter()
    peak = 0
    try:
        yield
    finally:
        elapsed = time.perf_counter() - start
        if memory is not None:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    assert elapsed < seconds, f"took {elapsed:.2f}s"
    assert memory is None or peak < memory, f"allocated {peak / 1e6:.1f} MB"


def test_every_limit_is_covered_here() -> None:
    covered = {
        "max_source_chars",
        "max_nodes",
        "max_drawn_nodes",
        "max_layout_seconds",  # tests/test_layout_budget.py
        "max_tensor_elements",
        "max_total_elements",
        "max_trace_numbers",  # tests/test_cost.py
        "max_answer_numbers",  # tests/test_cost.py
        "max_exponent",
        "max_loop_iterations",
        "max_depth",
        "max_statements",
        "max_call_depth",  # below, and tests/test_lang_functions.py, test_lang_hostile_flow.py
        "max_print_chars",  # below, and tests/test_lang_backward.py
        "max_ops",  # below: the ops of every pass, forward and backward
        "max_work",  # below
        "max_list_items",  # below
    }
    assert {f.name for f in dataclasses.fields(Limits)} == covered


def test_defaults_leave_room_for_real_lessons() -> None:
    # language.md: at least 8,000 characters, 1,000 nodes (500 drawn), 4,096 elements
    assert DEFAULT_LIMITS.max_source_chars >= 8_000
    assert DEFAULT_LIMITS.max_nodes >= 1_000
    assert DEFAULT_LIMITS.max_drawn_nodes >= 500
    assert DEFAULT_LIMITS.max_tensor_elements >= 4_096


def test_a_real_lesson_of_8000_characters_and_1000_nodes_runs_under_the_defaults() -> None:
    lines = ["x = 0.5"] + [f"a{i:03d} = x * {i % 7 + 1}" for i in range(600)]
    src = "\n".join(lines)
    src += "\n" + "#" * (8_000 - len(src) - 1) + "\n"
    assert len(src) >= 8_000
    d = under(src)
    assert len(d["nodes"]) >= 1_000
    # an unrolled RNN of 1,000+ nodes, and a 64×64 weight matrix (4,096 elements)
    d = under("w = 0.5\nh = 0\nfor t in range(340):\n    h = tanh(h*w + 1)\nh")
    assert len(d["nodes"]) >= 1_000
    d = under("seed(1)\nW = randn(64, 64)\nL = (W @ W).tanh().sum()")
    assert d["grads"]["W"] and len(d["grads"]["W"]) == 64


def test_limits_are_settings_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADTRACE_MAX_NODES", "3")
    monkeypatch.setenv("GRADTRACE_MAX_EXPONENT", "2.5")
    limits = Limits().with_env()
    assert limits.max_nodes == 3 and limits.max_exponent == 2.5
    assert limits.max_source_chars == DEFAULT_LIMITS.max_source_chars
    over("x*y + x", "max_nodes", limits)


# --- max_source_chars ------------------------------------------------------------------------


def test_source_chars_boundary() -> None:
    limits = Limits(max_source_chars=20)
    src = "x = 1\ny = x*2 + x*3 "  # 20 characters
    assert len(src) == 20
    under(src, limits)
    over(src + "#", "max_source_chars", limits)
    # code points, not bytes: 20 CJK characters are 20 characters
    under("损失 = " + "x" * 13 + "*2", limits)


def test_source_limit_is_checked_before_parsing() -> None:
    chain = "x" + "+x" * 100_000  # a +x chain of 100,001 terms
    with bounded():
        e = over(chain, "max_source_chars")
    assert "200,001" in e.message


# --- max_nodes -------------------------------------------------------------------------------


def test_nodes_boundary() -> None:
    limits = Limits(max_nodes=5)
    under("x = 1\n" + "x = x * x\n" * 4, limits)  # 5 nodes
    over("x = 1\n" + "x = x * x\n" * 5, "max_nodes", limits)
    # unrolled loops count: 1 + 4 = 5 nodes, then 6
    under("x = 1\nfor i in range(4):\n    x = x * x", limits)
    e = over("x = 1\nfor i in range(5):\n    x = x * x", "max_nodes", limits)
    assert (e.line, e.column) == (3, 9)  # at the node that would be one too many
    # constants are nodes too
    over("x = 1\ny = x * 2 * 3", "max_nodes", Limits(max_nodes=4))


def test_node_limit_stops_a_long_loop_early() -> None:
    with bounded(memory=None):
        over("s = 0\nfor i in range(1500):\n    s = s + x*x", "max_nodes")


# --- max_tensor_elements ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ok", "bad"),
    [
        ("x = zeros(3, 4)", "x = zeros(13)"),
        ("x = ones(12)", "x = ones(2, 7)"),
        ("x = randn(2, 6)", "x = randn(13)"),
        ("x = rand(12)", "x = rand(13)"),
        ("x = full((3, 4), 0.5)", "x = full((13,), 0.5)"),
        ("x = arange(12)", "x = arange(13)"),
        ("x = [" + ", ".join(["1"] * 12) + "]", "x = [" + ", ".join(["1"] * 13) + "]"),
        ("y = zeros(3, 1) + zeros(1, 4)", "y = zeros(4, 1) + zeros(1, 4)"),
        ("y = zeros(3, 1) @ zeros(1, 4)", "y = zeros(4, 1) @ zeros(1, 4)"),
        ("y = zeros(2, 1, 3) * ones(2, 1)", "y = zeros(2, 1, 3) * ones(3, 1)"),
    ],
)
def test_tensor_elements_boundary(ok: str, bad: str) -> None:
    limits = Limits(max_tensor_elements=12)
    under(ok, limits)
    over(bad, "max_tensor_elements", limits)


def test_tensor_elements_of_given_values() -> None:
    limits = Limits(max_tensor_elements=12)
    under("x.sum()", limits, {"x": [[1.0] * 4] * 3})
    over("x.sum()", "max_tensor_elements", limits, {"x": [1.0] * 13})


@pytest.mark.parametrize(
    "src",
    [
        "zeros(10**9)",
        "x = randn(10**6, 10**6)",
        "x = arange(10**9)",
        "x = full((10**5, 10**5), 1)",
        "zeros(4096, 1) + zeros(1, 4096)",
        "zeros(4096, 1) @ zeros(1, 4096)",
        "x = zeros(2**31, 2**31)",
    ],
)
def test_tensor_bombs_are_refused_before_allocating(src: str) -> None:
    with bounded():
        over(src, "max_tensor_elements")


# --- max_total_elements ----------------------------------------------------------------------


def test_total_elements_boundary() -> None:
    limits = Limits(max_total_elements=10)
    under("a = zeros(5)\nb = zeros(5)", limits)
    over("a = zeros(5)\nb = zeros(5)\nc = 1", "max_total_elements", limits)
    under("a = zeros(4)\nb = a + 1", Limits(max_total_elements=9))  # 4 + 1 + 4
    over("a = zeros(4)\nb = a + 1", "max_total_elements", Limits(max_total_elements=8))


def test_total_elements_stops_many_medium_tensors() -> None:
    src = "a = zeros(128, 128)\n" + "\n".join(f"b{i} = a + 1" for i in range(100))
    with bounded(memory=None):
        over(src, "max_total_elements")


# --- max_exponent ----------------------------------------------------------------------------


def test_exponent_boundary() -> None:
    limits = Limits(max_exponent=3)
    assert under("x = 2\nx ** 3", limits)["value"] == 8.0
    assert under("x = 2\nx ** -3", limits)["value"] == 0.125
    e = over("x = 2\nx ** 4", "max_exponent", limits)
    assert (e.line, e.column) == (2, 6)  # the exponent
    over("x = 2\nx ** -3.5", "max_exponent", limits)
    over("x = 2\nx ** (2 + 2)", "max_exponent", limits)  # a computed constant exponent
    over("x = 2\nfor i in range(5):\n    y = x ** i", "max_exponent", limits)


def test_power_tower_is_refused_before_it_is_computed() -> None:
    with bounded():
        e = over("9**9**9**9", "max_exponent")
    assert "3.8742e+08" in e.message  # 9**9, the first exponent over the limit
    with bounded():
        over("x = 2.0 ** 100000", "max_exponent")


# --- max_loop_iterations ---------------------------------------------------------------------


def test_loop_iterations_boundary() -> None:
    limits = Limits(max_loop_iterations=6)
    under("for i in range(6):\n    y = i", limits)
    e = over("for i in range(7):\n    y = i", "max_loop_iterations", limits)
    assert (e.line, e.column) == (1, 1) and "7" in e.message
    # nested loops multiply
    under("for i in range(2):\n    for j in range(3):\n        y = i*j", limits)
    e = over(
        "for i in range(2):\n    for j in range(4):\n        y = i*j", "max_loop_iterations", limits
    )
    assert (e.line, e.column) == (2, 5) and "8" in e.message


@pytest.mark.parametrize(
    "src",
    [
        "for i in range(10**9):\n    y = 1",
        "for i in range(2**62):\n    y = 1",
        "for i in range(10**5):\n    for j in range(10**5):\n        y = 1",
    ],
)
def test_loop_bombs_are_refused_before_unrolling(src: str) -> None:
    with bounded():
        over(src, "max_loop_iterations")


# --- max_depth -------------------------------------------------------------------------------


def test_bracket_depth_boundary() -> None:
    limits = Limits(max_depth=5)
    under("x = " + "(" * 5 + "1" + ")" * 5, limits)
    e = over("x = " + "(" * 6 + "1" + ")" * 6, "max_depth", limits)
    assert (e.line, e.column) == (1, 10)  # the sixth bracket
    under("# " + "(" * 50 + "\nx = 1", limits)  # brackets in a comment don't count


def test_expression_depth_boundary() -> None:
    limits = Limits(max_depth=12)
    under("y = " + "-" * 8 + "x", limits)
    e = over("y = " + "-" * 13 + "x", "max_depth", limits)
    assert e.line == 1 and e.column is not None
    under("y = " + "tanh(" * 4 + "x" + ")" * 4, limits)
    over("y = " + "tanh(" * 13 + "x" + ")" * 13, "max_depth", limits)


def test_block_depth_boundary() -> None:
    def nest(n: int) -> str:
        return "".join(" " * i + f"for i{i} in range(1):\n" for i in range(n)) + " " * n + "y=1"

    limits = Limits(max_depth=10)
    under(nest(4), limits)
    e = over(nest(11), "max_depth", limits)
    assert e.line is not None and e.column is not None


def loops(n: int, body: str = "y = 1") -> str:
    return "".join("    " * i + f"for i{i} in range(1):\n" for i in range(n)) + "    " * n + body


# Each makes a program nested exactly k levels deep, as the README's max_depth counts them.
NESTINGS = {
    "brackets": lambda k: "x = " + "(" * k + "1" + ")" * k,
    "nested calls": lambda k: "tanh(" * k + "x" + ")" * k,
    "unary minus": lambda k: "-" * k + "x",
    "for-loops": loops,
    "a loop around a call": lambda k: loops(k - 1, "y = tanh(x)"),
    "index chain": lambda k: "x = [1.0]\nx" + "[0:1]" * k,
    "method chain": lambda k: "x" + ".tanh()" * k,
    "power tower": lambda k: "x" + "**x" * k,
    "minus and calls": lambda k: "-tanh(" * (k // 2) + "x" + ")" * (k // 2),
    "operators": lambda k: "x" + " + x*(x" * (k // 2) + ")" * (k // 2),
}


@pytest.mark.parametrize("kind", NESTINGS)
@pytest.mark.parametrize("depth", [6, DEFAULT_LIMITS.max_depth])
def test_depth_equal_to_max_depth_runs_and_one_more_is_refused(kind: str, depth: int) -> None:
    make = NESTINGS[kind]
    if kind in ("minus and calls", "operators"):
        depth -= depth % 2  # two levels a step
    limits = dataclasses.replace(DEFAULT_LIMITS, max_depth=depth)
    under(make(depth), limits)
    e = over(
        make(depth + 2 if kind in ("minus and calls", "operators") else depth + 1),
        "max_depth",
        limits,
    )
    assert e.code == "too_deep" and e.line is not None and e.column is not None


def test_depth_counts_what_is_inside_not_what_is_beside() -> None:
    one = Limits(max_depth=1)
    under("L = " + " + ".join(f"x{i}" for i in range(200)), one)  # a flat chain is one level
    under("tanh(x).sum() * 2 - 1", Limits(max_depth=2))  # the chain is beside, the call inside
    over("a*b + c*d", "max_depth", one)  # c*d is inside the +: two levels
    under("a*b + c*d", Limits(max_depth=2))
    under("x = randn(2, 2)\ny = x[0, 1]", one)  # a tuple of indices is its index's level
    under("for i in range(2):\n    y = 1", one)  # range(…) is the loop's own level
    over("for i in range(2):\n    y = -x", "max_depth", one)
    e = over("y = 1\nz = " + "-" * 7 + "x", "max_depth", Limits(max_depth=6))
    assert (e.line, e.column) == (2, 11)  # the seventh minus


NESTING_BOMBS = [
    "(" * 10_000,
    "x = " + "(" * 9_000 + "1" + ")" * 900,
    "[" * 9_999,
    "-" * 9_999 + "x",
    "x" + "[0]" * 3_000,
    "x" + "**x" * 3_333,
    "tanh(" * 1_999 + "x",
]


@pytest.mark.parametrize("src", NESTING_BOMBS, ids=[s[:12] + f"…{len(s)}" for s in NESTING_BOMBS])
def test_nesting_bombs_are_refused_fast(src: str) -> None:
    assert len(src) <= DEFAULT_LIMITS.max_source_chars
    with bounded():
        e = over(src, "max_depth")
    assert e.code == "too_deep"


def test_brackets_bomb_reports_where_the_limit_was_crossed() -> None:
    e = over("(" * 10_000, "max_depth")
    assert (e.line, e.column) == (1, DEFAULT_LIMITS.max_depth + 1)


def test_a_long_flat_sum_is_not_nesting() -> None:
    under("L = " + " + ".join(f"x{i}" for i in range(100)))


def test_a_flat_chain_too_long_for_the_parser_is_refused_by_node_count() -> None:
    with bounded():
        e = over("x" + "+x" * 4_999, "max_nodes")
    assert e.code == "too_large"


# --- max_statements --------------------------------------------------------------------------


def test_statements_boundary() -> None:
    limits = Limits(max_statements=5)
    under("x = 1\n" * 5, limits)
    e = over("x = 1\n" * 6, "max_statements", limits)
    assert (e.line, e.column) == (6, 1)
    under("for i in range(4):\n    y = 1", limits)  # the loop + 4 unrolled statements
    over("for i in range(5):\n    y = 1", "max_statements", limits)


# --- max_drawn_nodes ---------------------------------------------------------------------------


def test_drawn_node_limit_does_not_limit_the_trace() -> None:
    """max_drawn_nodes bounds the drawing only (engine/drawing/); the JSON trace of a graph
    larger than it still runs, up to max_nodes."""
    limits = Limits(max_drawn_nodes=5, max_nodes=50)
    d = under("x = 1\n" + "x = x * x\n" * 20, limits)
    assert len(d["nodes"]) == 21


# --- limit errors carry a position when one applies --------------------------------------------


def test_limit_errors_point_at_the_offending_text() -> None:
    e = over("a = 1\nb = zeros(100000)", "max_tensor_elements")
    assert (e.line, e.column) == (2, 5)
    e = over("a = 1\nfor i in range(10**9):\n    b = 1", "max_loop_iterations")
    assert (e.line, e.column) == (2, 1)
    e = over("x" + "[0]" * 100, "max_depth")
    assert e.line == 1 and e.column is not None


# --- max_call_depth, max_print_chars ----------------------------------------------------------


def test_functions_calling_functions_stop_at_max_call_depth_quickly() -> None:
    limits = Limits(max_call_depth=6)
    chain = "".join(f"def f{i}(x):\n    return f{i + 1}(x) + 1\n" for i in range(8))
    start = time.perf_counter()
    e = over(chain + "def f8(x):\n    return x\ny = f0(2.0)", "max_call_depth", limits)
    assert time.perf_counter() - start < 2
    assert e.line is not None and e.line > 1  # at the call that goes one level too deep


def test_printing_past_max_print_chars_is_cut_with_a_line_that_names_it() -> None:
    from engine.program import run_program

    ran = run_program(
        "x = ones(50)\nfor i in range(40):\n    print(x)", limits=Limits(max_print_chars=500)
    )
    texts = [p["text"] for p in ran.printed]
    assert sum(len(t) for t in texts[:-1]) <= 500
    assert "max_print_chars" in texts[-1] and "500" in texts[-1]


# --- the work of a whole run: max_ops, max_work, max_list_items ------------------------------


def test_ops_of_every_pass_count_against_max_ops() -> None:
    limits = Limits(max_ops=40)
    # 3 forward ops, then 2 passes of 3-node graphs (3 ops walked, 2 backward steps each)
    loop = "import torch\nw = torch.tensor(1.0, requires_grad=True)\nfor i in range({n}):\n"
    loop += "    L = (w * 2 - 1) ** 2\n    L.backward()"
    under(loop.format(n=3), limits)
    e = over(loop.format(n=20), "max_ops", limits)
    assert e.line in (4, 5)
    with bounded(memory=None):  # a loop of backward calls on a 1,000-node graph stops at once
        src = "x = 0.5\nh = x\nfor i in range(999):\n    h = h * 1.0001\n"
        src += "for i in range(1000):\n    h.backward(retain_graph=True)"
        over(src, "max_ops")


def test_elements_computed_count_against_max_work() -> None:
    limits = Limits(max_work=10_000)
    under("X = ones(50, 50)\nL = (X * 2).sum()", limits)
    over("X = ones(50, 50)\nfor i in range(10):\n    X = X * 1.5\nL = X.sum()", "max_work", limits)


def test_lists_are_bounded_before_they_grow() -> None:
    # with torch, [1.0] is Python's list (without, a tensor: its + adds)
    limits = Limits(max_list_items=100)
    bomb = "import torch\na = [1.0]\nfor i in range(19):\n    a = a + a\nprint(a)\nL = x"
    under("import torch\na = [1.0] * 100\nL = sum(a) * x", limits)
    e = over(bomb, "max_list_items", limits)
    assert e.line == 4
    with bounded():
        over(bomb, "max_list_items")
    with bounded():  # a list nested deep, printed: refused by name, never a RecursionError
        e = refused_at(
            "import torch\na = [1.0]\nfor i in range(995):\n    a = [a]\nprint(a)\nL = x"
        )
    assert "nested" in e.message


def refused_at(source: str) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(source)
    return info.value
