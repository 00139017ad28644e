"""Every message in the reader's language, worded from its key (engine/errors.py): the template
`msg_<key>` of engine/words/en.json and zh.json, never a translation of its English text. Only
CPython's own syntax errors are turned into Chinese by rules (engine/words/messages.py).

The corpus is the errors bad programs actually give: tests/test_lang.py's refusals and the
language's other refusal tables, every limit tests/test_limits.py crosses, tests/test_hostile.py's
escapes and bombs, tests/test_parser_fuzz.py's generators (random text, token soup, near-miss
syntax, generated programs), Python's own syntax errors, bad values, bad addresses, the lessons'
options and the drawing's refusals. Each must be keyed (or be a CPython syntax error), and its
Chinese must hold Chinese and keep every number and quoted name of its English. The source is
walked too: every key it names has a template in both languages with the same fields, and every
template is used.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import inspect
import itertools
import json
import re
import string
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

import tests.test_hostile as hostile_tests
import tests.test_lang as lang_tests
import tests.test_lang_modules as module_tests
import tests.test_lang_names as name_tests
import tests.test_limits as limit_tests
import tests.test_parser_fuzz as fuzz
from app.config import get_settings
from app.main import app
from app.query import QueryError, deflate_source, parse_query
from app.views import ViewAsk, make_view
from engine import ProgramError, run
from engine.drawing import render as draw_render
from engine.drawing.errors import DrawError
from engine.errors import Msg
from engine.limits import Deadline, Limits
from engine.words import all_words
from engine.words.messages import translate, translate_error

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")
EXAMPLES = ROOT / "app" / "examples.toml"
EN, ZH = all_words()["en"], all_words()["zh"]
TEMPLATES = {k[len("msg_") :]: v for k, v in EN.items() if k.startswith("msg_")}


def assert_kept(english: str, zh: str) -> None:
    """`zh` holds Chinese and every number and quoted name `english` had."""
    assert CJK.search(zh), f"no Chinese: {english!r} -> {zh!r}"
    for kept in re.findall(r"\d+", english) + re.findall(r"'(\w+)'", english):
        assert kept in zh, f"{kept!r} lost: {english!r} -> {zh!r}"


def assert_msg(msg: Msg, english: str) -> None:
    """A keyed message: its template in both languages, its English `english`, its Chinese
    keeping what the English quotes, and the same words again from its JSON (as an answer
    carries it: a kept answer, the widget, the page)."""
    assert f"msg_{msg.key}" in EN and f"msg_{msg.key}" in ZH, msg.key
    assert msg.in_language("en") == english
    zh = msg.in_language("zh")
    assert_kept(english, zh)
    carried = json.loads(json.dumps({"message": english, **msg.to_dict()}))
    assert translate_error(carried, "zh")["message"] == zh
    assert translate_error(carried, "en")["message"] == english


def assert_worded(e: ProgramError) -> None:
    """`e` is keyed, or is one of CPython's own syntax errors (Python's words, passed on); in
    Chinese either way, its names and numbers kept."""
    if e.msg is None:
        assert e.code == "syntax" and e.message.startswith("syntax error: "), (
            f"no key: {e.message!r}"
        )
        zh = e.in_language("zh")
        assert_kept(e.message, zh)
        assert zh == translate(e.message, "zh")
        return
    error = e.to_dict()["error"]
    assert (error["key"], error["message"]) == (e.msg.key, e.message)
    assert_msg(e.msg, e.message)
    assert e.in_language("zh") == e.msg.in_language("zh")


def error_of(source: str, values: dict[str, Any] | None = None) -> ProgramError | None:
    try:
        run(source, values)
    except ProgramError as e:
        return e
    return None


def check(source: str, values: dict[str, Any] | None = None) -> None:
    e = error_of(source, values)
    if e is not None:
        assert_worded(e)


def refused(source: str) -> ProgramError:
    e = error_of(source)
    assert e is not None, source
    assert_worded(e)
    return e


# --- the words: a message is worded from its key, not from its English --------------------


def test_a_misspelt_function_keeps_its_name_and_the_suggestion() -> None:
    e = refused("y = tanhh(x)")
    assert e.msg is not None and e.msg.key == "unknown_function_hint"
    assert e.message == "unknown function 'tanhh' — did you mean 'tanh'?"
    assert e.in_language("zh") == "未知函数 'tanhh'——你是不是想写 'tanh'?"
    assert e.in_language("fr") == e.message  # a language without words: English


def test_english_text_is_no_longer_translated_only_python_s_syntax_is() -> None:
    message = "unknown function 'tanhh' — did you mean 'tanh'?"
    assert translate(message, "zh") == message  # a keyed message: worded from its key, never this
    assert translate("syntax error: '(' was never closed", "zh") == "语法错误:'(' 没有闭合"
    assert translate("syntax error: '(' was never closed", "en").startswith("syntax error")


def test_a_message_inside_a_message_is_worded_in_the_same_language() -> None:
    # grad(…) wraps an op's error; a construct's name sits inside "… is not part of the language"
    e = refused("x = 0.0\ng = grad(sqrt(x), x)")
    assert e.msg is not None and e.msg.key == "grad_failed"
    assert e.message == "grad(…): div gives an infinite value — division by zero"
    assert e.in_language("zh") == "grad(…):div 的结果是无穷大——除以零"
    e = refused("class A:\n    pass")
    assert e.in_language("zh").startswith("class") and "本语言" in e.in_language("zh")


def test_the_program_text_in_a_message_is_kept_as_written() -> None:
    e = refused("损失 = 0\nL = log(损失 * 2)")
    assert e.in_language("zh").startswith("log(损失 * 2) 的结果是无穷大")
    assert e.message.startswith("log(损失 * 2) gives an infinite value — log needs")


def test_an_op_s_error_says_its_name_outside_a_program() -> None:
    from engine import leaf
    from engine.autograd.ops import OpError

    with pytest.raises(OpError) as info:
        leaf(0.0, "x").log()
    assert info.value.message.startswith("log gives an infinite value — log needs positive")
    assert_msg(info.value.msg, info.value.message)


def test_a_limit_keeps_its_setting_and_its_numbers() -> None:
    e = refused("for i in range(1000000):\n    y = 1")
    assert e.msg is not None and e.msg.key == "limit_max_loop_iterations"
    zh = "这个循环会运行 1,000,000 次;上限是 10,000 次(max_loop_iterations)"
    assert e.in_language("zh") == zh


def test_an_overlong_message_is_returned_untouched_and_fast() -> None:
    long = "syntax error: " + "(1, 2) and " * 5000 + "x"
    assert translate(long, "zh") is long


# --- the corpus: the errors bad programs give ----------------------------------------------


@pytest.mark.parametrize(
    "source", [c[1] for c in lang_tests.REFUSED], ids=[c[0] for c in lang_tests.REFUSED]
)
def test_every_refusal_of_the_language_is_worded(source: str) -> None:
    refused(source)


HOSTILE = [
    c
    for c in (
        hostile_tests.PARSER_ESCAPES
        + hostile_tests.BOMBS
        + hostile_tests.NUMERIC
        + hostile_tests.UNICODE
        + hostile_tests.MARKUP
    )
    if c[3] >= 400
]


@pytest.mark.parametrize("source", [c[2] for c in HOSTILE], ids=[c[1] for c in HOSTILE])
def test_every_hostile_program_s_refusal_is_worded(source: str) -> None:
    refused(source)


@pytest.mark.parametrize(
    "source",
    [c[1] for c in module_tests.REFUSED + name_tests.REFUSED],
    ids=[c[0] for c in module_tests.REFUSED + name_tests.REFUSED],
)
def test_every_refusal_of_imports_and_names_is_worded(source: str) -> None:
    refused(source)


# Each gives an error (issue 14's names, and the old messages the new names reach).
NAMES_REFUSED = [
    "import os",
    "from os import path",
    "import torch.fft",
    "from torch import fft\ny = fft(x)",
    "import numpy.linalg",
    "from . import x",
    "from math import *",
    "import math\ny = math.gamma(2)",
    "import torch\ny = torch.fft.fft(x)",
    "import numpy as np\ny = np.linalg.det(x)",
    "from math import pi",
    "from math import gamma\ny = gamma(x)",
    "y = np.exp(2)",
    "y = torch.exp(x)",
    "y = F.relu(x)",
    "import math\ny = math.exp",
    "import math\ny = math.tau",
    "import numpy as np\nnp.random.seed(-1)",
    "import numpy as np\nnp.random.seed(1, 2)",
    "import numpy as np\ny = np.random.seed(1)",
    "import torch\nx = torch.zeros(2)\nx.requires_grad_(1)",
    "import torch\nx = torch.zeros(2)\ny = x * 2\ny.requires_grad_(True)\n"
    "z = y * 2\nz.requires_grad_(False)",
    "x = [1.0, 2.0]\ny = x.requires_grad_",
    "x = [1.0, 2.0]\ny = x.shape",
    "x = [1.0, 2.0]\ny = zeros(x.shape[0] + x.shape)",
    "y = (x * 2).shape[0]",
    "x = [1.0, 2.0]\ny = x[[]]",
    "y = linspace(0, 1, -2)",
    "y = arange(0, 1, 0)",
    "y = arange(0, 1e308, 1e-308)",
    "y = linspace(0, 1)",
    "x = 2.0\nn = x.shape[0]\ny = zeros(n)",
    "x = [1.0, 2.0]\ny = x[x.shape[3]]",
    "x = [1.0, 2.0]\ny = x[range(0, 5, 0)]",
    "x = zeros(4)\ny = x[range(0, 100000)]",
    "x = [1.0, 2.0]\ni = [0.5, 1.5]\ny = x[i]",
    "x = [1.0, 2.0]\ny = x[[0, 5]]",
    "x = zeros(2, 2)\ny = x[[0, 1], [0, 1, 1]]",
    "x = zeros(2)\ny = x[[0], [0], [0]]",
    "a = 1.0\nb = 2.0\ny = cat([a, b])",
    "a = zeros(2, 3)\nb = zeros(3, 3)\ny = cat([a, b], axis=1)",
    "a = zeros(2)\nb = zeros(3)\ny = stack([a, b])",
    "a = zeros(2)\ny = cat([a, a], axis=2)",
    "a = zeros(2)\ny = stack([a, a], axis=3)",
    "a = zeros(2)\ny = cat(a)",
    "a = zeros(2)\ny = cat([])",
    "a = zeros(2)\ny = cat([a], 0, 1)",
    "a = zeros(2)\ny = cat([a], 0, axis=0)",
    "a = zeros(2)\ny = clamp(a)",
    "a = zeros(2)\ny = clamp(a, 0, 1, 2)",
    "a = zeros(2)\ny = clamp(a, 0, min=1)",
    "a = zeros(2)\ny = clamp(a, min=a)",
    "a = zeros(2)\ny = clip(a, a_min='x')",
    "a = zeros(2)\ny = a.size()",
    "import torch\nx = torch.tensor([1.0], requires_grad=1)",
    "import torch\nx = torch.tensor()",
    "x = zeros_like()",
    "x = full(2)",
    "x = full((2,), y)",
    "import torch\ny = torch.transpose(x, 0, 2)",
    "import torch\ny = torch.transpose(x, 0)",
    "import torch\nx = torch.zeros(2, 2)\ny = x.transpose(0, 2)",
    "x = randn(2, 2)\ny = max(x)",
    "y = pow(x)",
    "y = dot(x)",
    "dot = 2\ny = dot(dot, dot)",
    "x = 1\ny = x.view",
    "x = [1.0, 2.0]\ny = x.matmull(x)",
    "x = 1\ny = exp(x, dim=0)",
    "x = [1.0]\ny = x.sum(dim=0, axis=0)",
    "x = [1.0]\ny = x.sum(0, axis=0)",
    "x = [1.0]\ny = x.sum(keepdim=2)",
    "x = [1.0]\ny = torch.mean(x, 1)",
    "import torch\nx = [1.0]\ny = torch.mean(x, 1)",
    "x = [1.0, 2.0]\nn = len(x, x)",
    "y = reshape()",
]

# The ops' own refusals (engine/autograd/ops), each reached from a program.
OPS_REFUSED = [
    "x = [1.0, 2.0]\ny = [1.0, 2.0, 3.0]\nz = x + y",
    "x = zeros(2, 3)\ny = x @ x",
    "x = [1.0, 2.0]\ny = 2 @ x",
    "x = zeros(2, 3)\ny = reshape(x, (4, 2))",
    "x = zeros(2, 3)\ny = sum(x, axis=5)",
    "x = zeros(2, 3)\ny = sum(x, axis=(0, 0))",
    "x = zeros(2, 3)\ny = x[0, 0, 0]",
    "x = zeros(3)\ny = x[5]",
    "z = [1.0, 2.0]\ny = cross_entropy(z, 7)",
    "z = zeros(2, 3)\ny = cross_entropy(z, 1)",
    "z = zeros(2, 3)\ny = cross_entropy(z, [0, 1, 2])",
    "z = zeros(2, 3, 4)\ny = cross_entropy(z, 1)",
    "y = softmax(2.0)",
    "y = log_softmax(2.0)",
    "x = zeros(0)\ny = mse(x, x)",
    "y = exp(1000.0)",
    "y = sqrt(-1.0)",
    "x = 0.0\ny = 1 / x",
    "x = -8.0\ny = x ** 0.5",
    "x = 1e308\ny = x * 10",
    "x = 0.0\nL = sqrt(x)\nL.backward()",
    "x = 0.0\nL = log(x * 1 + 1e-320)\nL.backward()",
    "x = 0.0\ng = grad(sqrt(x), x)",
    "x = zeros(200, 200)\ny = mse(x, zeros(200, 1))",
]


@pytest.mark.parametrize("source", NAMES_REFUSED + OPS_REFUSED)
def test_every_refusal_of_the_names_and_the_ops_is_worded(source: str) -> None:
    refused(source)


# Each gives an error: the refusals and mistakes of def, lambda, grad(f), if/while/for,
# unpacking, +=, backward(), x.grad, print, item(), NumPy's generators.
FLOW_REFUSED = [
    "x = 1\ny = x < 2",
    "y = x is 2",
    "def f(*a):\n    return 1\ny = f(1)",
    "@foo\ndef f(x):\n    return x\ny = f(1)",
    'def f(x):\n    """doc"""\ny = f(1)',
    "y = (lambda t: t) + 1",
    "f = lambda x: x\ny = [f]",
    "def f(x):\n    return x\ny = f(1, 2)",
    "def f():\n    return 1\ny = f(1)",
    "def f(x):\n    return x\ny = f(1, x=2)",
    "def f(x):\n    return x\ny = f(z=2)",
    "def f(x):\n    return x\ny = f()",
    "def f(x):\n    return f(x)\ny = f(1)",
    "def f(x):\n    return g(x)\ndef g(x):\n    return f(x)\ny = f(1)",
    "def f(x):\n    return g(x)\ndef g(x):\n    return h(x)\ndef h(x):\n    return f(x)\ny = f(1)",
    "def f(x):\n    y = z\n    z = 2\n    return y\nw = f(1)",
    "def f():\n    y = 1\nz = f() * 2",
    "def f(x):\n    return x\ny = f\nz = y(1) + f",
    "y = grad(2)(x)",
    "y = grad(f)",
    "f = lambda x: x * x\ny = grad(f, x=1)(2.0)",
    "f = lambda x: x\ny = f(1) + grad(f)",
    "f = lambda x: x\ny = grad(f)()",
    "def f(x):\n    return x * [1.0, 2.0]\ny = grad(f)(1.0)",
    "x = [1.0, 2.0]\nwhile x > 0:\n    x = x - 1",
    "x = 1\ny = 2 if [1.0, 2.0] > 1 else 3",
    "y = 1\nwhile x < 10:\n    x = x + 1\nelse:\n    y = 2",
    "x = 1\nif x > 0:\n    break",
    "x = 1\nwhile x < 3:\n    x = x + 1\ncontinue",
    "return 1",
    "for v in 3.0:\n    y = v",
    "y = [i for i in 3.0]",
    "a, b = 1, 2, 3\ny = a",
    "for a, b in [[1, 2, 3]]:\n    y = a",
    "for i in enumerate([1, 2], 1, 2):\n    y = i",
    "xs = [x, x * 2]\ny = xs * 2",
    "xs = [x, x * 2]\nxs",
    "x[0] = 1",
    "x = 1\nx.grad = 2",
    "x = 1\nx @= 2",
    "x = [1.0]\nx[0] += 1",
    "y = 2 * x\nz = y.backward() * 2",
    "x = [1.0, 2.0]\nL = x * 2\nL.backward(foo=1)",
    "x = [1.0, 2.0]\nL = x * 2\nL.backward(gradient=[1.0])",
    "x = [1.0, 2.0]\nL = x * 2\nL.backward()",
    "x = [1.0, 2.0]\nL = x * 2\nL.backward([1.0, 1.0], gradient=[1.0, 1.0])",
    "import torch\nx = torch.tensor(2.0)\nL = x * 3\nL.backward()",
    "x = 1\nL = x * x\nL.backward()\nL.backward()",
    "print(x, sep=1)",
    "x = 2\ny = [print(x)]",
    "x = [1.0, 2.0]\ny = x.item()",
    "x = 2.0\ny = x.double(1)",
    "x = [1.0]\nx.requires_grad = False",
    "x = 1\n(x * 2).requires_grad = True",
    "import torch\ntorch.set_default_dtype(torch.float32)",
    "import torch\nx = torch.Tensor(3)",
    "import numpy as np\nrng = np.random.default_rng(0)\ny = rng.foo(3)",
    "import numpy as np\nrng = np.random.default_rng()",
]


@pytest.mark.parametrize(
    "source", FLOW_REFUSED + [c[1] for c in hostile_tests.NEW_CONSTRUCT_ESCAPES]
)
def test_every_refusal_of_functions_and_control_flow_is_worded(source: str) -> None:
    refused(source)


@pytest.mark.parametrize(
    ("source", "zh"),
    [
        (
            "def f(x):\n    return g(x)\ndef g(x):\n    return h(x)\ndef h(x):\n    return f(x)\n"
            "y = f(1)",
            "f 调用了 g,g 又调用了 h,h 又调用了 f;不支持递归",
        ),
        ("def f(x):\n    return x\ny = f(1, 2)", "f() 接受 1 个参数,但给了 2 个"),
        (
            "x = [1.0, 2.0]\nL = x * 2\nL.backward()",
            "L.backward() 需要 L 是一个数,但它的形状是 (2,)(PyTorch:grad can be implicitly "
            "created only for scalar outputs);请用 L.sum().backward() 或 L.backward(gradient=v)",
        ),
    ],
)
def test_a_flow_message_is_worded_whole(source: str, zh: str) -> None:
    # a chain of calls, a plural, PyTorch's own words kept as it says them
    assert refused(source).in_language("zh") == zh


PYTHON_SYNTAX = [
    "x = (1",
    "x = [1 2]",
    "for i in range(3):\ny = 1",
    "  x = 1",
    "x = 08",
    "x = 0x",
    "x = 0o9",
    "x = 1j_",
    "f(x) = 2",
    "1 = x",
    "x = (1]",
    "x = )",
    "x = 'abc",
    "x = '''abc",
    "x = 1 \\ 2",
    "exp(x=1, 2)",
    "x = exp(x for x in y, 1)",
    "del 1",
    "(x, y) += 1",
    "print x",
    "None = 1",
    "x = 1 if 2",
    "x = 1\\",
    "for x in range(2):\n\ty = 1\n        z = 2",
]


@pytest.mark.parametrize("source", PYTHON_SYNTAX)
def test_every_python_syntax_error_is_worded_by_its_rules(source: str) -> None:
    e = refused(source)
    assert e.code == "syntax" and e.msg is None  # Python's own words, passed on
    assert "invalid" not in e.in_language("zh")  # Python's words too, not only the prefix


def calls_of(fn: Callable[..., Any]) -> Iterator[dict[str, Any]]:
    """The arguments a test function of tests/test_limits.py is called with: every row of its
    parametrize marks (stacked marks multiply), or none; one needing a fixture is left out."""
    tables = []
    for mark in getattr(fn, "pytestmark", []):
        if mark.name == "parametrize":
            names, rows = mark.args[0], mark.args[1]
            names = names.split(",") if isinstance(names, str) else list(names)
            names = [n.strip() for n in names]
            tables.append(
                [
                    dict(
                        zip(names, getattr(r, "values", r) if len(names) > 1 else (r,), strict=True)
                    )
                    for r in rows
                ]
            )
    if not tables and inspect.signature(fn).parameters:
        return
    for combo in itertools.product(*tables):
        yield {k: v for part in combo for k, v in part.items()}


def test_every_limit_s_error_is_worded_by_the_limit_s_one_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[ProgramError] = []

    def recording_run(*args: Any, **kwargs: Any) -> Any:
        try:
            return run(*args, **kwargs)
        except ProgramError as e:
            seen.append(e)
            raise

    monkeypatch.setattr(limit_tests, "run", recording_run)
    # The words are what this test reads: the time bounds are tests/test_limits.py's own.
    monkeypatch.setattr(limit_tests, "bounded", lambda *a, **k: contextlib.nullcontext())
    for name, fn in vars(limit_tests).items():
        if name.startswith("test_") and callable(fn):
            for kwargs in calls_of(fn):
                fn(**kwargs)
    limits = {e.limit for e in seen if e.limit is not None}
    assert len(limits) >= 12, sorted(limits)  # every setting of engine/limits.py a program meets
    for e in seen:
        assert_worded(e)
        if e.limit is not None:
            assert e.msg is not None and limit_key(e.msg) == f"limit_{e.limit}", e.message


def limit_key(msg: Msg) -> str:
    """The key of the limit's message: grad(…)'s wraps the one its gradient ran into."""
    inner = msg.params.get("inner") if msg.key == "grad_failed" else None
    return inner.key if isinstance(inner, Msg) else msg.key


def test_a_gradient_too_large_to_build_says_the_limit_s_one_wording() -> None:
    source = "x = 2.0\ny = x\nfor i in range(8):\n    y = tanh(y) * y\ng = grad(y, x)"
    with pytest.raises(ProgramError) as info:
        run(source, limits=dataclasses.replace(Limits(), max_nodes=30))
    e = info.value
    assert e.limit == "max_nodes" and e.msg is not None and limit_key(e.msg) == "limit_max_nodes"
    assert e.message == "grad(…): " + TEMPLATES["limit_max_nodes"].format(max=30)
    assert_worded(e)


@fuzz.FUZZ
@given(st.text(max_size=200))
def test_any_text_s_error_is_worded(source: str) -> None:
    check(source)


@fuzz.FUZZ
@given(fuzz.token_soup)
def test_token_soup_s_error_is_worded(source: str) -> None:
    check(source)


@fuzz.FUZZ
@given(st.text(alphabet=st.sampled_from(list("xy12+-*/@()[],.:=;# \n\t")), max_size=120))
def test_near_miss_syntax_s_error_is_worded(source: str) -> None:
    check(source)


@fuzz.FUZZ
@given(
    st.text(max_size=20),
    st.one_of(st.floats(), st.lists(st.floats(), max_size=4), st.integers(-10, 10)),
)
def test_bad_values_error_is_worded(name: str, value: Any) -> None:
    check("x*y + x", {name: value})
    check("z = [1.0, 2.0]\ncross_entropy(z, t) + x", {"t": value})


@fuzz.PROGRAMS
@given(fuzz.scalar_program())
def test_generated_scalar_programs_errors_are_worded(source: str) -> None:
    check(source)


@fuzz.PROGRAMS
@given(fuzz.tensor_program())
def test_generated_tensor_programs_errors_are_worded(source: str) -> None:
    check(source)


QUERIES: list[dict[str, str]] = [
    {"v": "9", "source": "x"},
    {"v": "x1", "source": "x"},
    {},
    {"source": "x", "accumulate": "foo"},
    {"source": "x", "order": "bfs"},
    {"z": "A" * 70_000},
    {"z": "A"},
    {"z": "AAAAAAAA"},
    {"z": "-_8PAA"},
    {"z": deflate_source("x" * 70_000)},
    {"source": "x", "values": "x"},
    {"source": "x", "values": "x=abc"},
    {"source": "x", "values": "x=inf"},
    {"source": "x", "values": "1x=2"},
    {"source": "x", "values": "{"},
    {"source": "x", "values": '{"x": NaN}'},
    {"source": "x", "values": "[1]"},
    {"source": "x", "values": '{"x": "a"}'},
    {"source": "x", "values": '{"x": [[[[[[[[[[1]]]]]]]]]]}'},
    {"source": "x", "values": "[" * 5000},
    {"source": "x", "values": "x=1," * 20_000},
]


@pytest.mark.parametrize("params", QUERIES)
def test_every_address_error_is_worded(params: dict[str, str]) -> None:
    with pytest.raises(QueryError) as info:
        parse_query(params, default_source=False)
    err = info.value
    assert err.to_dict()["error"]["key"] == err.msg.key
    assert_msg(err.msg, err.message)
    assert err.in_language("zh") == err.msg.in_language("zh")


LESSON_REFUSALS: list[tuple[list[str], dict[str, Any]]] = [
    (["nope"], {}),
    (["orders"], {"orders": 3}),
    (["orders"], {"orders": {"x": 1}}),
    (["compare_assign"], {"compare_assign": {"a": 1}}),
    (["orders"], {"orders": {"call_limit": "ten"}}),
]


@pytest.mark.parametrize(("names", "options"), LESSON_REFUSALS)
def test_every_refusal_of_a_lesson_s_options_is_worded(
    names: list[str], options: dict[str, Any]
) -> None:
    from engine import lessons
    from engine.program import run_program

    with pytest.raises(ProgramError) as info:
        lessons.run_lessons(run_program("x*y + x"), names, options=options)
    assert_worded(info.value)


def test_a_lesson_past_the_answer_s_numbers_is_worded() -> None:
    from engine import lessons
    from engine.program import run_program

    limits = dataclasses.replace(Limits(), max_answer_numbers=10)
    with pytest.raises(ProgramError) as info:
        lessons.run_lessons(run_program("x*y + x", limits=limits), ["orders"])
    assert info.value.limit == "max_answer_numbers"
    assert_worded(info.value)
    assert "orders" in info.value.in_language("zh")


def test_the_code_lesson_s_refusal_is_worded() -> None:
    from engine import lessons
    from engine.program import run_program

    with pytest.raises(ProgramError) as info:
        lessons.code(run_program("x = 2.0\ny = x * 3\nprint(y.grad_fn)\ny"))
    assert_worded(info.value)


def draw_errors() -> list[DrawError]:
    """The drawing's refusals, each made as the drawing makes it (no Graphviz needed)."""
    from engine.drawing.dot import check_size

    out = [
        draw_render._out_of_budget(0.3),
        draw_render._out_of_request(Deadline(0.0, 10.0)),
        draw_render._overloaded(1.05, 0.2),
        DrawError("draw_busy", "busy"),
        DrawError("graphviz_failed", "graphviz", why="syntax error in line 1 near 'x'"),
        DrawError("graphviz_no_output", "graphviz"),
        DrawError("graphviz_missing", "graphviz"),
    ]
    try:
        check_size({"nodes": [{}] * 4}, max_nodes=3)
    except DrawError as err:
        out.append(err)
    return out


