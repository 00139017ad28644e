"""The engine's fast paths give what the general paths give, to the last bit:

- each elementwise op's scalar kernels (`scalar`, `scalar_grad`) against its `compute` and
  `gradient` on 0-d arrays (the array path) and on float64 scalars (ScalarMath);
- the scalar fast path of the forward (apply1/apply2) against the general path, and the
  errors it reports by name (log(0), exp(1000), 1/0, sqrt(-1));
- the iterative dfs_order against the recursive definition;
- the trace's records (what the recorder keeps) against the Steps made from them;
- run_with_contrast against two separate `engine.run` calls, one per accumulation.
"""

from __future__ import annotations

import json
import random
import threading
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

import engine
import engine.autograd.ops as O
import engine.autograd.ops.forward as forward
from engine.autograd.graph import dfs_order
from engine.autograd.value import Value, constant, leaf
from engine.tracing.record import trace
from engine.tracing.steps import make_step, record_of
from tests.strategies import programs, to_source

F64 = np.float64

BINARY = [O.Add(), O.Sub(), O.Mul(), O.Div(), O.Pow(), O.Maximum(), O.Minimum()]
UNARY = [
    O.Neg(),
    O.Exp(),
    O.Log(),
    O.Sqrt(),
    O.Sin(),
    O.Cos(),
    O.Tanh(),
    O.Sigmoid(),
    O.Relu(),
    O.Abs(),
]

SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    3.0,
    1e-300,
    -1e-300,
    5e-324,
    1e300,
    -1e300,
    700.0,
    709.8,
    710.0,
    -745.0,
    -750.0,
    20.0,
    -20.0,
    37.0,
    -37.0,
    1e-8,
]


def numbers(n: int = 300, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    out = list(SPECIAL)
    for _ in range(n):
        scale = rng.choice((1e-3, 1.0, 10.0, 100.0, 1e6))
        out.append(rng.uniform(-1, 1) * scale)
    return out


def same(a: Any, b: Any) -> bool:
    """The same float64, bit for bit (the sign of zero included; any NaN equals any NaN)."""
    a, b = F64(a), F64(b)
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return bool(a == b and np.signbit(a) == np.signbit(b))


def within_ulps(a: Any, b: Any, ulps: int) -> bool:
    if same(a, b):
        return True
    return bool(abs(F64(a) - F64(b)) <= ulps * np.spacing(max(abs(F64(a)), abs(F64(b)))))


def as_scalar(a: Any) -> Any:
    return np.asarray(a, dtype=np.float64)[()]


# --- the kernels ----------------------------------------------------------------------------------


@pytest.mark.parametrize("op", UNARY, ids=lambda op: op.name)
def test_unary_kernels_are_the_ops_maths_to_the_bit(op: O.Op) -> None:
    with O.quiet():
        for v in numbers():
            x = F64(v)
            out = op.scalar(x)  # type: ignore[attr-defined]
            assert type(out) is F64
            ref = as_scalar(op.compute(np.asarray(v)))
            assert same(out, ref), (op.name, v, out, ref)
            assert same(out, as_scalar(op.compute(x)))
            if not np.isfinite(out):
                continue
            for g in (F64(1.0), F64(-2.5), F64(0.0), F64(-0.0), F64(1e-3)):
                got = op.scalar_grad(g, x, out)  # type: ignore[attr-defined]
                assert type(got) is F64
                (scalar_ref,) = op.gradient(g, (x,), out, (True,), O.SCALAR_MATH)
                (array_ref,) = op.gradient(
                    np.asarray(g), (np.asarray(v),), np.asarray(out), (True,), O.ARRAY_MATH
                )
                assert same(got, scalar_ref), (op.name, v, g, got, scalar_ref)
                assert same(got, as_scalar(array_ref)), (op.name, v, g, got, array_ref)


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.name)
def test_binary_kernels_are_the_ops_maths_to_the_bit(op: O.Op) -> None:
    xs = numbers(60, seed=1)
    with O.quiet():
        for u in xs:
            for v in xs[::3]:
                x, y = F64(u), F64(v)
                out = op.scalar(x, y)  # type: ignore[attr-defined]
                assert type(out) is F64
                ref = as_scalar(op.compute(np.asarray(u), np.asarray(v)))
                assert same(out, ref), (op.name, u, v, out, ref)
                if not np.isfinite(out):
                    continue
                for g in (F64(1.0), F64(-0.75)):
                    for needs in ((True, True), (True, False), (False, True)):
                        got = op.scalar_grad(g, x, y, out, *needs)  # type: ignore[attr-defined]
                        scalar_ref = op.gradient(g, (x, y), out, needs, O.SCALAR_MATH)
                        array_ref = op.gradient(
                            np.asarray(g),
                            (np.asarray(u), np.asarray(v)),
                            np.asarray(out),
                            needs,
                            O.ARRAY_MATH,
                        )
                        for k in (0, 1):
                            if not needs[k]:
                                continue
                            assert type(got[k]) is F64
                            assert same(got[k], scalar_ref[k]), (op.name, u, v, k)
                            array_k = as_scalar(array_ref[k])
                            if op.name == "pow":
                                # `a ** (b−1)` on float64 scalars is C's pow; on 0-d arrays it
                                # is NumPy's ufunc, which may differ in the last bit. The fast
                                # path keeps what the scalar rule (ScalarMath) always gave.
                                assert within_ulps(got[k], array_k, 2), (u, v, k)
                            else:
                                assert same(got[k], array_k), (op.name, u, v, k)


