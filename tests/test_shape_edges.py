"""The engine on the edges of shapes and ranges: empty values, zero-length axes, high ranks,
huge loop bounds. Every program either runs (a trace of finite numbers, strict JSON) or stops
with a ProgramError at a line and column — never another exception (which the app would answer
with a 500). First the reproducers of issue 11, then property tests (hypothesis, bounded and
derandomized) that apply every op, constructor and reduction to such shapes."""

from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import DEFAULT_LIMITS, ProgramError, run
from engine.autograd.ops import MAX_RANK
from tests.test_parser_fuzz import check_run

EDGES = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LIMIT = DEFAULT_LIMITS.max_loop_iterations


def outcome(source: str, values: dict[str, Any] | None = None) -> dict[str, Any] | ProgramError:
    """The trace as JSON data, or the ProgramError (tests/test_parser_fuzz.py's check_run: no
    other exception, quick, finite JSON), held stricter here: every refusal of a shape or a
    range has a position, is a 400 or a 413, and a 413 names its setting."""
    result = check_run(source, values)
    if isinstance(result, ProgramError):
        assert result.line is not None and result.column is not None, result.message
        assert result.status in (400, 413), result.message
        assert (result.status == 413) == (result.limit is not None)
        if result.limit is not None:
            assert result.limit in result.message  # the setting is named
    return result


def refused(source: str) -> ProgramError:
    result = outcome(source)
    assert isinstance(result, ProgramError), f"{source!r} ran"
    return result


def ones_shape(n: int) -> str:
    return ", ".join(["1"] * n)


# --- the reproducers ---------------------------------------------------------------------------


@pytest.mark.parametrize("rank", [MAX_RANK + 1, 64, 65, 100])
def test_a_constructor_past_the_rank_limit_is_refused_with_the_limit_stated(rank: int) -> None:
    for maker in ("zeros", "ones", "randn", "rand"):
        e = refused(f"x = {maker}({ones_shape(rank)})\nsum(x)")
        assert e.status == 400 and e.code == "shape"
        assert (e.line, e.column) == (1, 5)
        assert f"at most {MAX_RANK} dimensions" in e.message and str(rank) in e.message
    assert isinstance(refused(f"full(({ones_shape(rank)}), 2.0)"), ProgramError)


def test_the_rank_limit_itself_runs_for_every_op() -> None:
    shape = ones_shape(MAX_RANK)
    result = outcome(
        f"x = randn({shape})\ny = ones({shape})\n"
        "z = softmax(x * y + 1, axis=3) + log_softmax(x, axis=-1)\n"
        "w = transpose(z) @ x\nm = mse(z, y) + max(x, y).mean(axis=(0, 5)).sum()\n"
        "L = sum(w) + m + x[0, :, 0].sum() + reshape(x, (1,)).sum()"
    )
    assert not isinstance(result, ProgramError), result
    x = next(n for n in result["nodes"] if n["name"] == "x")
    assert np.asarray(x["grad"]).ndim == MAX_RANK


def test_a_reshape_or_a_list_past_the_rank_limit_is_refused() -> None:
    e = refused(f"x = zeros(2)\nreshape(x, ({ones_shape(MAX_RANK)}, 2))")
    assert e.code == "shape" and e.line == 2
    deep = "[" * (MAX_RANK + 1) + "1" + "]" * (MAX_RANK + 1)
    e = refused(f"x = {deep}\nx * 2")
    assert e.code == "shape" and f"at most {MAX_RANK} dimensions" in e.message
    assert outcome(f"x = {'[' * MAX_RANK}1{']' * MAX_RANK}\nx * 2")


def test_a_given_value_past_the_rank_limit_is_refused() -> None:
    deep: Any = 1.0
    for _ in range(MAX_RANK + 1):
        deep = [deep]
    with pytest.raises(ProgramError) as info:
        run("x * 2", {"x": deep})
    assert info.value.code == "bad_value" and "dimensions" in info.value.message


