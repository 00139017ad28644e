"""The IR prints as the source it means, normalised: parse(str(parse(s))) is parse(s) again
(spans and the source text aside), for hand-picked programs and generated ones."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine import ProgramError, parse
from engine.language import ir
from tests.test_parser_fuzz import scalar_program, tensor_program

ROUND_TRIPS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def plain(node: Any) -> Any:
    """The IR as nested tuples without its positions (spans) and source text."""
    if isinstance(node, np.ndarray):
        return ("array", node.shape, node.tolist())
    if isinstance(node, tuple):
        return tuple(plain(n) for n in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        skip = ("span", "func_span", "source")
        fields = [
            plain(getattr(node, f.name)) for f in dataclasses.fields(node) if f.name not in skip
        ]
        return (type(node).__name__, *fields)
    return node


def assert_round_trip(source: str) -> str:
    program = parse(source)
    text = str(program)
    again = parse(text)
    assert plain(again) == plain(program), f"{source!r}\nprinted as\n{text}"
    assert str(again) == text
    return text


@pytest.mark.parametrize(
    ("source", "printed"),
    [
        ("x*y + x", "x * y + x"),
        ("x.sum(1)", "sum(x, axis=1)"),
        ("x.tanh().T", "transpose(tanh(x))"),
        ("x.transpose(1, 0)", "transpose(x, (1, 0))"),
        ("transpose(x, axes=(1, 0))", "transpose(x, (1, 0))"),
        ("x.reshape(2, 3)", "reshape(x, (2, 3))"),
        ("zeros((2, 3))", "zeros(2, 3)"),
        ("full(3, 0.5)", "full((3,), 0.5)"),
        ("arange(4)", "arange(4)"),
        ("2", "2.0"),
        ("-2 ** x", "-2.0 ** x"),
        ("(-2) ** x", "(-2.0) ** x"),
        ("a - (b - c)", "a - (b - c)"),
        ("(a - b) - c", "a - b - c"),
        ("(a ** b) ** c", "(a ** b) ** c"),
        ("a ** -b", "a ** -b"),
        ("-(a + b)", "-(a + b)"),
        ("(a + b)[0]", "(a + b)[0]"),
        ("x[1:, ::2, -1]", "x[1:, ::2, -1]"),
        ("x[()]", "x[()]"),
        ("[[1, 2], [3, -4]]", "[[1.0, 2.0], [3.0, -4.0]]"),
        ("sum(x, 0, keepdims=True)", "sum(x, keepdims=True, axis=0)"),
        ("softmax(x, axis=(0,))", "softmax(x, axis=(0,))"),
        ("cross_entropy(z, [0, 1])", "cross_entropy(z, [0, 1])"),
        ("y = x.detach()\ny", "y = detach(x)\ny"),
        ("seed(0)\nx = randn(2)\nx", "seed(0)\nx = randn(2)\nx"),
        (
            "x = 1\nfor i in range(0, 3, 1):\n  x = x * 2\nx",
            "x = 1.0\nfor i in range(3):\n    x = x * 2.0\nx",
        ),
        (
            "for i in range(1, 3):\n  y = zeros(0 - i + 4)[-i]\ny",
            "for i in range(1, 3):\n    y = zeros(-i + 4)[-i]\ny",
        ),
    ],
)
def test_a_program_prints_as_its_normalised_source(source: str, printed: str) -> None:
    assert assert_round_trip(source) == printed


def test_a_long_flat_chain_prints_without_recursion() -> None:
    source = "x = " + " + ".join(["y"] * 1_500) + "\nx"
    text = str(parse(source))  # (too deep a tree for `plain`, which recurses)
    assert text == source
    assert str(parse(text)) == text


# --- generated programs ------------------------------------------------------------------------

VALUES = ["a", "b", "W"]  # assigned before they are read
FREE = ["p", "q"]  # read, never assigned: free names
UNARY = ["exp", "log", "tanh", "relu", "abs"]


def static(loop_vars: list[str], depth: int = 0) -> st.SearchStrategy[str]:
    leaf = st.integers(-3, 4).map(str)
    if loop_vars:
        leaf = st.one_of(
            leaf, st.sampled_from(loop_vars), st.sampled_from(loop_vars).map("-{}".format)
        )
    if depth >= 2:
        return leaf
    sub = static(loop_vars, depth + 1)
    op = st.sampled_from(["+", "-", "*", "//", "**"])
    paired = st.tuples(sub, op, sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
    return st.one_of(leaf, paired)


@st.composite
def index(draw: st.DrawFn, loop_vars: list[str]) -> str:
    def part() -> str:
        if draw(st.booleans()):
            return draw(static(loop_vars))
        lo, hi = (draw(st.sampled_from(["", draw(static(loop_vars))])) for _ in range(2))
        return f"{lo}:{hi}" + draw(st.sampled_from(["", ":2", ":-1"]))

    return ", ".join(part() for _ in range(draw(st.integers(1, 2))))


@st.composite
def expression(draw: st.DrawFn, names: list[str], loop_vars: list[str], depth: int = 0) -> str:
    leaves = [
        st.sampled_from(names + FREE + loop_vars),
        st.integers(-3, 3).map(str),
        st.floats(-4, 4, allow_nan=False).map(lambda f: repr(round(f, 2))),
        st.just("[[1, -2], [3.5, 4]]"),
        st.sampled_from(["zeros(2, 3)", "ones((2,))", "randn(3)", "full((2, 2), -1)", "arange(3)"]),
    ]
    if depth >= 3 or draw(st.integers(0, 9)) < 2:
        return draw(st.one_of(*leaves))
    sub = expression(names, loop_vars, depth + 1)
    kind = draw(st.integers(0, 9))
    if kind <= 2:
        op = draw(st.sampled_from(["+", "-", "*", "/", "**", "@"]))
        left, right = draw(sub), draw(sub)
        return draw(st.sampled_from([f"{left} {op} {right}", f"({left} {op} {right})"]))
    if kind == 3:
        return draw(st.sampled_from(["-", "+", "--"])) + draw(sub)
    if kind == 4:
        f = draw(st.sampled_from(UNARY))
        return draw(st.sampled_from([f"{f}({draw(sub)})", f"({draw(sub)}).{f}()"]))
    if kind == 5:
        f = draw(st.sampled_from(["max", "min", "matmul", "mse"]))
        return f"{f}({draw(sub)}, {draw(sub)})"
    if kind == 6:
        f = draw(st.sampled_from(["sum", "mean", "softmax", "log_softmax"]))
        tail = draw(st.sampled_from(["", ", 0", ", axis=-1", ", axis=(0, 1)", ", axis=None"]))
        if f in ("sum", "mean"):
            tail += draw(st.sampled_from(["", ", keepdims=True"]))
        return f"{f}({draw(sub)}{tail})"
    if kind == 7:
        shape = draw(st.sampled_from(["(2, 3)", "2, 3", "(-1,)", "()"]))
        form = draw(st.sampled_from(["reshape({}, {})", "({}).reshape({})"]))
        return form.format(draw(sub), shape)
    if kind == 8:
        x = draw(sub)
        forms = [f"({x}).T", f"transpose({x})", f"transpose({x}, (1, 0))", f"({x}).transpose(1, 0)"]
        return draw(st.sampled_from([*forms, f"transpose({x}, axes=None)", f"const({x})"]))
    return f"({draw(sub)})[{draw(index(loop_vars))}]"


@st.composite
def statements(
    draw: st.DrawFn, names: list[str], loop_vars: list[str], depth: int = 0
) -> list[str]:
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 5))
        if kind == 0 and depth < 2:
            var = "ij"[depth]
            bounds = draw(st.sampled_from(["3", "1, 4", "0, 6, 2", "4, 0, -1"]))
            body = draw(statements(names, [*loop_vars, var], depth + 1))
            lines.append(f"for {var} in range({bounds}):")
            lines += ["    " + line for line in body]
        elif kind == 1 and names:
            lines.append(
                f"g = grad({draw(expression(names, loop_vars))}, {draw(st.sampled_from(names))})"
            )
        elif kind == 2:
            labels = draw(st.sampled_from(["1", "[0, 2]", "(1, 0)"]))
            lines.append(f"t = {labels}")
            lines.append(f"L = cross_entropy({draw(expression(names, loop_vars))}, t)")
        else:
            target = draw(st.sampled_from(VALUES))
            lines.append(f"{target} = {draw(expression(names, loop_vars))}")
            if target not in names:
                names.append(target)
    return lines


@st.composite
def program(draw: st.DrawFn) -> str:
    lines = [f"seed({draw(st.integers(0, 9))})"] if draw(st.booleans()) else []
    names: list[str] = []
    lines += draw(statements(names, []))
    if draw(st.booleans()):
        lines.append(draw(expression(names, [])))
    return "\n".join(lines)


def parses(source: str) -> bool:
    try:
        parse(source)
    except ProgramError:
        return False
    return True


@ROUND_TRIPS
@given(st.one_of(program(), scalar_program(), tensor_program()))
def test_a_parsed_program_printed_parses_to_the_same_ir(source: str) -> None:
    assume(parses(source))  # the generators are looser than the language
    assert_round_trip(source)


NODE_CLASSES: tuple[type, ...] = (
    ir.Num,
    ir.Array,
    ir.Name,
    ir.BinOp,
    ir.Neg,
    ir.Call,
    ir.StaticArg,
    ir.Index,
)
NODE_CLASSES += (ir.Labels, ir.SInt, ir.SVar, ir.SBin, ir.SSlice)
NODE_CLASSES += (ir.Assign, ir.Output, ir.Seed, ir.Loop, ir.Program)
EVERY_KIND = """seed(1)
t = [0, 1]
for i in range(3):
    z = -[[1, 2]][0, i - 1:] + reshape(p, (2,)) * 2
L = cross_entropy(z, t)
L"""


def test_a_program_with_every_kind_of_node_round_trips() -> None:
    assert {type(n) for n in walk(parse(EVERY_KIND))} >= set(NODE_CLASSES)
    assert_round_trip(EVERY_KIND)


def walk(node: Any) -> list[Any]:
    found = [node]
    if isinstance(node, tuple):
        found = []
        for n in node:
            found += walk(n)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            found += walk(getattr(node, f.name))
    return found