# --- the forward's fast path ---------------------------------------------------------------------


@pytest.mark.parametrize("op", UNARY + BINARY, ids=lambda op: op.name)
def test_fast_path_nodes_are_general_path_nodes(op: O.Op) -> None:
    """A scalar node from the fast path has the value, inputs and requires_grad the general path
    (0-d arrays) gives; only its data is a float64 scalar instead of a 0-d array."""
    arity = 2 if op in BINARY else 1
    for vals in ([0.5, 2.0], [-1.5, 3.0], [2.0, 0.0]):
        ins = [leaf(vals[0]), constant(vals[1])][:arity]
        try:
            fast = O.apply(op, *ins)
        except O.OpError as err:
            with pytest.raises(O.OpError) as general_err:
                forward._apply_arrays(op, tuple(ins))
            assert err.message == general_err.value.message
            continue
        general = forward._apply_arrays(op, tuple(ins))
        assert type(fast.data) is F64 and type(general.data) is np.ndarray
        assert same(fast.data, general.data[()])
        assert fast.inputs == tuple(ins) and fast.kind == "op" and fast.op is op
        assert fast.requires_grad == general.requires_grad == True  # noqa: E712
        assert fast.seq < general.seq


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: leaf(0.0).log(), "gives an infinite value — log needs positive numbers"),
        (lambda: leaf(-1.0).log(), "gives NaN (not a number) — log needs positive numbers"),
        (lambda: leaf(1000.0).exp(), "gives an infinite value — exp overflows"),
        (lambda: leaf(1.0) / leaf(0.0), "gives an infinite value — division by zero"),
        (lambda: leaf(0.0) / 0.0, "gives NaN (not a number) — division by zero"),
        (lambda: leaf(-1.0).sqrt(), "gives NaN (not a number) — sqrt needs numbers ≥ 0"),
        (lambda: leaf(1e300) * 1e300, "gives an infinite value — the result is beyond"),
        (lambda: 1e308 + leaf(1e308), "gives an infinite value — the result is beyond"),
    ],
)
def test_fast_path_errors_name_the_op_without_warnings(make: Any, message: str) -> None:
    for quietly in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # NumPy's RuntimeWarnings stay off either way
            with pytest.raises(O.OpError) as err:
                if quietly:
                    with O.quiet():
                        make()
                else:
                    make()
        assert message in err.value.message, err.value.message
        assert err.value.code == "non_finite"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = 0\nL = log(x)", "log(x) gives an infinite value"),
        ("x = 1000\nL = exp(x)", "exp(x) gives an infinite value"),
        ("x = 1\ny = 0\nL = x / y", "x / y gives an infinite value"),
        ("x = -1\nL = sqrt(x)", "sqrt(x) gives NaN"),
        ("x = 0\nL = sqrt(x)", "sqrt(x) has a gradient that is infinite"),
    ],
)
def test_programs_report_non_finite_values_by_their_text(source: str, message: str) -> None:
    with pytest.raises(engine.ProgramError) as err:
        engine.run(source)
    assert message in str(err.value.to_dict()["error"]["message"])


