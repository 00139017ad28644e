"""Every op of engine/autograd/ops/ against PyTorch (float64, CPU): forward values and every input's
gradient to 1e-9 relative, through the engine's Python API.

Table-driven: each row of `strategies.op_cases()` names an op, how the engine and torch call
it, the inputs' shapes and their domain. The gradient is checked as a full vector–Jacobian
product: backward of sum(out · w) for a random w, i.e. `out.backward(w)` in torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import engine.autograd.ops as O
from engine.autograd.backward import BackwardError, backward
from engine.autograd.value import constant, leaf
from engine.tracing.record import trace
from tests.join_cases import join_cases
from tests.strategies import (
    OpCase,
    assert_close,
    engine_grad,
    engine_value_and_grads,
    grad_of,
    op_cases,
    require_torch,
    tensor,
    torch_value_and_grads,
    upstream_for,
)

torch = pytest.importorskip("torch")
F = torch.nn.functional

CASES = op_cases() + join_cases()


def check_against_torch(case: OpCase, seed: int = 0) -> None:
    arrays = case.inputs(seed)
    value, grads, w = engine_value_and_grads(case, arrays)
    t_value, t_grads = torch_value_and_grads(case, arrays, w)
    assert_close(value, t_value, what=f"{case.id}: value")
    for i, (g, tg) in enumerate(zip(grads, t_grads, strict=True)):
        assert_close(g, tg, what=f"{case.id}: grad of input {i}")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op_matches_torch(case: OpCase) -> None:
    require_torch()
    for seed in (0, 1):
        check_against_torch(case, seed)


def test_every_op_has_a_row() -> None:
    """A new op in engine/autograd/ops/ without a row in the table fails here."""
    covered = {c.op for c in CASES}
    assert covered == set(O.OPS), f"ops without a test row: {sorted(set(O.OPS) - covered)}"


def test_op_names_are_what_a_node_reports() -> None:
    for case in CASES:
        arrays = case.inputs(0)
        out = case.eng(*[leaf(a) for a in arrays])
        assert out.op is not None
        assert out.op.name == case.op, case.id


# --- kinks and masks: exact inputs, PyTorch's conventions ------------------------------------

KINKS = [
    OpCase(
        "max-ties",
        "max",
        O.maximum,
        torch.maximum,
        ((4,), (4,)),
        fixed=[[1.0, 2.0, 3.0, -1.0], [1.0, 0.0, 3.0, 5.0]],
    ),
    OpCase(
        "min-ties",
        "min",
        O.minimum,
        torch.minimum,
        ((4,), (4,)),
        fixed=[[1.0, 2.0, 3.0, -1.0], [1.0, 0.0, 3.0, 5.0]],
    ),
    OpCase(
        "max-ties-broadcast",
        "max",
        O.maximum,
        torch.maximum,
        ((2, 3), ()),
        fixed=[[[0.5, 1.0, 2.0], [1.0, 1.0, -3.0]], 1.0],
    ),
    OpCase(
        "min-ties-broadcast",
        "min",
        O.minimum,
        torch.minimum,
        ((2, 3), (3,)),
        fixed=[[[0.5, 1.0, 2.0], [1.0, 1.0, -3.0]], [1.0, 1.0, 2.0]],
    ),
    OpCase(
        "max-self",
        "max",
        lambda a: O.maximum(a, a),
        lambda t: torch.maximum(t, t),
        ((3,),),
        fixed=[[1.0, -2.0, 0.0]],
    ),
    OpCase(
        "min-self",
        "min",
        lambda a: O.minimum(a, a),
        lambda t: torch.minimum(t, t),
        ((3,),),
        fixed=[[1.0, -2.0, 0.0]],
    ),
    OpCase(
        "relu-at-0", "relu", O.relu, torch.relu, ((5,),), fixed=[[-1.0, -0.0, 0.0, 1e-300, 2.0]]
    ),
    OpCase(
        "abs-at-0", "abs", O.absolute, torch.abs, ((5,),), fixed=[[-1.0, -0.0, 0.0, 1e-300, 2.0]]
    ),
    OpCase("relu-scalar-0", "relu", O.relu, torch.relu, ((),), fixed=[0.0]),
    OpCase("abs-scalar-0", "abs", O.absolute, torch.abs, ((),), fixed=[0.0]),
    # x ** 0: the base's grad is 0 even at x = 0 (where b·a^(b−1) would be 0·inf).
    OpCase(
        "pow-x**0",
        "pow",
        lambda a, b: a**b,
        lambda a, b: a**b,
        ((4,), (4,)),
        fixed=[[0.0, 2.0, 3.0, 0.5], [0.0, 0.0, 0.0, 0.0]],
    ),
    # 0 ** y with y ≥ 0: the exponent's grad is 0 (where a^b·ln a would be 0·(−inf)).
    OpCase(
        "pow-0**y",
        "pow",
        lambda a, b: a**b,
        lambda a, b: a**b,
        ((4,), (4,)),
        fixed=[[0.0, 0.0, 0.0, 2.0], [2.0, 1.0, 3.0, 0.0]],
    ),
    OpCase(
        "pow-0**y-broadcast",
        "pow",
        lambda a, b: a**b,
        lambda a, b: a**b,
        ((), (3,)),
        fixed=[0.0, [1.0, 2.0, 0.0]],
    ),
    OpCase(
        "pow-const-exponent-0",
        "pow",
        lambda a: a**0.0,
        lambda a: a**0.0,
        ((3,),),
        fixed=[[0.0, -1.0, 2.0]],
    ),
    OpCase(
        "pow-negative-base-integer",
        "pow",
        lambda a: a**3.0,
        lambda a: a**3.0,
        ((3,),),
        fixed=[[-2.0, -0.5, 0.0]],
    ),
    OpCase(
        "sigmoid-large",
        "sigmoid",
        O.sigmoid,
        torch.sigmoid,
        ((10,),),
        fixed=[[-800.0, -745.0, -700.0, -40.0, -20.0, 20.0, 40.0, 700.0, 800.0, 0.0]],
    ),
    OpCase(
        "softplus-threshold",
        "softplus",
        O.softplus,
        torch.nn.functional.softplus,
        ((8,),),
        fixed=[[-800.0, -40.0, -1.0, 0.0, 19.9, 20.0, 20.1, 800.0]],
    ),
    OpCase("softplus", "softplus", O.softplus, torch.nn.functional.softplus, ((3, 2),)),
    OpCase("tanh-large", "tanh", O.tanh, torch.tanh, ((4,),), fixed=[[-400.0, -20.0, 20.0, 400.0]]),
    OpCase("exp-large-negative", "exp", O.exp, torch.exp, ((3,),), fixed=[[-800.0, -700.0, 700.0]]),
    OpCase(
        "softmax-ties",
        "softmax",
        O.softmax,
        lambda t: torch.softmax(t, -1),
        ((2, 3),),
        fixed=[[[1.0, 1.0, 1.0], [5.0, 5.0, -5.0]]],
    ),
    OpCase("relu-method-at-0", "relu", lambda x: x.relu(), torch.relu, ((2,),), fixed=[[0.0, 3.0]]),
]


@pytest.mark.parametrize("case", KINKS, ids=[c.id for c in KINKS])
def test_kinks_and_masks_match_torch(case: OpCase) -> None:
    check_against_torch(case)


def test_max_tie_splits_the_gradient_evenly() -> None:
    a, b = leaf([1.0, 2.0, 3.0]), leaf([1.0, 0.0, 3.0])
    backward(O.sum(O.maximum(a, b)))
    assert_close(a.grad, [0.5, 1.0, 0.5])
    assert_close(b.grad, [0.5, 0.0, 0.5])
    a, b = leaf([1.0, 2.0, 3.0]), leaf([1.0, 0.0, 3.0])
    backward(O.sum(O.minimum(a, b)))
    assert_close(a.grad, [0.5, 0.0, 0.5])
    assert_close(b.grad, [0.5, 1.0, 0.5])


def test_relu_and_abs_have_zero_grad_at_zero() -> None:
    for fn in (O.relu, O.absolute):
        x = leaf(0.0)
        backward(fn(x))
        assert float(x.grad) == 0.0
        x = leaf([0.0, -0.0])
        backward(O.sum(fn(x)))
        assert np.array_equal(x.grad, [0.0, 0.0])


def test_pow_masks_against_torch_exactly() -> None:
    a, b = leaf([0.0, 0.0, 2.0]), leaf([0.0, 2.0, 0.0])
    backward(O.sum(a**b))
    ta, tb = tensor([0.0, 0.0, 2.0]), tensor([0.0, 2.0, 0.0])
    (ta**tb).sum().backward()
    assert np.array_equal(a.grad, grad_of(ta))
    assert np.array_equal(b.grad, grad_of(tb))
    assert np.array_equal(a.grad, [0.0, 0.0, 0.0])
    assert_close(b.grad, [0.0, 0.0, np.log(2.0)])


def test_pow_infinite_gradient_is_an_error_not_a_number() -> None:
    """0 ** 0.5: torch's grad is inf; the engine refuses to show a non-finite gradient."""
    t = tensor([0.0])
    (t**0.5).sum().backward()
    assert np.isinf(grad_of(t)).all()
    x = leaf([0.0])
    with pytest.raises(BackwardError):
        backward(O.sum(x**0.5))


