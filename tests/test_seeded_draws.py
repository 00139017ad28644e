"""Seeded random numbers as the libraries draw them (issue 25, item 6): after
`torch.manual_seed(n)` a program's `torch.randn`/`rand`/`randint`/`normal`, `x.normal_()` and
`x.uniform_()` are torch 2.13's CPU generator's numbers, bit for bit (float32 by default, as
torch draws them, or float64 after `torch.set_default_dtype(torch.float64)`); after
`np.random.seed(n)` NumPy's legacy RandomState's. Hypothesis draws the seeds and the shapes;
each is checked against the real library, and what the program prints is what it prints."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import ProgramError, run_program
from engine.library.random_torch import TorchGenerator
from tests.strategies import bounded

torch = pytest.importorskip("torch")

SMALL = st.lists(st.integers(1, 7), min_size=0, max_size=3).map(tuple)
SHAPES = SMALL | st.sampled_from([(16,), (17,), (4, 4), (3, 11), (100,), (2, 3, 40), (1000,)])
SEEDS = st.integers(0, 2**32 - 1) | st.sampled_from([0, 1, 42, 1234, 2**40 + 3, 2**62])


def values(source: str) -> dict[str, Any]:
    """Every named value of the run (leaves and constants) by its label."""
    r = run_program(source)
    return {n.name: np.asarray(n.data) for n in r.interpreter.nodes if n.name}, [
        p["text"] for p in r.printed
    ]


def same(a: Any, b: Any) -> None:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape and np.array_equal(a, b), (a, b)


@bounded(30)
@given(SEEDS, SHAPES, SHAPES, st.booleans())
def test_torch_draws_equal_torch_generator_bit_for_bit(
    seed: int, shape: tuple[int, ...], other: tuple[int, ...], double: bool
) -> None:
    dtype = "torch.set_default_dtype(torch.float64)\n" if double else ""
    source = (
        f"import torch\n{dtype}torch.manual_seed({seed})\na = torch.randn{shape!r}\n"
        f"b = torch.rand{other!r}\nc = torch.randn({shape!r})\nd = torch.zeros({other!r})\n"
        "d.normal_(0.5, 2.0)\ne = torch.normal(1.0, 3.0, size=(5,))\nf = torch.zeros(3, 17)\n"
        "f.uniform_(-1, 1)\nL = a.sum() + b.sum() + c.sum()"
    )
    got, _ = values(source)
    torch.set_default_dtype(torch.float64 if double else torch.float32)
    try:
        torch.manual_seed(seed)
        ref = {"a": torch.randn(shape), "b": torch.rand(other), "c": torch.randn(shape)}
        ref["d"] = torch.zeros(other).normal_(0.5, 2.0)
        ref["e"] = torch.normal(1.0, 3.0, size=(5,))
        ref["f"] = torch.zeros(3, 17).uniform_(-1, 1)
    finally:
        torch.set_default_dtype(torch.float32)
    for k, v in ref.items():
        same(got[k], v.double().numpy())


HIGHS = st.sampled_from([2, 10, 2**20, 2**28 - 1, 2**28, 2**31, 2**33])


@bounded(30)
@given(SEEDS, SMALL | st.just((17,)), HIGHS)
def test_torch_randint_equals_torch(seed: int, shape: tuple[int, ...], high: int) -> None:
    r = run_program(
        f"import torch\ntorch.manual_seed({seed})\nk = torch.randint({high}, {shape!r})\n"
        f"j = torch.randint(-3, {high}, size={shape!r})\nprint(k)\nprint(j)\n"
        "L = torch.ones(2).sum()"
    )
    torch.manual_seed(seed)
    k, j = torch.randint(high, shape), torch.randint(-3, high, size=shape)
    torch.set_printoptions(profile="default")
    assert [p["text"] for p in r.printed] == [str(k), str(j)]


def test_a_published_training_start_prints_its_notebooks_numbers() -> None:
    """torch's default float32 draws, printed as torch prints them."""
    _, printed = values(
        "import torch\ntorch.manual_seed(42)\nx = torch.randn(3)\nprint(x)\n"
        "w = torch.rand(2, 2)\nprint(w)\nW = torch.randn(4, 5)\nprint(W[0])\n"
        "print(torch.randint(0, 10, (5,)))\nL = x.sum()"
    )
    torch.manual_seed(42)
    x, w, W = torch.randn(3), torch.rand(2, 2), torch.randn(4, 5)
    k = torch.randint(0, 10, (5,))
    assert printed == [str(x), str(w), str(W[0]), str(k)]
    assert printed[0] == "tensor([0.3367, 0.1288, 0.2345])"


def test_dtype_float64_on_a_call_draws_torchs_float64_numbers() -> None:
    got, _ = values(
        "import torch\ntorch.manual_seed(3)\na = torch.rand(20, dtype=torch.float64)\n"
        "b = torch.randn(20, dtype=torch.float32)\nL = a.sum()"
    )
    torch.manual_seed(3)
    same(got["a"], torch.rand(20, dtype=torch.float64).numpy())
    same(got["b"], torch.randn(20).double().numpy())