def test_quiet_belongs_to_its_thread() -> None:
    """quiet() in one thread does not switch NumPy's warnings off for another."""
    seen: list[bool] = []

    def other() -> None:
        seen.append(forward._is_quiet())

    with O.quiet():
        assert forward._is_quiet()
        with O.quiet():  # re-entrant
            assert forward._is_quiet()
        assert forward._is_quiet()
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == [False] and not forward._is_quiet()


def test_numbers_on_either_side_take_the_fast_path() -> None:
    x = leaf(2.0, "x")
    for node in (x * 3, 3 * x, x + 1, 1 - x, x / 4, 4 / x, x**2, 2**x):
        assert type(node.data) is F64 and node.requires_grad
        assert [i.kind for i in node.inputs].count("const") == 1


# --- the topological sort ------------------------------------------------------------------


def recursive_dfs(root: Value) -> list[Value]:
    order: list[Value] = []
    seen = {root.seq}

    def visit(node: Value) -> None:
        for child in node.inputs:
            if child.seq not in seen:
                seen.add(child.seq)
                visit(child)
        order.append(node)

    visit(root)
    return order


def random_graph(seed: int) -> Value:
    rng = random.Random(seed)
    pool = [leaf(rng.uniform(-1, 1)) for _ in range(rng.randint(1, 5))]
    pool += [constant(2.0)]
    with O.quiet():
        for _ in range(rng.randint(1, 60)):
            a, b = rng.choice(pool[-8:]), rng.choice(pool)
            kind = rng.random()
            pool.append(a * b if kind < 0.4 else a + b if kind < 0.8 else a.tanh())
    return pool[-1]


@pytest.mark.parametrize("seed", range(40))
def test_dfs_order_is_the_recursive_post_order(seed: int) -> None:
    root = random_graph(seed)
    assert dfs_order(root) == recursive_dfs(root)


def test_dfs_order_of_a_lone_node() -> None:
    x = leaf(1.0)
    assert dfs_order(x) == [x]


# --- records and steps ---------------------------------------------------------------------


@pytest.mark.parametrize("accumulate", ["add", "assign"])
def test_records_and_steps_say_the_same(accumulate: str) -> None:
    x, y = leaf(2.0, "x"), leaf(3.0, "y")
    v = leaf(np.array([1.0, -2.0, 3.0]), "v")
    out = (x * x + x * y).tanh() + (v * x).sum() + (v * v).mean()
    t = trace(out, accumulate=accumulate)
    ids = t.ids()
    assert len(t.steps) == len(t.records)
    for record, step in zip(t.records, t.steps, strict=True):
        assert make_step(record) == step
        again = record_of(step)
        assert again[0] is record[0] and again[1] is record[1]
        assert (again[2] is None) == (record[2] is None)
        assert t.step_dict(step, ids) == t.record_dict(record, ids)
    # x*x: one step changes x twice; `changed` keeps the last value, once.
    square = next(
        s
        for s in t.steps
        if s.node.op and s.node.op.name == "mul" and s.node.inputs[0] is s.node.inputs[1]
    )
    assert len(square.terms) == 2 and len(square.changed) == 1
    assert square.changed[0][1] is square.terms[1].after


# --- run_with_contrast ---------------------------------------------------------------------

LESSON = "x = 2\ny = 3\nL = x*y + x"
CONTRAST_PROGRAMS: list[tuple[str, dict[str, Any] | None]] = [
    (LESSON, None),
    ("x = 3\nL = x*x", None),
    ("x = 3\nu = x * x\nv = u + x\nL = v * u + v", None),
    ("a = 1\nb = 2\nc = 3\nd = a*b\ne = d*c\nf = d + e\nL = f*f + d", None),
    ("x = 2\ny = 3\nz = 4\nL = max(x*y, z)", None),
    ("x = 2\ny = 3\nL = max(x*y, 6)", None),
    ("x = 0.5\nL = exp(x) + log(x) + sqrt(x) + sin(x) + cos(x) + tanh(x) + sigmoid(x)", None),
    ("x = -0.5\nL = relu(x) + abs(x) + x*relu(-x)", None),
    ("x = 2\ny = 0.5\nL = x**y + y**x + x/y - y/x - x", None),
    ("x = 2\nh = x\nfor i in range(20):\n    h = tanh(h * 0.9 + 0.1) + h * 0.01\nL = h", None),
    ("x = [1.0, 2.0, 3.0]\nL = sum(x * x)", None),
    (
        "x = [1.0, -2.0, 3.0]\nw = [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]\nh = tanh(w @ x)\n"
        "L = sum(h * h) + mean(relu(x)) + sum(w)",
        None,
    ),
    ("z = [1.0, 2.0, 3.0]\ns = softmax(z)\nL = sum(s * s) + cross_entropy(z, 1)", None),
    ("x = [[1.0, 2.0], [3.0, 4.0]]\nL = sum(x * x + x)", None),
    ("L = x*y + x", {"x": 2.0, "y": -1.5}),
    ("L = w @ x + b", {"w": [[1.0, 2.0], [3.0, 4.0]], "x": [1.0, -1.0], "b": [0.5, 0.5]}),
    ("x = 1e-300\nu = log(x)\nL = u*1e8 + u*1e8", None),  # "add" overflows, "assign" does not
    ("x = 2\ny = 5\nL = y", None),  # x is not reached: a leaf grad of 0, never None
]