def test_pow_negative_base_with_a_tensor_exponent_is_an_error() -> None:
    """(−3) ** y: ∂/∂y = (−3)^y·ln(−3) is NaN in torch; the engine refuses it instead."""
    ta, tb = tensor([-3.0]), tensor([2.0])
    (ta**tb).sum().backward()
    assert np.isnan(grad_of(tb)).all()
    a, b = leaf([-3.0]), leaf([2.0])
    with pytest.raises(BackwardError):
        backward(O.sum(a**b))
    # With a constant exponent nothing needs ln(−3): fine, and equal to torch.
    a = leaf([-3.0])
    backward(O.sum(a**2.0))
    assert_close(a.grad, [-6.0])


def test_sigmoid_is_finite_and_exact_for_large_inputs() -> None:
    xs = np.array([-1000.0, -800.0, -710.0, -36.0, 36.0, 710.0, 800.0, 1000.0])
    x = leaf(xs)
    y = O.sigmoid(x)
    backward(O.sum(y))
    t = tensor(xs)
    ty = torch.sigmoid(t)
    ty.sum().backward()
    assert np.all(np.isfinite(y.data))
    assert_close(y.data, ty.detach().numpy())
    assert_close(x.grad, grad_of(t))
    assert y.data[-1] == 1.0 and x.grad[-1] == 0.0