@pytest.mark.parametrize("err", draw_errors(), ids=lambda e: e.msg.key)
def test_every_refusal_of_the_drawing_is_worded(err: DrawError) -> None:
    assert_msg(err.msg, err.message)
    if err.limit is not None and err.code != "busy":  # busy: the machine's load, not a limit
        assert err.msg.key == f"limit_{err.limit}"


def test_the_request_s_deadline_and_the_drawing_s_share_one_wording() -> None:
    ran_out = Deadline(0.0, 0.001).error()
    drawing = draw_render._out_of_request(Deadline(0.0, 0.001))
    assert ran_out.msg is not None and ran_out.msg.key == drawing.msg.key
    assert ran_out.message == drawing.message and "0.001 s" in ran_out.message
    assert_worded(ran_out)


def test_a_graph_too_large_to_draw_says_so_in_the_page_s_language() -> None:
    settings = get_settings()
    many = dataclasses.replace(settings.limits, max_drawn_nodes=3)
    small = dataclasses.replace(settings, limits=many)
    view = make_view(ViewAsk("x*y + x", lang="zh"), small)
    assert view["draw_error"]["message"].startswith("这个图有 4 个节点;超过 3 个就不再绘制")
    assert view["draw_error"]["limit"] == "max_drawn_nodes"
    view = make_view(ViewAsk("x*y + x"), small)
    assert view["draw_error"]["message"].startswith("This graph has 4 nodes")


