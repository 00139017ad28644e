"""Each op is defined once, and every path that runs it is held to that definition:

- the scalar kernels (`scalar`, `scalar_grad`: the speed path) of every op in the registry that
  has them, against its `compute` and `gradient` (the definition), on generated inputs;
- Value's operators and methods: what value.py declares for the type checker, what
  engine.autograd.ops.operators attaches and what the registry says, all the same names;
- the registry's tables, and the op families' functions, from the one list;
- graph.py's step-by-step sorts (for the lessons) against the sorts backward() uses.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.autograd.ops as O
from engine.autograd import value as value_module
from engine.autograd.graph import dfs_events, dfs_order, kahn_order, kahn_steps
from engine.autograd.ops.operators import ATTRIBUTES, value_attributes
from engine.autograd.value import Value, constant, leaf

F64 = np.float64
KERNEL_OPS = [cls() for cls in O.OPS.values() if cls.elementwise]
floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
grads = st.sampled_from([1.0, -2.5, 0.0, -0.0, 1e-3, 7.0])


def same(a: Any, b: Any) -> bool:
    """The same float64, bit for bit (the sign of zero included; any NaN equals any NaN)."""
    a, b = F64(a), F64(b)
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return bool(a == b and np.signbit(a) == np.signbit(b))


def close(a: Any, b: Any, ulps: int) -> bool:
    a, b = F64(a), F64(b)
    return same(a, b) or bool(abs(a - b) <= ulps * np.spacing(max(abs(a), abs(b))))


def test_every_elementwise_op_has_kernels_and_the_others_none() -> None:
    assert {op.name for op in KERNEL_OPS} == {
        "add", "sub", "mul", "div", "pow", "max", "min",
        "neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "softplus",
        "relu", "abs",
    }  # fmt: skip
    for cls in O.OPS.values():
        assert hasattr(cls, "scalar_grad") == cls.elementwise, cls.name


def check_kernels(op: O.Op, xs: list[float], g: float) -> None:
    """One input point: the kernels give what compute and gradient give, to the bit (pow's
    rule on arrays within 2 ulps: `a ** (b−1)` is NumPy's ufunc there, C's pow on scalars)."""
    with O.quiet():
        out = op.scalar(*(F64(x) for x in xs))  # type: ignore[attr-defined]
        assert type(out) is F64
        ref = np.asarray(op.compute(*(np.asarray(x) for x in xs)))[()]
        assert same(out, ref), (op.name, xs, out, ref)
        if not np.isfinite(out):
            return
        needs_options = [(True,)] if op.arity == 1 else [(True, True), (True, False), (False, True)]
        for needs in needs_options:
            args = [F64(g), *(F64(x) for x in xs), out]
            got = op.scalar_grad(*args, *(needs if op.arity == 2 else ()))  # type: ignore[attr-defined]
            got = (got,) if op.arity == 1 else got
            scalars = op.gradient(F64(g), [F64(x) for x in xs], out, needs, O.SCALAR_MATH)
            arrays = op.gradient(
                np.asarray(g), [np.asarray(x) for x in xs], np.asarray(out), needs, O.ARRAY_MATH
            )
            for k, need in enumerate(needs):
                if not need:
                    continue
                assert type(got[k]) is F64, (op.name, k)
                assert same(got[k], scalars[k]), (op.name, xs, g, k, got[k], scalars[k])
                array_k = np.asarray(arrays[k])[()]
                ulps = 2 if op.name == "pow" else 0
                assert close(got[k], array_k, ulps), (op.name, xs, g, k, got[k], array_k)


@pytest.mark.parametrize("op", KERNEL_OPS, ids=lambda op: op.name)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_scalar_kernels_are_the_ops_definition(op: O.Op, data: st.DataObject) -> None:
    xs = [
        data.draw(floats | st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.0]))
        for _ in range(op.arity)
    ]
    check_kernels(op, xs, data.draw(grads))


@pytest.mark.parametrize("op", KERNEL_OPS, ids=lambda op: op.name)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_the_scalar_kernels_are_the_ops_definition_near_one(op: O.Op, data: st.DataObject) -> None:
    """Where most of the lessons' numbers are: small magnitudes, and ties for max and min."""
    small = st.floats(-30.0, 30.0, allow_nan=False)
    xs = [data.draw(small) for _ in range(op.arity)]
    if op.arity == 2 and data.draw(st.booleans()):
        xs[1] = xs[0]  # a tie
    check_kernels(op, xs, data.draw(grads))


# --- Value's operators, from the registry ---------------------------------------------------


def declared_for_the_type_checker() -> set[str]:
    """The names value.py declares under `if TYPE_CHECKING:` inside class Value."""
    tree = ast.parse(inspect.getsource(value_module))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Value"]
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
    return names