# --- broadcasting: the grad of a broadcast input is summed back to its shape ------------------


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((2, 3, 4), (3, 1)),
        ((3, 1), (2, 3, 4)),
        ((2, 1, 4), (3, 1)),
        ((), (2, 3)),
        ((1,), (4, 1, 1)),
    ],
)
def test_broadcast_grads_keep_each_input_shape(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    rng = np.random.default_rng(7)
    A, B = rng.normal(size=sa), rng.normal(size=sb)
    a, b = leaf(A), leaf(B)
    out = (a * b + a - b) / (b * b + 1.0)
    w = upstream_for(out.data.shape)
    backward(O.sum(out * constant(w)))
    assert a.grad.shape == sa and b.grad.shape == sb
    ta, tb = tensor(A), tensor(B)
    ((ta * tb + ta - tb) / (tb * tb + 1.0)).backward(torch.as_tensor(w))
    assert_close(a.grad, grad_of(ta))
    assert_close(b.grad, grad_of(tb))


def test_shapes_that_do_not_broadcast_are_refused() -> None:
    with pytest.raises(O.OpError, match=r"\(2, 3\).*\(4,\)"):
        leaf(np.ones((2, 3))) + leaf(np.ones(4))


@pytest.mark.parametrize(
    "sa,sb", [((3,), (4,)), ((2, 3), (2, 3)), ((3,), (2, 4, 1)), ((5, 2, 3), (4, 3, 2))]
)
def test_matmul_shapes_that_do_not_multiply_are_refused(sa, sb) -> None:
    with pytest.raises(O.OpError):
        leaf(np.ones(sa)) @ leaf(np.ones(sb))


def test_matmul_of_a_scalar_is_refused() -> None:
    with pytest.raises(O.OpError):
        leaf(2.0) @ leaf(np.ones(3))


# --- losses ----------------------------------------------------------------------------------


def test_mse_equals_torch_and_its_explicit_form() -> None:
    rng = np.random.default_rng(3)
    P, Y = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    p1, y1 = leaf(P), leaf(Y)
    backward(O.mse(p1, y1))
    p2, y2 = leaf(P), leaf(Y)
    explicit = O.mean((p2 - y2) ** 2)
    backward(explicit)
    tp, ty = tensor(P), tensor(Y)
    loss = F.mse_loss(tp, ty)
    loss.backward()
    assert_close(O.mse(leaf(P), leaf(Y)).data, loss.item())
    assert_close(explicit.data, loss.item())
    for g in (p1.grad, p2.grad):
        assert_close(g, grad_of(tp))
    for g in (y1.grad, y2.grad):
        assert_close(g, grad_of(ty))


def test_mse_with_broadcasting_equals_mean_of_squares() -> None:
    rng = np.random.default_rng(4)
    P, Y = rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 1))
    p, y = leaf(P), leaf(Y)
    out = O.mse(p, y)
    backward(out)
    tp, ty = tensor(P), tensor(Y)
    ref = ((tp - ty) ** 2).mean()
    ref.backward()
    assert_close(out.data, ref.item())
    assert_close(p.grad, grad_of(tp))
    assert_close(y.grad, grad_of(ty))