def grads_of(d: dict[str, Any]) -> dict[str, Any]:
    return {n["id"]: n["grad"] for n in d["nodes"] if n.get("grad") is not None}


def two_runs(source: str, values: Any, accumulate: str, order: str) -> tuple[Any, Any]:
    """What the page did before: two separate runs, keeping only the other one's grads."""
    first = json.dumps(engine.run(source, values, accumulate=accumulate, order=order).to_dict())
    other = "assign" if accumulate == "add" else "add"
    try:
        alt = engine.run(source, values, accumulate=other, order=order).to_dict()
    except engine.ProgramError:
        return first, None
    return first, {"accumulate": other, "grads": grads_of(alt)}


def check_contrast(source: str, values: Any, accumulate: str, order: str) -> None:
    try:
        expected = two_runs(source, values, accumulate, order)
    except engine.ProgramError as err:
        with pytest.raises(engine.ProgramError) as again:
            engine.run_with_contrast(source, values, accumulate, order)
        assert again.value.to_dict() == err.to_dict()
        return
    t, contrast = engine.run_with_contrast(source, values, accumulate, order)
    assert json.dumps(t.to_dict()) == expected[0]  # the trace's own grads are put back
    assert contrast == expected[1]
    assert json.dumps(contrast) == json.dumps(expected[1])  # the same floats, the same order


@pytest.mark.parametrize("order", ["dfs", "kahn"])
@pytest.mark.parametrize("accumulate", ["add", "assign"])
@pytest.mark.parametrize(("source", "values"), CONTRAST_PROGRAMS)
def test_contrast_equals_two_runs(source: str, values: Any, accumulate: str, order: str) -> None:
    check_contrast(source, values, accumulate, order)


@settings(max_examples=40, deadline=None)
@given(programs())
def test_contrast_equals_two_runs_on_random_programs(prog: Any) -> None:
    source, values = to_source(prog)
    check_contrast(source, values, "add", "dfs")
    check_contrast(source, values, "assign", "kahn")


def test_contrast_of_the_lesson() -> None:
    """`=` instead of `+=`: x̄ = 3 (the mul's 3 overwrites the add's 1), against 4."""
    t, contrast = engine.run_with_contrast(LESSON)
    assert t.to_dict()["grads"] == {"x": 4.0, "y": 2.0}
    assert contrast == {
        "accumulate": "assign",
        "grads": {"n0": 3.0, "n1": 2.0, "n2": 1.0, "n3": 1.0},
    }
    t, contrast = engine.run_with_contrast(LESSON, accumulate="assign")
    assert t.to_dict()["grads"] == {"x": 3.0, "y": 2.0}
    assert contrast is not None and contrast["grads"]["n0"] == 4.0


def test_contrast_is_none_when_the_other_mode_fails() -> None:
    source = "x = 1e-300\nu = log(x)\nL = u*1e8 + u*1e8"
    with pytest.raises(engine.ProgramError):
        engine.run(source)
    t, contrast = engine.run_with_contrast(source, accumulate="assign")
    assert contrast is None
    assert t.to_dict()["options"]["accumulate"] == "assign"


def test_contrast_keeps_the_steps_and_bad_options_raise() -> None:
    t, _ = engine.run_with_contrast("x = 3\nL = x*x + x")
    assert [s["grads"] for s in t.to_dict()["steps"]][-1] == {"n0": 7.0}
    with pytest.raises(engine.ProgramError):
        engine.run_with_contrast("x = 1", accumulate="both")
