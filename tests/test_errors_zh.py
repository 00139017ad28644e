"""Every error message in Chinese for a page in 中文 (engine/words/messages.py), the API's in
English unless asked, and the gallery's comments in both languages.

The corpus is the messages bad programs actually produce: tests/test_lang.py's refusals,
every limit tests/test_limits.py crosses, tests/test_parser_fuzz.py's generators (random text,
token soup, near-miss syntax, generated programs), Python's own syntax errors, the refusals of
functions and control flow (FLOW_REFUSED and tests/test_hostile.py's escapes through them), and
every constant message the engine's source raises. Each must be translated (hold Chinese) and
keep the names and numbers it quotes.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import re
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
import tests.test_limits as limit_tests
import tests.test_parser_fuzz as fuzz
from app.config import get_settings
from app.main import app
from app.query import QueryError, parse_query
from app.views import ViewAsk, make_view
from engine import ProgramError, run
from engine.words.messages import is_translated, translate

CJK = re.compile(r"[\u4e00-\u9fff]")
EXAMPLES = Path(__file__).resolve().parents[1] / "app" / "examples.toml"


def assert_translated(message: str) -> None:
    """The Chinese of `message` holds Chinese and every number and quoted name it had."""
    zh = translate(message, "zh")
    assert is_translated(message) and CJK.search(zh), f"no rule for {message!r}"
    for kept in re.findall(r"\d+", message) + re.findall(r"'(\w+)'", message):
        assert kept in zh, f"{kept!r} lost: {message!r} -> {zh!r}"


def error_of(source: str, values: dict[str, Any] | None = None) -> ProgramError | None:
    try:
        run(source, values)
    except ProgramError as e:
        return e
    return None


def check(source: str, values: dict[str, Any] | None = None) -> None:
    e = error_of(source, values)
    if e is not None:
        assert_translated(e.message)


# --- the catalog ----------------------------------------------------------------------------


def test_a_misspelt_function_keeps_its_name_and_the_suggestion() -> None:
    zh = translate("unknown function 'tanhh' — did you mean 'tanh'?", "zh")
    assert zh == "未知函数 'tanhh'——你是不是想写 'tanh'?"


def test_english_and_any_other_language_keep_the_message() -> None:
    message = "unknown function 'tanhh' — did you mean 'tanh'?"
    assert translate(message, "en") == message
    assert translate(message, "fr") == message


def test_a_message_no_rule_knows_is_kept_as_it_is() -> None:
    assert translate("something new went wrong", "zh") == "something new went wrong"
    assert not is_translated("something new went wrong")


def test_fragments_are_translated_inside_a_message() -> None:
    # a construct's name, Python's own syntax message, a domain hint, a nested grad(…)
    assert translate("a while loop is not part of the language", "zh") == (
        "while 循环不是本语言的一部分"
    )
    assert translate("syntax error: '(' was never closed", "zh") == "语法错误:'(' 没有闭合"
    zh = translate(
        "grad(…): log(x) gives an infinite value — log needs positive numbers: log(0) is −inf, "
        "log of a negative is NaN",
        "zh",
    )
    assert zh.startswith("grad(…):log(x) 的结果是无穷大——log 需要正数")


def test_the_program_text_in_a_message_is_kept_as_written() -> None:
    e = error_of("损失 = 0\nL = log(损失 * 2)")
    assert e is not None
    assert translate(e.message, "zh").startswith("log(损失 * 2) 的结果是无穷大")


def test_a_limit_keeps_its_setting_and_its_numbers() -> None:
    zh = translate(
        "this loop would run 1,000,000 times; the limit is 10,000 iterations (max_loop_iterations)",
        "zh",
    )
    assert zh == "这个循环会运行 1,000,000 次;上限是 10,000 次(max_loop_iterations)"


def test_an_overlong_message_is_returned_untouched_and_fast() -> None:
    long = "shapes " + "(1, 2) and " * 5000 + "x"
    assert translate(long, "zh") is long


# --- the corpus: the messages bad programs produce -----------------------------------------


@pytest.mark.parametrize(
    "source", [c[1] for c in lang_tests.REFUSED], ids=[c[0] for c in lang_tests.REFUSED]
)
def test_every_refusal_of_the_language_is_translated(source: str) -> None:
    e = error_of(source)
    assert e is not None
    assert_translated(e.message)


# --- code as students already write it: imports, prefixes, shapes, index lists, joins ----

# Each gives an error (issue 14's new messages, and the old ones the new names reach).
NAMES_REFUSED = [
    "import os",
    "from os import path",
    "import torch.fft",
    "from torch import fft",
    "import numpy.linalg",
    "from . import x",
    "from math import *",
    "import math\ny = math.gamma(2)",
    "import torch\ny = torch.fft.fft(x)",
    "import numpy as np\ny = np.linalg.det(x)",
    "from math import pi",
    "from math import gamma",
    "y = np.exp(2)",
    "y = torch.exp(x)",
    "y = F.relu(x)",
    "import math\ny = math.exp",
    "import math\ny = math.tau",
    "import numpy as np\nnp.random.seed(-1)",
    "import numpy as np\nnp.random.seed(1, 2)",
    "import numpy as np\ny = np.random.seed(1)",
    "import torch\nx = torch.zeros(2)\nx.requires_grad_(False)",
    "import torch\nx = torch.zeros(2)\n(x * 2).requires_grad_()",
    "x = [1.0, 2.0]\ny = x.requires_grad_",
    "x = [1.0, 2.0]\ny = x.shape",
    "x = [1.0, 2.0]\ny = zeros(x.shape[0] + x.shape)",
    "y = (x * 2).shape[0]",
    "x = [1.0, 2.0]\ny = x.size(0, 1)",
    "x = [1.0, 2.0]\ny = x.requires_grad_(1)",
    "x = [1.0, 2.0]\ny = x[[]]",
    "y = linspace(0, 1, -2)",
    "y = arange(0, 1, 0)",
    "y = arange(0, 1e308, 1e-308)",
    "y = arange(1, 2, 3, 4)",
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
    "import torch\nx = torch.tensor(y)",
    "import torch\nx = torch.tensor([1.0], requires_grad=1)",
    "import torch\nx = torch.zeros(2, dtype=1)",
    "import torch\nx = torch.tensor()",
    "x = zeros_like()",
    "x = full(2)",
    "x = full((2,), y)",
    "import torch\ny = torch.transpose(x, 0, 2)",
    "import torch\ny = torch.transpose(x, 0)",
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
    "x = [1.0, 2.0]\nn = len(2 * x)",
    "import torch\nx = torch.zeros(2, 2, 2)\ny = x.transpose(0, 2)",
    "y = reshape()",
]


@pytest.mark.parametrize("source", NAMES_REFUSED)
def test_every_refusal_of_the_new_names_is_translated(source: str) -> None:
    e = error_of(source)
    assert e is not None, source
    assert_translated(e.message)


def test_a_module_s_list_of_functions_and_the_missing_import_keep_their_names() -> None:
    zh = translate(
        "math.gamma is not supported; the functions of math that work are: cos, exp, fabs", "zh"
    )
    assert zh == "不支持 math.gamma;math 中可用的函数有:cos, exp, fabs"
    assert translate(
        "torch.nn.Linear is not supported; the functions of torch.nn that work are: none", "zh"
    ).endswith("可用的函数有:无")
    e = error_of("y = np.exp(2)")
    assert e is not None
    assert translate(e.message, "zh") == "'np' 还没有导入:请在程序开头加上 `import numpy as np`"


def test_the_code_lesson_s_refusal_is_translated() -> None:
    from engine import lessons
    from engine.program import run_program

    with pytest.raises(ProgramError) as info:
        lessons.code(run_program("x = 2.0\ny = x * 3\nprint(y.grad_fn)\ny"))
    assert_translated(info.value.message)
    assert translate(info.value.message, "zh").startswith("“PyTorch 与 JAX”课程还不能为 'y.grad_fn")
    assert info.value.in_language("zh") == "“PyTorch 与 JAX”课程还不能为 'y.grad_fn' 写出代码"


# --- functions, control flow, backward and print (engine/words/catalog_zh_flow.py) ----------

# Each gives an error: the refusals and mistakes of def, lambda, grad(f), if/while/for,
# unpacking, +=, backward(), x.grad, print, item(), NumPy's generators.
FLOW_REFUSED = [
    "x = 1\ny = x < 2",
    "y = x is 2",
    "def f(*a):\n    return 1\ny = f(1)",
    "@foo\ndef f(x):\n    return x\ny = f(1)",
    'def f(x):\n    """doc"""\ny = f(1)',
    "def f(x, x):\n    return x\ny = f(1, 2)",
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
    "x = [1.0, 2.0]\nif x:\n    y = 1",
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
    "y = zip([1, 2], [3, 4])",
    "y = enumerate([1, 2])",
    "for i in enumerate([1, 2], 1, 2):\n    y = i",
    "y = sum([x, x], 1, 2)",
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
    "x = [1.0, 2.0]\nL = x * 2\nL.backward([1.0, 1.0], [1.0, 1.0])",
    "x = [1.0, 2.0]\nL = x * 2\nL.backward([1.0, 1.0], gradient=[1.0, 1.0])",
    "import torch\nx = torch.tensor(2.0)\nL = x * 3\nL.backward()",
    "x = 1\nL = x * x\nL.backward()\ny = x.grad * 2",
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
def test_every_refusal_of_functions_and_control_flow_is_translated(source: str) -> None:
    e = error_of(source)
    assert e is not None, source
    assert_translated(e.message)


@pytest.mark.parametrize(
    ("message", "zh"),
    [
        (
            "f calls g, which calls h, which calls f again; recursion is not supported",
            "f 调用了 g,g 又调用了 h,h 又调用了 f;不支持递归",
        ),
        (
            "'f' is a function: call it, as in f(…), or pass it to grad",
            "'f' 是一个函数:要调用它(例如 f(…)),或把它交给 grad",
        ),
        ("this is None: the function returns nothing", "这个是 None:这个函数什么也没有返回"),
        ("the function f cannot be looped over", "函数 f不能用来循环"),
        ("f() takes 1 argument but 2 were given", "f() 接受 1 个参数,但给了 2 个"),
        (
            "L.backward() needs L to be one number, but its shape is (2,) (PyTorch: grad can be "
            "implicitly created only for scalar outputs); use L.sum().backward() or "
            "L.backward(gradient=v)",
            "L.backward() 需要 L 是一个数,但它的形状是 (2,)(PyTorch:grad can be implicitly "
            "created only for scalar outputs);请用 L.sum().backward() 或 L.backward(gradient=v)",
        ),
    ],
)
def test_a_flow_message_is_translated_whole(message: str, zh: str) -> None:
    # a chain of calls, a fragment inside a fragment, PyTorch's own words kept as it says them
    assert translate(message, "zh") == zh


def test_the_did_you_mean_warning_is_translated(client: TestClient) -> None:
    message = "'losss' is never assigned; did you mean 'loss'?"
    assert translate(message, "zh") == "'losss' 从未被赋值;你是不是想写 'loss'?"
    params = {"source": "loss = 2.0\nL = losss * 3"}
    zh = client.get("/api/trace", params={**params, "lang": "zh"}).json()["warnings"]
    assert [(w["message"], w["line"], w["column"]) for w in zh] == [
        ("'losss' 从未被赋值;你是不是想写 'loss'?", 2, 5)
    ]
    en = client.get("/api/trace", params=params).json()["warnings"]
    assert [w["message"] for w in en] == [message]


def language_messages() -> list[tuple[str, str]]:
    """Every message the language raises as one constant text (`self.error(node, "…")`,
    `ProgramError("…")`), with where it is: those whose words do not vary."""
    found = []
    for path in sorted((Path(__file__).resolve().parents[1] / "engine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in ("error", "ProgramError"):
                continue
            for arg in node.args[:2]:
                text = constant_text(arg)
                if text is not None and " " in text:
                    found.append((f"{path.name}:{node.lineno}", text))
                    break
    return found


def constant_text(node: ast.AST) -> str | None:
    """The text of a string constant, or of constants joined by + or side by side."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = constant_text(node.left), constant_text(node.right)
        return None if left is None or right is None else left + right
    return None