def test_cross_entropy_batch_is_the_mean_over_rows() -> None:
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(6, 4)) * 3
    labels = [3, 0, 0, 2, 1, 3]
    z = leaf(Z)
    loss = O.cross_entropy(z, labels)
    backward(loss)
    tz = tensor(Z)
    ref = F.cross_entropy(tz, torch.tensor(labels))
    ref.backward()
    assert_close(loss.data, ref.item())
    assert_close(z.grad, grad_of(tz))
    # Each row's grad is (p − onehot)/N.
    p = np.exp(Z - Z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    onehot = np.eye(4)[labels]
    assert_close(z.grad, (p - onehot) / 6)


@pytest.mark.parametrize(
    "shape,labels",
    [
        ((3,), [0]),
        ((3,), 3),
        ((3,), -1),
        ((2, 3), 1),
        ((2, 3), [0]),
        ((2, 3), [0, 5]),
        ((2, 2, 3), [0, 1]),
    ],
)
def test_cross_entropy_bad_labels_are_refused(shape, labels) -> None:
    with pytest.raises(O.OpError):
        O.cross_entropy(leaf(np.zeros(shape)), labels)


def test_log_softmax_matches_log_of_softmax_and_torch() -> None:
    rng = np.random.default_rng(6)
    Z = rng.normal(size=(3, 5))
    z1, z2 = leaf(Z), leaf(Z)
    w = upstream_for((3, 5))
    a = O.log_softmax(z1, axis=1)
    b = O.log(O.softmax(z2, axis=1))
    backward(O.sum(a * constant(w)))
    backward(O.sum(b * constant(w)))
    tz = tensor(Z)
    torch.log_softmax(tz, 1).backward(torch.as_tensor(w))
    assert_close(a.data, b.data)
    assert_close(z1.grad, grad_of(tz))
    assert_close(z2.grad, grad_of(tz))


# --- const / detach ----------------------------------------------------------------------------


def test_const_cuts_the_graph_like_detach() -> None:
    X = np.array([1.5, -2.0])
    x = leaf(X)
    y = O.const(x * x)
    out = O.sum(y * x + O.detach(x) * 3.0)
    backward(out)
    tx = tensor(X)
    ty = (tx * tx).detach()
    tout = (ty * tx + tx.detach() * 3.0).sum()
    tout.backward()
    assert_close(out.data, tout.item())
    assert_close(x.grad, grad_of(tx))
    assert y.kind == "const" and y.grad is None and not y.requires_grad
    assert y.inputs == ()


def test_const_method_detach() -> None:
    x = leaf(3.0)
    out = x * x.detach()
    backward(out)
    assert float(x.grad) == 3.0


def test_values_are_float64() -> None:
    x = leaf([1, 2, 3])
    assert x.data.dtype == np.float64
    y = O.sum(x * 2)
    backward(y)
    assert y.data.dtype == np.float64 and x.grad.dtype == np.float64


def test_trace_of_every_op_is_json_ready() -> None:
    """The trace's to_dict for each table row: grads there equal the torch grads."""
    import json

    for case in CASES[::7]:
        arrays = case.inputs(0)
        leaves = [leaf(a, name=f"in{i}") for i, a in enumerate(arrays)]
        out = case.eng(*leaves)
        w = upstream_for(out.data.shape)
        t = trace(O.sum(out * constant(w)))
        d = json.loads(json.dumps(t.to_dict(), allow_nan=False))
        _, t_grads = torch_value_and_grads(case, arrays, w)
        for i, tg in enumerate(t_grads):
            assert_close(d["grads"][f"in{i}"], tg, what=f"{case.id}: grad of input {i}")
        for i, x in enumerate(leaves):
            assert_close(engine_grad(x), t_grads[i])


def test_numpy_array_on_the_left_builds_a_node() -> None:
    """`W @ x`, `c * x` with NumPy arrays on the left must defer to Value's reflected operators
    (not turn into an object array of Values, one per element)."""
    W, c = np.arange(6.0).reshape(2, 3), np.array([1.0, -2.0, 0.5])
    x = leaf([0.5, 1.5, -1.0])
    for out, ref in [
        (W @ x, lambda t: torch.as_tensor(W) @ t),
        (c * x, lambda t: torch.as_tensor(c) * t),
        (c + x, lambda t: torch.as_tensor(c) + t),
        (c - x, lambda t: torch.as_tensor(c) - t),
        (c / x, lambda t: torch.as_tensor(c) / t),
        (np.abs(c) ** x, lambda t: torch.as_tensor(np.abs(c)) ** t),
    ]:
        assert type(out).__name__ == "Value", type(out)
        x.grad = None
        backward(O.sum(out))
        t = tensor([0.5, 1.5, -1.0])
        tout = ref(t)
        tout.sum().backward()
        assert_close(out.data, tout.detach().numpy())
        assert_close(x.grad, grad_of(t))


# --- index keys outside "constant ints and slices" (Python API) --------------------------------
# The language only writes ints and slices, but engine.autograd.ops.Index takes any key from the
# Python API. Each of these must either be refused with an OpError, or work like torch —
# backward and the trace's to_dict() included. Today they are silently wrong or crash (see the
# report).


def _index_or_refuse(X: np.ndarray, key: Any) -> tuple[Any, Any] | None:
    x = leaf(X, "x")
    try:
        y = x[key]
    except O.OpError:
        return None  # refused: fine
    t = trace(O.sum(y * constant(np.arange(1.0, y.data.size + 1).reshape(y.data.shape))))
    return t.to_dict(), x


@pytest.mark.parametrize(
    "key",
    [[0, 0, 2], np.array([1, 1]), (slice(None), [0, 0]), None, Ellipsis, (0, None)],
    ids=["list-repeated", "array-repeated", "slice-and-list", "None", "Ellipsis", "int-None"],
)
def test_index_with_advanced_keys_is_refused_or_right(key: Any) -> None:
    X = np.arange(6.0).reshape(3, 2) if isinstance(key, tuple) else np.arange(3.0)
    got = _index_or_refuse(X, key)
    if got is None:
        return
    d, x = got
    t = tensor(X)
    ty = t[key]
    (ty * torch.arange(1.0, ty.numel() + 1, dtype=torch.float64).reshape(ty.shape)).sum().backward()
    assert_close(d["grads"]["x"], grad_of(t))
    assert_close(x.grad, grad_of(t))


@pytest.mark.parametrize(
    "key", [np.int64(1), (np.int64(-1), slice(0, 1))], ids=["int64", "int64-slice"]
)
def test_index_with_numpy_integers_works_like_int(key: Any) -> None:
    """`x[i]` with i from np.arange or np.argmax is an ordinary int index."""
    X = np.arange(6.0).reshape(3, 2)
    got = _index_or_refuse(X, key)
    assert got is not None, "a NumPy integer is an integer index"
    d, x = got
    t = tensor(X)
    ty = t[
        tuple(
            int(k) if isinstance(k, np.integer) else k
            for k in (key if isinstance(key, tuple) else (key,))
        )
    ]
    (ty * torch.arange(1.0, ty.numel() + 1, dtype=torch.float64).reshape(ty.shape)).sum().backward()
    assert_close(d["grads"]["x"], grad_of(t))
    with pytest.raises(O.OpError):
        leaf(X)[np.int64(7)]  # out of range: an OpError like x[7], not a bare IndexError


# --- NumPy integers as parameters (Python API) ---------------------------------------------------
# In a notebook, labels and axes often come out of NumPy (np.array([...]), np.argmax, arange):
# they must behave exactly like the Python ints they stand for, JSON trace included.

NUMPY_PARAMS = [
    (
        "ce-array-labels",
        lambda z: O.cross_entropy(z, np.array([0, 2])),
        lambda t: torch_ce(t, [0, 2]),
        (2, 3),
    ),
    ("ce-int64-label", lambda z: O.cross_entropy(z, np.int64(1)), lambda t: torch_ce(t, 1), (3,)),
    (
        "ce-int64-list",
        lambda z: O.cross_entropy(z, [np.int64(2), np.int64(0)]),
        lambda t: torch_ce(t, [2, 0]),
        (2, 3),
    ),
    ("sum-int64-axis", lambda x: O.sum(x, axis=np.int64(1)), lambda t: t.sum(1), (2, 3)),
    (
        "mean-int64-axes",
        lambda x: O.mean(x, axis=(np.int64(0), -1)),
        lambda t: t.mean((0, -1)),
        (2, 3, 4),
    ),
    (
        "softmax-int64-axis",
        lambda x: O.softmax(x, axis=np.int64(0)),
        lambda t: torch.softmax(t, 0),
        (2, 3),
    ),
    (
        "log_softmax-int64-axis",
        lambda x: O.log_softmax(x, axis=np.int64(-1)),
        lambda t: torch.log_softmax(t, -1),
        (2, 3),
    ),
    (
        "reshape-int64-shape",
        lambda x: O.reshape(x, (np.int64(3), np.int64(-1))),
        lambda t: t.reshape(3, -1),
        (2, 3),
    ),
    (
        "transpose-array-axes",
        lambda x: O.transpose(x, np.array([1, 0])),
        lambda t: t.permute(1, 0),
        (2, 3),
    ),
]


def torch_ce(t: Any, labels: Any) -> Any:
    return F.cross_entropy(t, torch.as_tensor(labels))


@pytest.mark.parametrize("id,eng,th,shape", NUMPY_PARAMS, ids=[p[0] for p in NUMPY_PARAMS])
def test_numpy_integer_parameters_work_like_ints(id: str, eng: Any, th: Any, shape: Any) -> None:
    import json

    case = OpCase(id, "", eng, th, (shape,))
    check_against_torch(case)
    x = leaf(case.inputs(0)[0], "x")
    d = json.loads(json.dumps(trace(O.sum(eng(x) * 1.5)).to_dict()))  # JSON-ready params
    assert d["grads"]["x"] is not None
