"""jax.random with JAX's own numbers (engine/library/jax_random.py), against jax (CPU, its
default float32): keys, uniforms and normals bit for bit (a normal through XLA's own float32
log1p, log and erfinv, fused multiply-adds and all); hypothesis draws the seeds, shapes and
bounds. Draws are data (constants of the graph), and a program
that trains from them differentiates as any other."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import ProgramError, run_program
from engine.library import jax_random as jr

jax = pytest.importorskip("jax")

SEEDS = st.integers(min_value=-(2**31), max_value=2**31 - 1)
SHAPES = st.lists(st.integers(min_value=0, max_value=5), min_size=0, max_size=3).map(tuple)


def env(source: str) -> dict[str, Any]:
    """The program's names, each value's numbers (a leaf not yet used as its node's)."""
    out = run_program(source).interpreter.env
    return {k: getattr(getattr(v, "node", v), "data", v) for k, v in out.items()}


def ulps(a: np.ndarray, b: np.ndarray) -> int:
    a32, b32 = np.asarray(a, np.float32), np.asarray(b, np.float32)
    d = np.abs(a32.view(np.int32).astype(np.int64) - b32.view(np.int32).astype(np.int64))
    return int(d.max()) if d.size else 0


@settings(max_examples=30, deadline=None)
@given(seed=SEEDS, n=st.integers(min_value=1, max_value=6))
def test_keys_and_their_splits_are_jaxs_words(seed: int, n: int) -> None:
    key = jax.random.PRNGKey(seed)
    assert (jr.seed_key(seed) == np.asarray(key)).all()
    ours = np.array(jr.split_keys(jr.seed_key(seed), n))
    assert (ours == np.asarray(jax.random.split(key, n))).all()


@settings(max_examples=30, deadline=None)
@given(seed=SEEDS, shape=SHAPES, lo=st.floats(-10, 0), width=st.floats(0.5, 20))
def test_uniform_draws_are_jaxs_bit_for_bit(
    seed: int, shape: tuple, lo: float, width: float
) -> None:
    theirs = jax.random.uniform(jax.random.PRNGKey(seed), shape, minval=lo, maxval=lo + width)
    ours = jr.uniform_f32(jr.seed_key(seed), shape, lo, lo + width)
    assert ours.shape == theirs.shape and (ours == np.asarray(theirs)).all()


@settings(max_examples=30, deadline=None)
@given(seed=SEEDS, shape=SHAPES)
def test_normal_draws_are_jaxs_bit_for_bit(seed: int, shape: tuple) -> None:
    theirs = np.asarray(jax.random.normal(jax.random.PRNGKey(seed), shape))
    ours = jr.normal_f32(jr.seed_key(seed), shape)
    assert ours.shape == theirs.shape and ulps(ours, theirs) == 0


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_many_normal_draws_are_jaxs_bit_for_bit(seed: int) -> None:
    """100,000 draws a seed: both branches of erfinv and of log1p, and the tails."""
    theirs = np.asarray(jax.random.normal(jax.random.PRNGKey(seed), (100_000,)))
    assert ulps(jr.normal_f32(jr.seed_key(seed), (100_000,)), theirs) == 0


def test_xla_float32_log1p_and_log_are_jaxs_bit_for_bit() -> None:
    x = np.random.default_rng(0).uniform(-1, 1, 200_000).astype(np.float32)
    x = np.concatenate([x, np.float32([0.0, -0.0, 0.41421354, -0.41421354, 1e-30, -1e-8])])
    assert ulps(jr.log1p32(x), jax.jit(jax.lax.log1p)(x)) == 0
    v = np.random.default_rng(1).uniform(1e-6, 1e6, 200_000).astype(np.float32)
    assert ulps(jr.log32(v), jax.jit(jax.lax.log)(v)) == 0


def test_the_fused_multiply_add_rounds_once() -> None:
    """a·b + c = 1 + 2⁻²⁴ + 2⁻⁶⁰, just past the midpoint of 1 and 1 + 2⁻²³: one rounding
    gives 1 + 2⁻²³, float64's sum then float32 (two roundings, a tie to even) gives 1."""
    a, b = np.float32(2**-12 + 2**-30), np.float32(-(2**-12 - 2**-30))
    c = np.float32(1 + 2**-23)
    assert jr.fma32(a, b, c) == np.float32(1 + 2**-23)
    assert np.float32(np.float64(a) * np.float64(b) + np.float64(c)) == np.float32(1.0)


def test_a_program_draws_jaxs_numbers_and_prints_them_as_numpy_does() -> None:
    source = (
        "import jax\nfrom jax import random\nkey = random.PRNGKey(0)\nprint(key)\n"
        "key, subkey = random.split(key)\nprint(key, subkey)\n"
        "x = random.normal(subkey, (3,))\n"
        "u = jax.random.uniform(key, (2, 2), minval=-1.0, maxval=2.0)\n"
        "k3 = jax.random.split(jax.random.key(7), 3)[2]\nz = random.normal(k3)\n"
        "out = x.sum() + u.sum() + z"
    )
    run = run_program(source)
    e = {k: getattr(getattr(v, "node", v), "data", v) for k, v in run.interpreter.env.items()}
    key = jax.random.PRNGKey(0)
    key, subkey = jax.random.split(key)
    assert [p["text"] for p in run.printed][:2] == [
        "[0 0]",
        f"{np.asarray(key)} {np.asarray(subkey)}",
    ]
    assert ulps(e["x"], jax.random.normal(subkey, (3,))) == 0
    assert (e["u"] == np.asarray(jax.random.uniform(key, (2, 2), minval=-1.0, maxval=2.0))).all()
    assert ulps(e["z"], jax.random.normal(jax.random.split(jax.random.PRNGKey(7), 3)[2])) == 0


def test_a_typed_key_prints_as_jax_prints_it() -> None:
    source = (
        "import jax\nk = jax.random.key(42)\nprint(k)\n"
        "a, b = jax.random.split(k)\nprint(a)\nout = 1.0"
    )
    theirs = [str(jax.random.key(42)), str(jax.random.split(jax.random.key(42))[0])]
    assert [p["text"] for p in run_program(source).printed] == theirs


def test_a_loss_of_drawn_weights_differentiates_against_jax() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\nkey = jax.random.PRNGKey(42)\n"
        "k1, k2 = jax.random.split(key)\nW = jax.random.normal(k1, (3, 2))\n"
        "x = jax.random.uniform(k2, (3,))\n"
        "def loss(W):\n    return jnp.sum(jnp.tanh(jnp.dot(x, W)))\ng = jax.grad(loss)(W)"
    )
    scope: dict[str, Any] = {}
    exec(compile(source, "<program>", "exec"), scope)  # noqa: S102 (the real library, in a test)
    np.testing.assert_allclose(env(source)["g"], np.asarray(scope["g"]), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize(
    "source,line,column,words",
    [
        ("import jax\nx = jax.random.normal(3, (2,))", 2, 23, "key made by jax.random.PRNGKey"),
        ("import jax\nk = jax.random.PRNGKey(2**40)", 2, 24, "does not fit in 32 bits"),
        (
            "import jax\nk = jax.random.normal(jax.random.PRNGKey(0), (10**6, 10**3))",
            2,
            5,
            "max_tensor_elements",
        ),
    ],
)
def test_jax_random_refusals_say_where(source: str, line: int, column: int, words: str) -> None:
    with pytest.raises(ProgramError) as info:
        run_program(source)
    assert (info.value.line, info.value.column) == (line, column), info.value.message
    assert words in info.value.message