# --- the templates: every key the source names, each template used --------------------------

SOURCES = sorted(p for part in ("engine", "app", "gradtrace") for p in (ROOT / part).rglob("*.py"))
# The calls that take a message's key first, and their arguments that are not its params.
KEYED_CALLS = {
    "fail", "error", "warn", "say", "Msg", "OpError", "BackwardError", "DrawError", "ValuesError",
    "keyed_body",
}  # fmt: skip
NOT_PARAMS = {"code", "limit", "http_status"}


@dataclasses.dataclass
class KeyUse:
    key: str
    where: str
    params: set[str] | None  # the params given, None when not all are known (**params)


def string_constants(node: ast.AST) -> list[str]:
    """The keys an argument can be: a string, or either side of `a if c else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return string_constants(node.body) + string_constants(node.orelse)
    return []


def given_params(call: ast.Call) -> set[str] | None:
    """The params a keyed call gives: its keywords, or the keys of the dict Msg and say take;
    None when they cannot all be read here."""
    name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
    at = {"Msg": 1, "say": 2}.get(str(name))  # Msg(key, {…}), say(key, lang, {…})
    if at is not None:
        if len(call.args) > at and isinstance(call.args[at], ast.Dict):
            keys = call.args[at].keys
            if all(isinstance(k, ast.Constant) for k in keys):
                return {k.value for k in keys if isinstance(k, ast.Constant)}
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    return {k.arg for k in call.keywords if k.arg is not None} - NOT_PARAMS


def key_uses() -> tuple[list[KeyUse], set[str], set[str], set[str]]:
    """Walk the source: the keys its keyed calls name (and their params); every string
    constant; the prefixes and suffixes joined to a key at run time ("limit_" + setting,
    f"construct_{kind}", key + "_hint")."""
    uses: list[KeyUse] = []
    constants: set[str] = set()
    prefixes: set[str] = set()
    suffixes: set[str] = set()
    for path in SOURCES:
        tree = ast.parse(path.read_text("utf-8"))
        where = path.relative_to(ROOT).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                constants.add(node.value)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
                    prefixes.add(node.left.value)
                if isinstance(node.right, ast.Constant) and isinstance(node.right.value, str):
                    suffixes.add(node.right.value)
            elif isinstance(node, ast.JoinedStr) and node.values:
                first = node.values[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    prefixes.add(first.value)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:  # an op's domain_hint: the key of its words
                    if isinstance(item, ast.Assign) and any(
                        getattr(t, "id", None) == "domain_hint" for t in item.targets
                    ):
                        for key in string_constants(item.value):
                            uses.append(KeyUse(key, f"{where}:{item.lineno}", set()))
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            owner = getattr(getattr(node.func, "value", None), "id", "")
            # log.error(…) logs (in English); docutils' nodes.error(…) is a node
            if name in KEYED_CALLS and "log" not in owner and owner != "nodes":
                for key in string_constants(node.args[0]):
                    uses.append(KeyUse(key, f"{where}:{node.lineno}", given_params(node)))
    return uses, constants, prefixes, suffixes


def fields_of(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def test_the_walk_finds_the_engine_s_keyed_messages() -> None:
    uses, _, _, _ = key_uses()
    keys = {u.key for u in uses}
    assert len(keys) > 200, len(keys)
    for key in ("limit_max_nodes", "broadcast", "hint_log", "query_choice", "draw_busy"):
        assert key in keys, key


def test_every_key_the_source_names_has_its_template_in_both_languages() -> None:
    uses, _, _, _ = key_uses()
    missing = sorted({(u.key, u.where) for u in uses if f"msg_{u.key}" not in EN})
    assert missing == [], "add these to engine/words/en.json and zh.json"
    for u in uses:
        fields = fields_of(TEMPLATES[u.key])
        if u.params is not None:
            assert fields <= u.params, f"{u.where}: {u.key} needs {sorted(fields - u.params)}"


CODE_ONLY = {"grad_failed"}  # "grad(…): {inner}": the inner message holds the words
ENGLISH_GRAMMAR = {"s"}  # "argument{s}": a plural Chinese does not mark


def test_english_and_chinese_have_the_same_templates_with_the_same_fields() -> None:
    zh = {k[len("msg_") :]: v for k, v in ZH.items() if k.startswith("msg_")}
    assert sorted(zh) == sorted(TEMPLATES)
    for key, template in TEMPLATES.items():
        assert fields_of(zh[key]) == fields_of(template) - ENGLISH_GRAMMAR, key
        # 中文, not English: but code (`class`, `None`, `grad(…): …`) is written as it is
        assert CJK.search(zh[key]) or zh[key] == template or key in CODE_ONLY, key


def test_every_template_is_used() -> None:
    uses, constants, prefixes, suffixes = key_uses()
    named = {u.key for u in uses} | constants

    def used(key: str) -> bool:
        return (
            key in named
            or any(key.startswith(p) and key[len(p) :] in constants for p in prefixes if p)
            or any(key.endswith(s) and key[: -len(s)] in constants for s in suffixes if s)
        )

    assert sorted(k for k in TEMPLATES if not used(k)) == []


SETTING = re.compile(r"\b(max_[a-z_]+)\)")
# A template may name a setting without being its refusal: the printed output's cut line.
NOTICES = {"printed_cut"}


def test_one_wording_per_limit() -> None:
    """A setting is named (at the end of a bracket, as a refusal names it) by one template
    only, its own `limit_<setting>`: every refusal it makes says it in the same words."""
    for key, template in TEMPLATES.items():
        for setting in SETTING.findall(template):
            assert key == f"limit_{setting}" or key in NOTICES, (key, template)
    for f in dataclasses.fields(Limits):
        assert f"limit_{f.name}" in TEMPLATES, f.name


# --- where the answer is made ---------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def test_the_page_s_rerun_answers_in_its_language(client: TestClient) -> None:
    body = {"source": "x = 2\nL = tanhh(x)", "lang": "zh"}
    zh = client.post("/api/render", json=body).json()["error"]
    assert zh["message"] == "未知函数 'tanhh'——你是不是想写 'tanh'?"
    assert (zh["line"], zh["column"], zh["code"]) == (2, 5, "unknown_function")
    assert zh["key"] == "unknown_function_hint" and zh["params"]["hint"] == "tanh"
    en = client.post("/api/render", json={**body, "lang": "en"}).json()["error"]
    assert en["message"] == "unknown function 'tanhh' — did you mean 'tanh'?"


def test_the_page_s_rerun_refuses_bad_options_in_words(client: TestClient) -> None:
    r = client.post("/api/render", json={"source": "x", "order": "bfs"})
    assert r.status_code == 422 and r.json()["error"]["key"] == "render_options"


def test_the_page_in_chinese_opens_with_the_error_in_chinese(client: TestClient) -> None:
    r = client.get("/", params={"source": "x = 1\ny = x(2)", "lang": "zh"})
    assert "'x' 是一个值,不是函数" in r.text
    r = client.get("/", params={"source": "x = 1\ny = x(2)"})
    assert "'x' is a value, not a function" in r.text
    r = client.get("/", params={"v": "9", "source": "x", "lang": "zh"})  # the address's error
    assert "这个链接用的是格式 v=9" in r.text


def test_the_api_keeps_english_unless_the_address_asks(client: TestClient) -> None:
    r = client.post("/api/trace", json={"source": "log(0)"})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("log(0) gives")
    r = client.get("/api/trace", params={"source": "log(0)"})
    assert r.json()["error"]["message"].startswith("log(0) gives")
    r = client.get("/api/trace", params={"source": "log(0)", "lang": "zh"})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("log(0) 的结果是")


def test_the_image_s_error_picture_is_in_its_language(client: TestClient) -> None:
    r = client.get("/api/svg", params={"source": "log(0)", "lang": "zh"})
    assert r.status_code == 400 and "log(0) 的结果是无穷大" in r.text
    r = client.get("/api/svg", params={"lang": "zh"})  # no program: the address's error
    assert r.status_code == 400 and "没有程序" in r.text
    r = client.get("/api/svg", params={"source": "log(0)"})
    assert "log(0) gives an infinite value" in r.text


def test_a_lesson_s_own_message_is_worded_in_the_page_s_language(client: TestClient) -> None:
    body = {"source": "x = 1e308\nx * 1", "lessons": ["gradcheck"]}
    rows = client.post("/api/trace?lang=zh", json=body).json()["lessons"]["gradcheck"]["rows"]
    assert rows and rows[0]["verdict"] == "unchecked"
    assert rows[0]["reason"].startswith("在 float64 里 x ± ε 会舍入回 x")
    assert_msg(Msg(rows[0]["why"]["key"], rows[0]["why"]["params"]), EN["msg_gc_rounds_back"])
    rows = client.post("/api/trace", json=body).json()["lessons"]["gradcheck"]["rows"]
    assert rows[0]["reason"].startswith("x ± ε rounds back to x")


def test_the_server_s_own_refusals_are_keyed_and_in_the_address_s_language(
    client: TestClient,
) -> None:
    big = b"x" * (get_settings().max_body_bytes + 1)
    r = client.post("/api/trace?lang=zh", content=big, headers={"content-type": "text/plain"})
    error = r.json()["error"]
    assert r.status_code == 413 and error["key"] == "limit_max_body_bytes"
    assert error["message"].startswith("请求体超过了") and "max_body_bytes" in error["message"]
    r = client.post("/api/trace", content=big, headers={"content-type": "text/plain"})
    assert r.json()["error"]["message"].startswith("the request body is larger than")


def test_the_did_you_mean_warning_is_worded_from_its_key(client: TestClient) -> None:
    params = {"source": "loss = 2.0\nL = losss * 3"}
    zh = client.get("/api/trace", params={**params, "lang": "zh"}).json()["warnings"]
    assert [(w["message"], w["line"], w["column"]) for w in zh] == [
        ("'losss' 从来没有被赋值;你是不是想写 'loss'?", 2, 5)
    ]
    en = client.get("/api/trace", params=params).json()["warnings"]
    assert [w["message"] for w in en] == ["'losss' is never assigned; did you mean 'loss'?"]


def test_the_page_is_not_sent_the_message_templates(client: TestClient) -> None:
    """The server words every message before it is sent: the templates stay server-side."""
    from gradtrace.assets import ui_strings
    from gradtrace.standalone import standalone_html

    r = client.get("/", params={"source": "x*y + x"})
    state = re.search(r'<script[^>]*type="application/json"[^>]*>(.*?)</script>', r.text, re.S)
    assert state is not None
    strings = json.loads(state.group(1))["strings"]
    assert set(strings) == {"en", "zh"} and strings["en"]["step_of"]
    for table in (*strings.values(), *ui_strings().values()):
        assert not [k for k in table if k.startswith("msg_")]
    for table in ui_strings().values():  # the main page leaves out the own-engine page's words
        assert len(table) == len([k for k in EN if not k.startswith("msg_")])
    page = standalone_html(run("x*y + x").to_dict(), lang="zh")
    assert "msg_" not in page and TEMPLATES["limit_max_nodes"] not in page


def test_the_widget_shows_an_error_in_its_language() -> None:
    pytest.importorskip("anywidget")
    from gradtrace import widget

    w = widget("x = 2\nL = tanhh(x)", lang="zh")
    assert w.error is not None and "未知函数 'tanhh'" in w.error["text"]
    w.lang = "en"
    assert "unknown function 'tanhh'" in w.error["text"]


def test_the_command_line_says_an_error_in_render_s_language(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from gradtrace.cli import main

    assert main(["render", "x = 2\nL = tanhh(x)", "--lang", "zh"]) == 2
    assert "第 2 行,第 5 列: 未知函数 'tanhh'" in capsys.readouterr().err
    assert main(["trace", "x = 2\nL = tanhh(x)"]) == 2
    assert "line 2, column 5: unknown function 'tanhh'" in capsys.readouterr().err


# --- the gallery's comments -----------------------------------------------------------------


def code_of(source: str) -> str:
    return "\n".join(line.split("#")[0].rstrip() for line in source.splitlines())


def test_every_gallery_comment_is_in_both_languages() -> None:
    examples = tomllib.loads(EXAMPLES.read_text("utf-8"))["example"]
    commented = [e for e in examples if "#" in e["source"]]
    assert commented, "the gallery has comments to translate"
    for e in commented:
        zh = e.get("source_zh")
        assert zh, f"{e['id']}: a comment without its Chinese (source_zh)"
        assert code_of(zh) == code_of(e["source"]), e["id"]  # the same program
        comments = [line.split("#", 1)[1] for line in zh.splitlines() if "#" in line]
        assert comments and all(CJK.search(c) for c in comments), e["id"]
    for e in examples:
        if "source_zh" in e:
            assert "#" in e["source"], f"{e['id']}: source_zh only for a source with comments"