def test_the_declared_operators_are_the_installed_ones_and_the_registrys() -> None:
    attached = ATTRIBUTES
    assert set(value_attributes()) == set(attached)
    assert declared_for_the_type_checker() == set(attached) | {"backward"}
    for name, attribute in attached.items():
        assert Value.__dict__[name] is attribute, name
    expected = {"detach", "__array_ufunc__"}
    for cls in O.OPS.values():
        if cls.arity == 2 and cls.operator:
            dunder = {
                "+": "add",
                "-": "sub",
                "*": "mul",
                "/": "truediv",
                "**": "pow",
                "@": "matmul",
            }
            expected |= {f"__{dunder[cls.operator]}__", f"__r{dunder[cls.operator]}__"}
        elif cls.operator:
            expected.add({"-": "__neg__", "[]": "__getitem__", ".T": "T"}[cls.operator])
        if cls.method:
            expected.add(str(cls.function))
    assert set(attached) == expected


def test_the_operators_build_the_registrys_ops() -> None:
    x, y = leaf(2.0, "x"), leaf(np.array([[1.0, 2.0], [3.0, 4.0]]), "y")
    built = {
        "add": x + 1, "sub": 1 - x, "mul": x * x, "div": x / 2, "pow": 2**x, "neg": -x,
        "matmul": y @ y, "index": y[0], "transpose": y.T, "exp": x.exp(), "abs": x.abs(),
        "sum": y.sum(axis=0), "softmax": y.softmax(), "log_softmax": y.log_softmax(),
        "reshape": y.reshape((4,)), "mean": y.mean(),
    }  # fmt: skip
    for name, node in built.items():
        assert node.op is not None and node.op.name == name, name
    assert (1 - x).inputs[1] is x and (2**x).inputs[1] is x  # reflected: the number first
    assert x.detach().kind == "const" and float(x.detach().data) == 2.0


def test_every_op_has_its_function_and_one_rule_per_input() -> None:
    for name, cls in O.OPS.items():
        # arity 0: any number of inputs, written as one list (cat, stack); one rule each
        assert cls.name == name and cls.arity in (0, 1, 2), name
        assert len(cls.rules) == max(cls.arity, 1), name
        if cls.arity == 0:  # an instance names each of its inputs in its own rule
            rules = cls(0, 3).rules  # type: ignore[call-arg]
            assert [r.count(f"{{{i}}}") for i, r in enumerate(rules)] == [1, 1, 1], name
        assert cls.__doc__ and "=" in cls.__doc__, f"{name}: its maths in its docstring"
        function = getattr(O, cls.api or cls.name)
        assert callable(function), name
        if cls.method or cls.keywords:
            assert cls.function, name
    assert set(O.UNARY_FUNCTIONS) == {
        "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "softplus", "relu", "abs"
    }  # fmt: skip
    assert set(O.BINARY_FUNCTIONS) == {"max", "min", "matmul", "mse"}
    assert set(O.BINARY_OPERATORS) == {"+", "-", "*", "/", "**", "@"}
    assert set(O.METHODS) == set(O.UNARY_FUNCTIONS) - {"softplus"} | {
        "sum", "mean", "softmax", "log_softmax", "transpose", "reshape"
    }  # fmt: skip


# --- the sorts, step by step -----------------------------------------------------------------


def graph(seed: int) -> Value:
    rng = np.random.default_rng(seed)
    pool = [leaf(float(v)) for v in rng.uniform(-1, 1, size=int(rng.integers(1, 5)))]
    pool.append(constant(2.0))
    with O.quiet():
        for _ in range(int(rng.integers(1, 40))):
            a = pool[int(rng.integers(max(0, len(pool) - 6), len(pool)))]
            b = pool[int(rng.integers(0, len(pool)))]
            kind = rng.random()
            pool.append(a * b if kind < 0.4 else a + b if kind < 0.8 else a.tanh())
    return pool[-1]


@pytest.mark.parametrize("seed", range(25))
def test_the_sorts_step_by_step_give_the_sorts(seed: int) -> None:
    root = graph(seed)
    events = list(dfs_events(root))
    assert [node for do, node, _ in events if do == "emit"] == dfs_order(root)
    assert [node for do, node, _ in events if do == "enter"][0] is root
    assert sorted(n.seq for do, n, _ in events if do == "enter") == sorted(
        n.seq for n in dfs_order(root)
    )
    steps = list(kahn_steps(root))
    assert [node for node, _, _ in reversed(steps)] == kahn_order(root)
    for node, lowered, _ in steps:
        assert [child for child, _ in lowered] == list(node.inputs)
        assert all(count >= 0 for _, count in lowered)