def test_the_generator_matches_torch_on_long_draws() -> None:
    """The float32 Box-Muller kernel (log256_ps, sincos256_ps, fused as compiled) on 200,000
    numbers, and the float64 one, against torch."""
    for seed in (0, 80085):
        g = TorchGenerator(seed)
        torch.manual_seed(seed)
        same(g.normal(200_000, False), torch.randn(200_000).double().numpy())
        same(g.normal(4_099, True), torch.randn(4_099, dtype=torch.float64).numpy())
        same(g.uniform(999, True), torch.rand(999, dtype=torch.float64).numpy())


@bounded(30)
@given(st.integers(0, 2**32 - 1), SHAPES, SHAPES)
def test_numpy_legacy_draws_equal_random_state(
    seed: int, shape: tuple[int, ...], other: tuple[int, ...]
) -> None:
    dims = ", ".join(str(d) for d in shape)
    got, printed = values(
        f"import numpy as np\nnp.random.seed({seed})\na = np.random.randn({dims})\n"
        f"b = np.random.rand({dims})\nc = np.random.normal(1.0, 2.0, size={other!r})\n"
        f"d = np.random.uniform(-1, 1, {other!r})\ne = np.random.random({other!r})\n"
        f"print(np.random.randint(0, 7, size={other!r}))\n"
        "f = np.random.standard_normal((3,))\nL = np.sum(a) + np.sum(b)"
    )
    rs = np.random.RandomState(seed)
    same(got["a"], rs.randn(*shape))
    same(got["b"], rs.rand(*shape))
    same(got["c"], rs.normal(1.0, 2.0, size=other))
    same(got["d"], rs.uniform(-1, 1, other))
    same(got["e"], rs.random(other))
    assert printed == [str(rs.randint(0, 7, size=other))]
    same(got["f"], rs.standard_normal((3,)))


def test_before_a_library_seed_draws_come_from_the_programs_generator() -> None:
    got, _ = values("import torch\na = torch.randn(3)\nb = torch.rand(2)\nL = a.sum()")
    rng = np.random.default_rng(0)
    same(got["a"], rng.standard_normal(3))
    same(got["b"], rng.random(2))
    got, _ = values("import numpy as np\na = np.random.normal(0, 1, 3)\nL = np.sum(a)")
    same(got["a"], np.random.default_rng(0).normal(0, 1, size=(3,)))


def test_a_numpy_leaf_drawn_after_a_seed_still_gets_its_grad() -> None:
    r = run_program("import numpy as np\nnp.random.seed(1)\nW = np.random.randn(2, 2)\n"
                    "L = np.sum(W * W)")  # fmt: skip
    d = r.trace.to_dict()
    same(d["grads"]["W"], 2 * np.random.RandomState(1).randn(2, 2))


@pytest.mark.parametrize(
    ("source", "line", "column", "key"),
    [
        ("import numpy as np\nnp.random.seed(-1)\nx = 1", 2, 16, "seed_range"),
        ("import numpy as np\nnp.random.seed(2**32)\nx = 1", 2, 16, "seed_range"),
        ("import torch\ntorch.manual_seed(-5)\nx = 1", 2, 19, "seed_range"),
        ("import torch\nk = torch.randint(5, 5, (2,))\nx = 1", 2, 5, "randint_range"),
        ("import numpy as np\nk = np.random.randint(3, 1)\nx = 1", 2, 5, "randint_range"),
        ("import torch\nk = torch.randint(5)\nx = 1", 2, 5, "library_usage"),
    ],
)
def test_refusals_are_positioned(source: str, line: int, column: int, key: str) -> None:
    with pytest.raises(ProgramError) as info:
        run_program(source)
    e = info.value
    assert (e.line, e.column) == (line, column), e.message
    assert e.msg is not None and e.msg.key == key, e.message


def test_a_torch_generator_of_its_own_draws_torchs_numbers() -> None:
    """makemore's `g = torch.Generator().manual_seed(2147483647)` and `generator=g`."""
    _, printed = values(
        "import torch\ng = torch.Generator().manual_seed(2147483647)\n"
        "p = torch.rand(3, generator=g)\nprint(p)\nW = torch.randn((27, 27), generator=g)\n"
        "print(W[1, :4])\nprint(torch.randint(0, 27, (5,), generator=g))\nL = p.sum()"
    )
    g = torch.Generator().manual_seed(2147483647)
    want = [str(torch.rand(3, generator=g)), str(torch.randn((27, 27), generator=g)[1, :4])]
    want.append(str(torch.randint(0, 27, (5,), generator=g)))
    assert printed == want
    with pytest.raises(ProgramError) as info:
        run_program("import torch\nx = torch.randn(3, generator=3)\nL = x.sum()")
    e = info.value
    assert (e.line, e.column) == (2, 30) and e.msg is not None and e.msg.key == "generator_value"
