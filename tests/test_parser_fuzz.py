"""Property-based fuzzing of the language front end (hypothesis, bounded and derandomized):

(a) any text — random Unicode, random mixes of the language's tokens — either runs or raises
    ProgramError, quickly, and an error's position lies inside the text;
(b) programs generated from the language's grammar run or fail only with a numeric-domain or
    shape ProgramError, never another exception, and their trace is strict JSON;
(c) the same program gives the identical trace twice.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import ProgramError, run

QUICK = 2.0  # seconds per program, generous

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROGRAMS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


def lines_of(source: str) -> list[str]:
    """Lines as Python counts them (\\r\\n, \\r, \\n)."""
    return re.split(r"\r\n|\r|\n", source)


def check_run(source: str, values: dict[str, Any] | None = None) -> dict[str, Any] | ProgramError:
    """Run; return the trace or the ProgramError. Any other exception fails the test."""
    start = time.perf_counter()
    try:
        result: dict[str, Any] | ProgramError = run(source, values).to_dict()
    except ProgramError as e:
        result = e
    elapsed = time.perf_counter() - start
    assert elapsed < QUICK, f"{elapsed:.2f}s for {source[:200]!r}"
    if isinstance(result, ProgramError):
        check_error(result, source)
    else:
        json.dumps(result, allow_nan=False)  # always finite, always JSON
        check_labels(result)
    return result


def check_labels(trace: dict[str, Any]) -> None:
    """Names are identifiers; labels are code: no strings, comments or control characters
    (so nothing in a trace can carry markup into the drawing)."""
    for node in trace["nodes"]:
        assert node["name"] is None or node["name"].isidentifier(), node
        assert node["label"], node
        for text in (node["label"], node["text"] or ""):
            assert not set(text) & set("<>\"'&#`\\"), node
            assert all(unicodedata.category(ch) not in ("Cc", "Cf", "Cs") for ch in text), node


def check_error(e: ProgramError, source: str) -> None:
    assert isinstance(e.message, str) and e.message.strip()
    assert "Traceback" not in e.message
    if e.line is not None:
        lines = lines_of(source)
        assert 1 <= e.line <= len(lines), (e.line, len(lines), e.message)
        assert e.column is not None and 1 <= e.column <= len(lines[e.line - 1]) + 1, (
            e.line,
            e.column,
            e.message,
        )
    if e.end_line is not None:
        assert e.line is not None and e.end_line >= e.line
    d = e.to_dict()["error"]
    assert {"message", "line", "column"} <= set(d)


# --- (a) any text ----------------------------------------------------------------------------

TOKENS = [
    "x",
    "y",
    "W",
    "损失",
    "𝐱",
    "h",
    "i",
    "_",
    "__class__",
    "__import__",
    "0",
    "1",
    "2.5",
    "1e308",
    "10**400",
    "-",
    "+",
    "*",
    "/",
    "**",
    "@",
    "%",
    "//",
    "=",
    "==",
    "+=",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    ";",
    ".",
    "#",
    "'",
    '"',
    "f'",
    "\\",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "    ",
    " ",
    "for",
    "in",
    "range",
    "range(3)",
    "while",
    "if",
    "else",
    "def",
    "class",
    "lambda",
    "import",
    "return",
    "yield",
    "seed(1)",
    "randn(2, 2)",
    "zeros(3)",
    "ones",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "relu",
    "sum",
    "mean",
    "softmax",
    "cross_entropy",
    "const",
    "detach",
    ".T",
    ".sum(axis=1)",
    ".tanh()",
    "axis=",
    "keepdims=True",
    "axes=",
    "[[1, 2], [3, 4]]",
    "None",
    "True",
    "...",
    # code as students already write it: imports, prefixes, keywords, shapes, index lists
    "import torch",
    "import numpy as np",
    "from math import exp",
    "import os",
    "torch.",
    "np.",
    "math.",
    "F.relu",
    "requires_grad=True",
    ".requires_grad_()",
    ".backward()",
    "dim=",
    ".shape",
    ".shape[0]",
    "len(x)",
    "*x.shape",
    "cat([x, y])",
    "stack(",
    "clamp(",
    "min=0",
    "linspace(0, 1, 3)",
    "arange(0, 1, 0.25)",
    "[[0, 1]]",
    "[range(2), [0, 1]]",
    "é",
    "e\u0301",
    "\U0010ffff",
]
HOSTILE = [
    "\ud800",
    "\udfff",
    "\u202e",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\x00",
    "\x0c",
    "\u2028",
    "\x85",
]
# mostly the language's own tokens, so the soup gets past the text checks into the parser;
# now and then a hostile character or a few random ones
token_soup = st.lists(
    st.one_of(
        st.sampled_from(TOKENS * 10 + HOSTILE),
        st.text(st.characters(exclude_categories=["Cc", "Cs"]), max_size=2),
    ),
    max_size=40,
).map("".join)


@FUZZ
@given(st.text(max_size=200))
def test_any_unicode_text_runs_or_is_a_program_error(source: str) -> None:
    check_run(source)


@FUZZ
@given(token_soup)
def test_random_token_soup_runs_or_is_a_program_error(source: str) -> None:
    check_run(source)


@FUZZ
@given(st.text(alphabet=st.sampled_from(list("xy12+-*/@()[],.:=;# \n\t")), max_size=120))
def test_near_miss_syntax_runs_or_is_a_program_error(source: str) -> None:
    check_run(source)


@FUZZ
@given(
    st.text(max_size=40),
    st.text(max_size=20),
    st.one_of(st.floats(), st.lists(st.floats(), max_size=4), st.integers(-10, 10)),
)
def test_any_values_give_a_program_error_or_a_trace(source: str, name: str, value: Any) -> None:
    check_run("x*y + " + source if source.isidentifier() else "x*y + x", {name: value})
    check_run("z = [1.0, 2.0]\ncross_entropy(z, t) + x", {"t": value})


# --- (b) programs from the grammar -----------------------------------------------------------

UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs"]
SCALAR_ERRORS = {"non_finite", "non_finite_grad"}
# an index list that does not fit the value's shape is refused like a shape that does not
TENSOR_ERRORS = SCALAR_ERRORS | {"shape", "axis", "index"}
# The same functions as NumPy and PyTorch spell them, for a program that imports them.
SPELLINGS: dict[str, dict[str, str]] = {
    "": {},
    "import numpy as np\n": {
        **{f: f"np.{f}" for f in ["exp", "log", "sqrt", "sin", "cos", "tanh", "abs", "sum"]},
        "cat": "np.concatenate", "stack": "np.stack", "clamp": "np.clip", "max": "np.maximum",
        "min": "np.minimum", "mean": "np.mean",
    },
    "import torch\nimport torch.nn.functional as F\n": {
        **{f: f"torch.{f}" for f in UNARY if f != "relu"}, "relu": "F.relu",
        "cat": "torch.cat", "stack": "torch.stack", "clamp": "torch.clamp",
        "max": "torch.maximum", "min": "torch.minimum", "sum": "torch.sum", "mean": "torch.mean",
        "softmax": "F.softmax", "log_softmax": "F.log_softmax", "mse": "F.mse_loss",
    },
}  # fmt: skip


def number() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(-5, 5).map(str),
        st.floats(-4, 4, allow_nan=False).map(lambda f: repr(round(f, 3))),
    )


@st.composite
def scalar_expr(draw: st.DrawFn, names: list[str], depth: int = 0) -> str:
    leaves = [number()] + ([st.sampled_from(names)] if names else [])
    if depth >= 3:
        return draw(st.one_of(*leaves))
    sub = scalar_expr(names, depth + 1)
    kind = draw(st.integers(0, 6))
    if kind <= 1:
        return draw(st.one_of(*leaves))
    if kind <= 3:
        op = draw(st.sampled_from(["+", "-", "*", "/"]))
        return f"({draw(sub)} {op} {draw(sub)})"
    if kind == 4:
        return f"{draw(st.sampled_from(UNARY))}({draw(sub)})"
    if kind == 5:
        exponent = draw(st.one_of(st.integers(-3, 4).map(str), st.sampled_from(["0.5", "1.5"])))
        return f"({draw(sub)}) ** {exponent}"
    return f"{draw(st.sampled_from(['max', 'min']))}({draw(sub)}, {draw(sub)})"


@st.composite
def scalar_program(draw: st.DrawFn) -> str:
    names: list[str] = []
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.integers(0, 5))
        if kind == 0 and names:
            body_names = names + ["i"]
            target = draw(st.sampled_from(names))
            k = draw(st.integers(0, 4))
            lines.append(f"for i in range({k}):\n    {target} = {draw(scalar_expr(body_names))}")
            continue
        target = draw(st.sampled_from(["a", "b", "c", "损失", "w"]))
        if kind == 1:
            lines.append(f"{target} = {draw(number())}")
        else:
            # free names p, q are leaves with default 1.0
            lines.append(f"{target} = {draw(scalar_expr(names + ['p', 'q']))}")
        if target not in names:
            names.append(target)
    if draw(st.booleans()):
        lines.append(draw(scalar_expr(names or ["p"])))
    if draw(st.booleans()):
        lines.insert(0, f"seed({draw(st.integers(0, 9))})")
    return "\n".join(lines)


SHAPES = [(), (3,), (2, 3), (1, 3), (2, 1), (3, 2), (4,)]


def shape_text(shape: tuple[int, ...]) -> str:
    return ", ".join(map(str, shape))


@st.composite
def tensor_leaf(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(SHAPES))
    if shape == ():
        return draw(number())
    maker = draw(st.sampled_from(["randn", "rand", "ones", "zeros", "list"]))
    if maker == "list":
        import numpy as np

        values = np.round(np.linspace(-2, 2, int(np.prod(shape))), 2).reshape(shape)
        return str(values.tolist())
    return f"{maker}({shape_text(shape)})"


@st.composite
def tensor_expr(
    draw: st.DrawFn, names: list[str], depth: int = 0, spell: dict[str, str] | None = None
) -> str:
    spell = spell or {}

    def fn(name: str) -> str:  # the function as the program's imports spell it
        return spell.get(name, name)

    leaf = st.one_of(tensor_leaf(), st.sampled_from(names)) if names else tensor_leaf()
    if depth >= 3:
        return draw(leaf)
    sub = tensor_expr(names, depth + 1, spell)
    kind = draw(st.integers(0, 13))
    if kind <= 1:
        return draw(leaf)
    if kind <= 3:
        op = draw(st.sampled_from(["+", "-", "*", "/", "@"]))
        return f"({draw(sub)} {op} {draw(sub)})"
    if kind == 4:
        return f"{fn(draw(st.sampled_from(UNARY)))}({draw(sub)})"
    if kind == 5:
        axis = draw(st.sampled_from(["", "axis=0", "axis=-1", "axis=1, keepdims=True", "dim=0"]))
        return (
            f"{fn(draw(st.sampled_from(['sum', 'mean'])))}({draw(sub)}{', ' if axis else ''}{axis})"
        )
    if kind == 6:
        return f"({draw(sub)}).{draw(st.sampled_from(['T', 'tanh()', 'sum()', 'relu()']))}"
    if kind == 7:
        return f"{fn(draw(st.sampled_from(['softmax', 'log_softmax'])))}({draw(sub)})"
    if kind == 8:
        return f"{fn('mse')}({draw(sub)}, {draw(sub)})"
    # the newer names: joins, clamp, index lists, maximum/minimum and shapes as numbers
    if kind == 9:
        axis = draw(st.sampled_from(["", ", axis=0", ", dim=-1", ", 1"]))
        return f"{fn(draw(st.sampled_from(['cat', 'stack'])))}([{draw(sub)}, {draw(sub)}]{axis})"
    if kind == 10:
        bounds = draw(st.sampled_from(["-1, 1", "0, None", "None, 0.5", "2, 1"]))
        return f"{fn('clamp')}({draw(sub)}, {bounds})"
    if kind == 11:
        key = draw(st.sampled_from(["[0, 0]", "[-1, 0, 1]", "range(2), [0, 2]", ":, [1, 0]"]))
        return f"({draw(sub)})[{key}]"
    if kind == 12:
        return f"{fn(draw(st.sampled_from(['max', 'min'])))}({draw(sub)}, {draw(sub)})"
    if not names:
        return draw(leaf)
    name = draw(st.sampled_from(names))
    if draw(st.booleans()):
        return f"(ones(*{name}.shape) + {draw(sub)})"
    size = draw(st.sampled_from([f"len({name})", f"{name}.shape[0]", f"{name}.shape[-1]"]))
    return f"({draw(sub)} * {size})"


@st.composite
def tensor_program(draw: st.DrawFn) -> str:
    names: list[str] = []
    header = draw(st.sampled_from(list(SPELLINGS)))
    lines = [header.rstrip("\n")] if header else []
    for _ in range(draw(st.integers(1, 5))):
        target = draw(st.sampled_from(["W", "b", "h", "x", "L"]))
        lines.append(f"{target} = {draw(tensor_expr(names, spell=SPELLINGS[header]))}")
        if target not in names:
            names.append(target)
    if draw(st.booleans()):
        lines.append(
            f"cross_entropy({draw(st.sampled_from(['randn(3)', 'W']))}, {draw(st.integers(0, 2))})"
        )
    return "\n".join(lines)


@PROGRAMS
@given(scalar_program())
def test_generated_scalar_programs_run_or_fail_in_the_numeric_domain(source: str) -> None:
    result = check_run(source)
    if isinstance(result, ProgramError):
        assert result.code in SCALAR_ERRORS, (result.code, result.message, source)
        assert result.line is not None
    else:
        ids = [n["id"] for n in result["nodes"]]
        assert ids == [f"n{i}" for i in range(len(ids))]


@PROGRAMS
@given(tensor_program())
def test_generated_tensor_programs_run_or_fail_with_a_domain_or_shape_error(source: str) -> None:
    result = check_run(source)
    if isinstance(result, ProgramError):
        # With torch, a number written alone is Python's (PyTorch's own TypeError and
        # AttributeError there: `(0).T`, `[1.0] + 0`); without, every value is a tensor.
        python = (
            {"attribute", "invalid", "list", "no_output"} if "import torch" in source else set()
        )
        allowed = TENSOR_ERRORS | {"labels"} | python
        assert result.code in allowed, (result.code, result.message, source)
        assert result.line is not None


# --- (c) determinism -------------------------------------------------------------------------


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.one_of(scalar_program(), tensor_program()),
    st.sampled_from(["add", "assign"]),
    st.sampled_from(["dfs", "kahn"]),
)
def test_the_same_program_gives_the_identical_trace_twice(
    source: str, accumulate: str, order: str
) -> None:
    def once() -> Any:
        try:
            return run(source, accumulate=accumulate, order=order).to_dict()
        except ProgramError as e:
            return e.to_dict()

    first, second = once(), once()
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