@pytest.mark.parametrize(
    "source",
    [
        "softmax(zeros(0))",
        "log_softmax(zeros(0))",
        "softmax(zeros(2, 0), axis=1)",
        "log_softmax(zeros(2, 0), axis=1)",
        "softmax(zeros(0, 3), axis=0)",
        "x = randn(2, 0)\nsoftmax(x, axis=1) + log_softmax(x, axis=1)",
        "x = randn(0, 2, 0)\nsum(softmax(x, axis=2) * 3)",
    ],
)
def test_softmax_over_an_empty_axis_is_an_empty_result(source: str) -> None:
    result = outcome(source)
    assert not isinstance(result, ProgramError), result.message
    assert np.asarray(result["value"]).size == 0 or result["value"] == 0.0
    for node in result["nodes"]:
        if node["kind"] == "leaf":
            assert np.asarray(node["grad"]).size == 0


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("cross_entropy(zeros(0), 0)", "at least one class"),
        ("cross_entropy(zeros(2, 0), [0, 1])", "at least one class"),
        ("x = zeros(0, 3)\ncross_entropy(x, [])", "empty list of labels"),
        ("mean(zeros(0))", "nothing to average"),
        ("mean(zeros(2, 0), axis=1)", "nothing to average"),
        ("mse(zeros(0), zeros(0))", "nothing to average"),
        ("mse(zeros(3, 0), 1)", "nothing to average"),
    ],
)
def test_losses_and_means_of_nothing_say_so(source: str, said: str) -> None:
    e = refused(source)
    assert e.status == 400 and said in e.message, e.message


def test_a_mean_over_an_empty_axis_with_an_empty_result_is_that_result() -> None:
    result = outcome("x = zeros(0, 0)\nmean(x, axis=0)")
    assert not isinstance(result, ProgramError) and result["value"] == []