def test_every_constant_message_of_the_engine_is_translated() -> None:
    found = language_messages()
    assert len(found) > 60, found  # the walk finds the engine's messages
    missing = [(where, text) for where, text in found if not is_translated(text)]
    assert missing == [], "no Chinese for these (add rules to engine/words/catalog_zh*.py)"


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
def test_every_python_syntax_error_is_translated(source: str) -> None:
    e = error_of(source)
    assert e is not None and e.code == "syntax"
    assert_translated(e.message)
    assert "invalid" not in translate(e.message, "zh")  # Python's words too, not only the prefix


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


def test_every_limit_message_is_translated(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def recording_run(*args: Any, **kwargs: Any) -> Any:
        try:
            return run(*args, **kwargs)
        except ProgramError as e:
            seen.append(e.message)
            raise

    monkeypatch.setattr(limit_tests, "run", recording_run)
    for name, fn in vars(limit_tests).items():
        if name.startswith("test_") and callable(fn):
            for kwargs in calls_of(fn):
                fn(**kwargs)
    limits = {m for m in seen if "(max_" in m}
    assert len(limits) >= 12, sorted(seen)  # every setting of engine/limits.py a program meets
    for message in seen:
        assert_translated(message)


@fuzz.FUZZ
@given(st.text(max_size=200))
def test_any_text_s_error_is_translated(source: str) -> None:
    check(source)


@fuzz.FUZZ
@given(fuzz.token_soup)
def test_token_soup_s_error_is_translated(source: str) -> None:
    check(source)


@fuzz.FUZZ
@given(st.text(alphabet=st.sampled_from(list("xy12+-*/@()[],.:=;# \n\t")), max_size=120))
def test_near_miss_syntax_s_error_is_translated(source: str) -> None:
    check(source)


@fuzz.FUZZ
@given(
    st.text(max_size=20),
    st.one_of(st.floats(), st.lists(st.floats(), max_size=4), st.integers(-10, 10)),
)
def test_bad_values_error_is_translated(name: str, value: Any) -> None:
    check("x*y + x", {name: value})
    check("z = [1.0, 2.0]\ncross_entropy(z, t) + x", {"t": value})


@fuzz.PROGRAMS
@given(fuzz.scalar_program())
def test_generated_scalar_programs_errors_are_translated(source: str) -> None:
    check(source)


@fuzz.PROGRAMS
@given(fuzz.tensor_program())
def test_generated_tensor_programs_errors_are_translated(source: str) -> None:
    check(source)


QUERIES: list[dict[str, str]] = [
    {"v": "9", "source": "x"},
    {},
    {"source": "x", "accumulate": "foo"},
    {"source": "x", "order": "bfs"},
    {"z": "A" * 70_000},
    {"source": "x", "values": "x"},
    {"source": "x", "values": "x=abc"},
    {"source": "x", "values": "x=inf"},
    {"source": "x", "values": "{"},
]


@pytest.mark.parametrize("params", QUERIES)
def test_every_address_error_is_translated(params: dict[str, str]) -> None:
    with pytest.raises(QueryError) as info:
        parse_query(params, default_source=False)
    assert_translated(info.value.message)


def test_a_graph_too_large_to_draw_says_so_in_the_page_s_language() -> None:
    settings = get_settings()
    many = dataclasses.replace(settings.limits, max_drawn_nodes=3)
    small = dataclasses.replace(settings, limits=many)
    view = make_view(ViewAsk("x*y + x", lang="zh"), small)
    assert view["draw_error"]["message"].startswith("这个图有 4 个节点;超过 3 个就不再绘制")
    view = make_view(ViewAsk("x*y + x"), small)
    assert view["draw_error"]["message"].startswith("This graph has 4 nodes")


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
    en = client.post("/api/render", json={**body, "lang": "en"}).json()["error"]
    assert en["message"] == "unknown function 'tanhh' — did you mean 'tanh'?"


def test_the_page_in_chinese_opens_with_the_error_in_chinese(client: TestClient) -> None:
    r = client.get("/", params={"source": "x = 1\ny = x(2)", "lang": "zh"})
    assert "'x' 是一个值,不是函数" in r.text
    r = client.get("/", params={"source": "x = 1\ny = x(2)"})
    assert "'x' is a value, not a function" in r.text


def test_the_api_keeps_english_unless_the_address_asks(client: TestClient) -> None:
    r = client.post("/api/trace", json={"source": "log(0)"})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("log(0) gives")
    r = client.get("/api/trace", params={"source": "log(0)"})
    assert r.json()["error"]["message"].startswith("log(0) gives")
    r = client.get("/api/trace", params={"source": "log(0)", "lang": "zh"})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("log(0) 的结果是")


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
