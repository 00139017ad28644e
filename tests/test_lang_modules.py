"""Imports and module prefixes (spec/language.md, "Code as students already write it"): the
allowed modules import and their functions mean the language's own; another module, a function
a module lacks, or a well-known prefix never imported is refused at its line and column with a
message that says which."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from engine import ProgramError, run
from engine.library.names import MODULES, every_function, function_named

FUNCTIONS = every_function()


def grads(source: str, values: dict[str, Any] | None = None) -> dict[str, Any]:
    return run(source, values).to_dict()["grads"]


def value(source: str) -> float:
    return float(run(source).to_dict()["value"])


def refused(source: str) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        run(source)
    return info.value


# One program, each spelling: (imports, the function as it is written there).
SPELLINGS = [
    ("import math", "math.exp"),
    ("import numpy as np", "np.exp"),
    ("import numpy", "numpy.exp"),
    ("import torch", "torch.exp"),
    ("import jax.numpy as jnp", "jnp.exp"),
    ("from jax import numpy as jnp", "jnp.exp"),
    ("from math import exp", "exp"),
    ("from torch import exp as e", "e"),
    ("", "exp"),
]


@pytest.mark.parametrize(("imports", "spelled"), SPELLINGS, ids=[s for _, s in SPELLINGS])
def test_every_spelling_of_exp_means_the_languages_exp(imports: str, spelled: str) -> None:
    # x is free (a leaf with the value given): with torch, `x = 0.5` is a Python number
    d = run(f"{imports}\ny = {spelled}(-x) * x", {"x": 0.5}).to_dict()
    assert d["value"] == pytest.approx(np.exp(-0.5) * 0.5, rel=1e-15)
    assert d["grads"]["x"] == pytest.approx(np.exp(-0.5) * (1 - 0.5), rel=1e-15)
    assert next(n for n in d["nodes"] if n["op"] == "exp")


@pytest.mark.parametrize(
    ("imports", "spelled"),
    [
        ("import torch.nn.functional as F", "F.relu"),
        ("import torch", "torch.nn.functional.relu"),
        ("import torch.nn.functional", "torch.nn.functional.relu"),
        ("import torch.nn as nn", "nn.functional.relu"),
        ("from torch.nn import functional as F", "F.relu"),
        ("from torch.nn.functional import relu", "relu"),
        ("import jax", "jax.nn.relu"),
        ("import torch", "torch.relu"),
    ],
)
def test_relu_through_every_module_path(imports: str, spelled: str) -> None:
    assert grads(f"{imports}\nL = {spelled}(x).sum()", {"x": [-1.0, 2.0]}) == {"x": [0.0, 1.0]}


def test_the_issues_examples_run() -> None:
    # math.exp(-dot) was "exp takes one value"; torch.mean(a, 1) "mean takes a value and an
    # optional axis"; torch.matmul(a, b) "unknown method .matmul()"
    assert value("import math\nd = 1.0\nf = 1.0 / (1 + math.exp(-d))") == pytest.approx(
        1 / (1 + np.exp(-1.0))
    )
    g = grads(
        "import torch\na = torch.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)\n"
        "b = torch.mean(a, 1)\nL = b.sum()"
    )
    assert g == {"a": [[0.5, 0.5], [0.5, 0.5]]}
    g = grads(
        "import torch\na = torch.tensor([[1.0, 2.0]], requires_grad=True)\n"
        "b = torch.tensor([[3.0], [4.0]], requires_grad=True)\nL = torch.matmul(a, b).sum()"
    )
    assert g == {"a": [[3.0, 4.0]], "b": [[1.0], [2.0]]}


def test_module_constants_are_numbers() -> None:
    assert value("import math\nx = math.pi") == pytest.approx(np.pi)
    assert value("import numpy as np\nx = 2.0\ny = np.e * x") == pytest.approx(2 * np.e)


def test_seed_calls_of_the_libraries_draw_the_libraries_numbers() -> None:
    """Issue 25: np.random.seed is NumPy's legacy RandomState, torch.manual_seed torch's own
    generator (tests/test_seeded_draws.py checks them against both), seed(n) NumPy's
    default_rng."""
    a = run("import numpy as np\nnp.random.seed(3)\nW = np.random.randn(2)\nW").to_dict()
    assert a["value"] == np.random.RandomState(3).randn(2).tolist()
    b = run("seed(3)\nW = randn(2)\nW").to_dict()
    assert b["value"] == np.random.default_rng(3).standard_normal(2).tolist()
    c = run("import torch\ntorch.manual_seed(3)\nW = torch.randn(2, requires_grad=True)\nW")
    import torch

    torch.manual_seed(3)
    assert c.to_dict()["value"] == torch.randn(2).double().tolist()


def test_imports_make_no_nodes() -> None:
    d = run("import numpy as np\nimport math\nx = 2.0\ny = x * x").to_dict()
    assert [n["label"] for n in d["nodes"]] == ["x", "y"]


# (name, source, line, column, words in the message)
REFUSED = [
    ("os", "import os", 1, 1, "importing os is not supported; gradtrace understands torch"),
    ("sub-os", "x = 1\nimport os.path as p", 2, 1, "importing os.path is not supported"),
    ("torch-fft", "import torch.fft", 1, 1, "importing torch.fft is not supported"),
    ("from-os", "from os import path", 1, 1, "importing os is not supported"),
    ("relative", "from . import x", 1, 1, "importing . is not supported"),
    ("star", "from torch import *", 1, 1, "import * is not supported"),
    (
        "from-missing",
        "from torch import fft\ny = fft(x)",
        1,
        1,
        "torch.fft is not supported; the functions of torch that work are: abs, add, allclose",
    ),
    (
        "function-missing",
        "import torch\nx = 1.0\ny = torch.fft(x)",
        3,
        5,
        "torch.fft is not supported; the functions of torch that work are: abs,",
    ),
    (
        "deep-missing",
        "import numpy as np\nx = 1.0\ny = np.linalg.det(x)",
        3,
        5,
        "numpy.linalg.det is not supported; the functions of numpy.linalg that work are: norm",
    ),
    ("math-missing", "import math\ny = math.floor(2.5)", 2, 5, "math.floor is not supported"),
    (
        "np-not-imported",
        "x = 1.0\ny = np.exp(x)",
        2,
        5,
        "'np' is not imported: add `import numpy as np`",
    ),
    ("torch-not-imported", "y = torch.ones(2)", 1, 5, "add `import torch`"),
    ("F-not-imported", "x = 1.0\ny = F.relu(x)", 2, 5, "add `import torch.nn.functional as F`"),
    ("jnp-not-imported", "x = 1.0\ny = jnp.tanh(x)", 2, 5, "add `import jax.numpy as jnp`"),
    ("math-not-imported", "x = 1.0\ny = math.exp(x)", 2, 5, "add `import math`"),
    ("uncalled", "import numpy as np\ny = np.exp", 2, 5, "the output is the function exp"),
    ("module-attribute", "import torch\ny = torch.float32", 2, 5, "the output is a dtype"),
    ("seed-in-expression", "import numpy as np\ny = np.random.seed(0)", 2, 5, "the output is None"),
]


@pytest.mark.parametrize(
    ("src", "line", "column", "words"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_refused_with_its_position(src: str, line: int, column: int, words: str) -> None:
    e = refused(src)
    assert (e.line, e.column) == (line, column), e.message
    assert words in e.message, e.message


def test_a_value_named_like_a_module_is_a_value() -> None:
    # F is the program's own name here: F.exp() is its method, not torch's F
    assert grads("F = 0.0\ny = F.exp()") == {"F": 1.0}


def test_every_function_of_every_module_means_a_language_function_that_exists() -> None:
    for path, name in FUNCTIONS.items():
        assert path.rpartition(".")[0] in MODULES, path
        assert function_named(name) is not None, (path, name)


@pytest.mark.parametrize(
    "source",
    ["import torch as __builtins__\nx = 1", "from math import exp as __exp\ny = __exp(1)"],
)
def test_an_import_may_not_bind_a_dunder_name(source: str) -> None:
    e = refused(source)
    assert "__" in e.message and (e.line, e.column) == (1, 1)