@pytest.mark.parametrize(
    ("bounds", "count"),
    [
        ("-2**62, 2**62", 2**63),
        ("2**62, -2**62, -1", 2**63),
        ("0, 2**62, 2", 2**61),
        ("2**62 - 1, -2**62, -3", (2**63 + 1) // 3),
    ],
)
def test_a_huge_range_is_refused_by_max_loop_iterations_before_any_work(
    bounds: str, count: int
) -> None:
    source = f"L = 0\nfor i in range({bounds}):\n    L = L + i\nL"
    start = time.perf_counter()
    e = refused(source)
    assert time.perf_counter() - start < 0.5
    assert e.status == 413 and e.limit == "max_loop_iterations"
    assert f"{count:,}" in e.message and f"{LIMIT:,}" in e.message
    assert (e.line, e.column) == (2, 1)


def test_a_range_of_two_huge_steps_runs() -> None:
    result = outcome("L = 0\nfor i in range(-2**62, 2**62, 2**62):\n    L = L + i\nL")
    assert not isinstance(result, ProgramError) and result["value"] == -(2.0**62)


@pytest.mark.parametrize(
    "bounds", ["2**63", "10**100", "2**62 * 2", "-2**62 - 1", "0, 2**62 + 1", "2**70 // 2**10"]
)
def test_a_whole_number_past_2_to_the_62_is_refused(bounds: str) -> None:
    e = refused(f"L = 0\nfor i in range({bounds}):\n    L = L + i\nL")
    assert e.status == 400 and e.code == "too_large" and e.line == 2


def test_a_zero_step_is_refused_and_negative_steps_count_down() -> None:
    assert (
        "step cannot be 0" in refused("L = 0\nfor i in range(0, 9, 0):\n    L = L + i\nL").message
    )
    for start, stop, step in [(10, 0, -1), (10, 0, -3), (0, 10, -1), (-5, -20, -4)]:
        result = outcome(f"L = 0\nfor i in range({start}, {stop}, {step}):\n    L = L + i\nL")
        assert not isinstance(result, ProgramError)
        assert result["value"] == float(sum(range(start, stop, step)))


def test_an_empty_value_is_charged_as_if_its_empty_axes_were_one() -> None:
    # zeros(0, n, n) holds nothing, but sum(axis=0) of it is n² zeros: it costs n².
    assert not isinstance(outcome("x = zeros(0, 128, 128)\nsum(x, axis=0).sum()"), ProgramError)
    for source in (
        "x = zeros(0, 128, 129)\nsum(x, axis=0).sum()",
        "x = zeros(2**62, 2**62, 0)\nx",
        "x = zeros(0)\ny = reshape(x, (0, 10**9))\nsum(y, axis=0)",
        "x = zeros(0, 1, 128)\ny = zeros(1, 129, 1)\nz = x + y\nsum(z, axis=0)",
    ):
        e = refused(source)
        assert e.status == 413 and e.limit == "max_tensor_elements", (source, e.message)


# --- property tests: random programs on edge shapes ---------------------------------------------

SMALL_DIMS = st.sampled_from([0, 0, 1, 1, 2, 3])


@st.composite
def edge_shape(draw: st.DrawFn) -> tuple[int, ...]:
    """Mostly small shapes with zeros; sometimes a high rank (ones, a few 0s and 2s), past the
    rank limit now and then, or an axis too long for max_tensor_elements."""
    kind = draw(st.integers(0, 9))
    if kind <= 5:
        return tuple(draw(st.lists(SMALL_DIMS, min_size=0, max_size=4)))
    if kind <= 8:
        rank = draw(st.sampled_from([5, 16, MAX_RANK - 1, MAX_RANK, MAX_RANK, MAX_RANK + 1, 64]))
        dims = [1] * rank
        for _ in range(draw(st.integers(0, 3))):
            dims[draw(st.integers(0, rank - 1))] = draw(st.sampled_from([0, 2]))
        return tuple(dims)
    return tuple(draw(st.lists(st.sampled_from([0, 1, 5, 200, 20_000, 2**40]), max_size=3)))


def shape_src(shape: tuple[int, ...]) -> str:
    return ", ".join(map(str, shape))


@st.composite
def constructor(draw: st.DrawFn) -> str:
    shape = draw(edge_shape())
    maker = draw(st.sampled_from(["zeros", "ones", "randn", "rand", "full", "arange"]))
    if not shape and maker != "full":
        return draw(st.sampled_from(["2.0", "-1.5", "[1.0, 2.0]", "[[1.0], [2.0]]"]))
    if maker == "full":
        return f"full(({shape_src(shape)}{',' if len(shape) == 1 else ''}), 0.5)"
    if maker == "arange":
        return f"arange({shape[0]})"
    return f"{maker}({shape_src(shape)})"


def small_int(lo: int = -4, hi: int = 4) -> st.SearchStrategy[str]:
    return st.integers(lo, hi).map(str)


@st.composite
def axis_src(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return "None"
    if kind == 1:
        return draw(st.integers(-MAX_RANK - 1, MAX_RANK).map(str))
    if kind == 2:
        return draw(small_int())
    parts = draw(st.lists(small_int(-3, 3), min_size=1, max_size=3))
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


@st.composite
def key_src(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            parts.append(draw(small_int(-3, 3)))
        else:
            lo, hi = (
                draw(st.sampled_from(["", "0", "1", "-1", "5"])),
                draw(st.sampled_from(["", "0", "1", "2", "-1"])),
            )
            step = draw(st.sampled_from(["", ":1", ":2", ":-1", ":0"]))
            parts.append(f"{lo}:{hi}{step}")
    return ", ".join(parts)


@st.composite
def op_src(draw: st.DrawFn, a: str, b: str) -> str:
    """One op applied to the names a and b (every op, reduction and view of the language)."""
    kind = draw(st.integers(0, 15))
    if kind == 0:
        unary = ["exp", "tanh", "relu", "abs", "sigmoid", "sin", "cos", "sqrt", "log"]
        fn = draw(st.sampled_from(unary))
        return f"{fn}({a})" if fn not in ("sqrt", "log") else f"{fn}(abs({a}) + 1)"
    if kind == 1:
        return f"{a} {draw(st.sampled_from(['+', '-', '*']))} {b}"
    if kind == 2:
        return f"{a} / (abs({b}) + 1)"
    if kind == 3:
        return f"{a} @ {b}"
    if kind == 4:
        return f"{draw(st.sampled_from(['max', 'min', 'mse', 'matmul']))}({a}, {b})"
    if kind == 5:
        fn = draw(st.sampled_from(["sum", "mean"]))
        keep = draw(st.sampled_from(["", ", keepdims=True"]))
        return f"{fn}({a}, axis={draw(axis_src())}{keep})"
    if kind == 6:
        return f"{draw(st.sampled_from(['sum', 'mean']))}({a})"
    if kind == 7:
        dims = draw(st.lists(st.sampled_from([-1, 0, 1, 2, 3, 6]), min_size=1, max_size=4))
        return f"reshape({a}, ({shape_src(tuple(dims))},))"
    if kind == 8:
        return f"transpose({a})" if draw(st.booleans()) else f"{a}.T"
    if kind == 9:
        perm = draw(st.permutations(list(range(draw(st.integers(0, 4))))))
        return f"transpose({a}, ({', '.join(map(str, perm))}{',' if len(perm) == 1 else ''}))"
    if kind == 10:
        return f"{a}[{draw(key_src())}]"
    if kind == 11:
        fn = draw(st.sampled_from(["softmax", "log_softmax"]))
        return f"{fn}({a}, axis={draw(small_int(-3, 3))})"
    if kind == 12:
        labels = draw(st.one_of(small_int(0, 3), st.lists(small_int(0, 3), min_size=1, max_size=4)))
        text = labels if isinstance(labels, str) else "[" + ", ".join(labels) + "]"
        return f"cross_entropy({a}, {text})"
    if kind == 13:
        return f"{a} ** 2 + const({b})"
    if kind == 14:
        return f"-{a} + {b}"
    return f"{a} * 0.5"


@st.composite
def edge_program(draw: st.DrawFn) -> str:
    lines = ["seed(1)", f"A = {draw(constructor())}", f"B = {draw(constructor())}"]
    names = ["A", "B"]
    for i in range(draw(st.integers(1, 3))):
        a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        lines.append(f"C{i} = {draw(op_src(a, b))}")
        names.append(f"C{i}")
    if draw(st.integers(0, 3)) == 0:  # the gradient as a graph (engine/autograd/higher.py), too
        lines.append(f"G = grad(sum({names[-1]}), A)")
        names.append("G")
    if draw(st.booleans()):
        lines.append(f"sum({names[-1]})")
    return "\n".join(lines)


@EDGES
@given(edge_program())
def test_ops_on_empty_and_high_rank_shapes_run_or_give_a_positioned_program_error(
    source: str,
) -> None:
    outcome(source)


@EDGES
@given(edge_shape(), edge_shape(), st.sampled_from(["+", "*", "-", "@"]))
def test_broadcasting_two_edge_shapes_agrees_with_numpy(
    a: tuple[int, ...], b: tuple[int, ...], op: str
) -> None:
    if not a or not b:
        return
    result = outcome(f"A = ones({shape_src(a)})\nB = ones({shape_src(b)})\nA {op} B")
    if len(a) > MAX_RANK or len(b) > MAX_RANK:
        assert isinstance(result, ProgramError) and "dimensions" in result.message
        return
    try:
        with np.errstate(all="ignore"):
            expected = (
                np.broadcast_shapes(a, b) if op != "@" else np.matmul(np.ones(a), np.ones(b)).shape
            )
    except (ValueError, MemoryError):
        assert isinstance(result, ProgramError)
        return
    if isinstance(result, ProgramError):  # only for size: max_tensor_elements
        assert result.limit == "max_tensor_elements", result.message
        return
    assert tuple(result["shape"]) == tuple(expected)


BOUNDS = [
    ("0", 0), ("1", 1), ("3", 3), ("-3", -3), ("7", 7), ("-2**62", -(2**62)),
    ("2**62", 2**62), ("2**62 - 1", 2**62 - 1), ("2**63", None), ("10**100", None),
    ("2**62 * 2", None), ("-2**62 - 1", None), ("2**31 * 2**31", 2**62), ("900", 900),
    ("10**4", 10_000), ("10**4 + 1", 10_001), ("2**61", 2**61),
]  # fmt: skip
STEPS = [("1", 1), ("-1", -1), ("2", 2), ("-3", -3), ("0", 0), ("2**62", 2**62),
         ("-2**62", -(2**62)), ("10**100", None)]  # fmt: skip


@EDGES
@given(
    st.sampled_from(BOUNDS),
    st.sampled_from(BOUNDS),
    st.sampled_from(STEPS),
    st.sampled_from([None, "2", "10**4", "2**62"]),
)
def test_any_range_runs_exactly_or_is_refused_before_it_runs(
    start: tuple[str, int | None],
    stop: tuple[str, int | None],
    step: tuple[str, int | None],
    outer: str | None,
) -> None:
    inner = f"for i in range({start[0]}, {stop[0]}, {step[0]}):\n"
    source = (
        f"L = 0\nfor j in range({outer}):\n    {inner}        L = L + i\nL"
        if outer
        else f"L = 0\n{inner}    L = L + i\nL"
    )
    result = outcome(source)
    times = {None: 1, "2": 2, "10**4": 10**4, "2**62": 2**62}[outer]
    values = (start[1], stop[1], step[1])
    if times > LIMIT:  # the outer loop is refused before its body is looked at
        assert isinstance(result, ProgramError) and result.limit == "max_loop_iterations"
        return
    if any(v is None for v in values):
        assert isinstance(result, ProgramError) and result.code == "too_large", source
        assert result.status == 400 and "whole number" in result.message
        return
    lo, hi, by = (int(v) for v in values)  # type: ignore[arg-type]
    if by == 0:
        assert isinstance(result, ProgramError) and "step cannot be 0" in result.message
        return
    # Counted by walking the range (never len(), which overflows past 2**63 - 1)
    count = sum(1 for _ in itertools.islice(range(lo, hi, by), LIMIT + 1))
    if count * times > LIMIT:
        # run in order, the first limit the run reaches refuses it: the loop's turns, or the
        # nodes or statements its turns made before the next loop was entered
        assert isinstance(result, ProgramError), source
        assert result.limit in ("max_loop_iterations", "max_nodes", "max_statements"), (
            result.message
        )
    elif (
        2 * count * times > DEFAULT_LIMITS.max_nodes  # two nodes an iteration: i, and +
        or times * (1 + count) > DEFAULT_LIMITS.max_statements  # the inner for, its body
    ):
        assert isinstance(result, ProgramError), source
        assert result.limit in ("max_nodes", "max_statements"), result.message
    else:
        assert not isinstance(result, ProgramError), (source, result.message)
        expected = float(sum(range(lo, hi, by))) * times
        assert result["value"] == pytest.approx(expected, rel=1e-12)


def test_every_range_between_the_extremes_is_counted_without_overflow() -> None:
    """len(range(...)) overflows past 2**63 - 1; these pairs cross that line, both ways."""
    ends = ["-2**62", "-2**62 + 1", "0", "2**62 - 1", "2**62"]
    steps = ["1", "-1", "2", "-2", "2**62", "-2**62"]
    for lo, hi, by in itertools.product(ends, ends, steps):
        result = outcome(f"L = 0\nfor i in range({lo}, {hi}, {by}):\n    L = L + i\nL")
        r = range(*(int(eval(t)) for t in (lo, hi, by)))  # noqa: S307 - our own constants
        count = sum(1 for _ in itertools.islice(r, LIMIT + 1))
        if count > LIMIT:
            assert isinstance(result, ProgramError), (lo, hi, by)
            assert result.limit == "max_loop_iterations", result.message
        else:
            assert not isinstance(result, ProgramError), (lo, hi, by, result.message)
            assert result["value"] == float(sum(r))
