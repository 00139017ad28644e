"""Shared test support for the engine's tests: the hypothesis profile, comparison helpers, a
table of op cases (used by the PyTorch differential tests and the gradient checks), and a
generator of random programs that can be built three ways — through the engine's Python API,
in PyTorch, and as source text for `engine.run`.

A program is a list of entries: a `Leaf` (a named parameter with a value) or an `Instr` (an op
of `PROGRAM_OPS` applied to earlier entries or to float constants). Entry i is value i.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import engine.autograd.ops as O
from engine.autograd.value import Value, constant, leaf

try:  # torch is a test dependency; the tests that need it skip cleanly without it
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    torch = None  # type: ignore[assignment]
    F = None  # type: ignore[assignment]

# --- hypothesis: deterministic, bounded -------------------------------------------------------
# Every @given in these tests carries `bounded(n)`: a fixed example count, no deadline and
# derandomize=True, so CI runs the same examples every time. The profile below is the same
# thing for ad-hoc use (`pytest --hypothesis-profile=gradtrace`); it is registered, not loaded,
# so importing this module changes no other test file's settings.

settings.register_profile(
    "gradtrace",
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


def bounded(n: int) -> settings:
    """Settings for one test: `n` examples, no deadline, derandomized (same examples in CI)."""
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


# --- comparisons -----------------------------------------------------------------------------

RTOL = 1e-9
ATOL = 1e-12


def assert_close(
    actual: Any, expected: Any, rtol: float = RTOL, atol: float = ATOL, what: str = ""
) -> None:
    """Elementwise |actual − expected| ≤ atol + rtol·|expected|, shapes equal."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != expected {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=what)


def tensor(a: Any, requires_grad: bool = True) -> Any:
    """A float64 torch tensor (a leaf that requires grad, by default)."""
    return torch.tensor(
        np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=requires_grad
    )


def grad_of(t: Any) -> np.ndarray:
    """A torch leaf's grad as an array; a leaf the output does not reach has grad 0."""
    if t.grad is None:
        return np.zeros(tuple(t.shape))
    return t.grad.detach().numpy().copy()


def engine_grad(v: Value) -> np.ndarray:
    """A Python-API leaf's grad after backward; a leaf backward never reached has grad 0."""
    if v.grad is None:
        return np.zeros(v.data.shape)
    return np.asarray(v.grad, dtype=np.float64)


def require_torch() -> None:
    if torch is None:  # pragma: no cover
        pytest.skip("torch is not installed (pip install torch==2.13.0)")


def get_run() -> Callable[..., Any]:
    """`engine.run` (the language front end), or skip the test with the reason."""
    try:
        import engine
    except ImportError as e:  # pragma: no cover
        pytest.skip(f"engine cannot be imported: {e}")
    run = getattr(engine, "run", None)
    if run is None:
        try:
            from engine import run  # type: ignore[attr-defined,no-redef]
        except ImportError:
            run = None
    if run is None:
        pytest.skip(
            "engine.run (the language front end, engine/language/parse.py) does not exist yet"
        )
    return run


# --- torch equivalents of the engine's ops ----------------------------------------------------


def torch_index(t: Any, key: Any) -> Any:
    """`t[key]` with NumPy's meaning, negative slice steps included (torch has none)."""
    key = key if isinstance(key, tuple) else (key,)
    dim = 0
    for k in key:
        n = t.shape[dim]
        if isinstance(k, int):
            t = t.select(dim, k)
        else:
            idx = torch.as_tensor(np.arange(n)[k].copy(), dtype=torch.long)
            t = t.index_select(dim, idx)
            dim += 1
    return t


def torch_sum(t: Any, axis: Any = None, keepdims: bool = False) -> Any:
    if axis is None:
        return t.sum(dim=tuple(range(t.dim())), keepdim=keepdims) if keepdims else t.sum()
    return torch.sum(t, dim=axis, keepdim=keepdims)


def torch_mean(t: Any, axis: Any = None, keepdims: bool = False) -> Any:
    if axis is None:
        return t.mean(dim=tuple(range(t.dim())), keepdim=keepdims) if keepdims else t.mean()
    return torch.mean(t, dim=axis, keepdim=keepdims)


def torch_transpose(t: Any, axes: Any = None) -> Any:
    if axes is None:
        axes = tuple(reversed(range(t.dim())))
    return t.permute(*axes) if t.dim() else t


def torch_cross_entropy(z: Any, labels: Any) -> Any:
    return F.cross_entropy(z, torch.as_tensor(labels, dtype=torch.long))


def torch_mse(p: Any, y: Any) -> Any:
    if tuple(p.shape) == tuple(y.shape):
        return F.mse_loss(p, y)
    return ((p - y) ** 2).mean()


# --- the op table ------------------------------------------------------------------------------

Domain = tuple[float, float]


@dataclass
class OpCase:
    """One row: an op of engine/autograd/ops/, its engine call and its PyTorch equivalent.

    `shapes` are the inputs' shapes; `domain` is one (low, high) range for every input or one
    per input; `fixed` gives exact inputs instead (ties, zeros, masks). `kink` marks inputs where
    central differences are not meaningful (ties, relu/abs at 0): no gradient check there.
    """

    id: str
    op: str  # the engine op's name (engine.autograd.ops.OPS key) this row exercises
    eng: Callable[..., Value]
    th: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    domain: Domain | Sequence[Domain] = (-2.0, 2.0)
    fixed: Sequence[Any] | None = None
    kink: bool = False

    def inputs(self, seed: int = 0) -> list[np.ndarray]:
        if self.fixed is not None:
            return [np.asarray(x, dtype=np.float64) for x in self.fixed]
        rng = np.random.default_rng(seed)
        doms = self.domain
        if not isinstance(doms[0], tuple | list):
            doms = [doms] * len(self.shapes)  # type: ignore[list-item]
        out = []
        for shape, (lo, hi) in zip(self.shapes, doms, strict=True):  # type: ignore[misc]
            out.append(np.asarray(rng.uniform(lo, hi, size=shape), dtype=np.float64))
        return out


def _case(
    id: str,
    op: str,
    eng: Callable[..., Value],
    th: Callable[..., Any],
    *shapes: tuple[int, ...],
    **kw: Any,
) -> OpCase:
    return OpCase(id, op, eng, th, tuple(shapes), **kw)


POS: Domain = (0.3, 2.5)
NEG_OR_POS = [(-2.0, 2.0), (0.5, 2.0)]  # a numerator anywhere, a denominator away from 0

# Broadcasting pairs used for every elementwise binary op.
BROADCAST_PAIRS: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
    ((), ()),
    ((3,), ()),
    ((), (2, 3)),
    ((2, 3), (2, 3)),
    ((2, 3, 4), (3, 1)),
    ((3, 1), (2, 3, 4)),
    ((2, 1, 4), (3, 1)),
    ((4,), (2, 3, 4)),
    ((1, 3, 1), (2, 1, 5)),
]


def _binary_cases() -> list[OpCase]:
    rows: list[tuple[str, str, Callable[..., Value], Callable[..., Any], Any]] = [
        ("add", "add", lambda a, b: a + b, lambda a, b: a + b, (-2.0, 2.0)),
        ("sub", "sub", lambda a, b: a - b, lambda a, b: a - b, (-2.0, 2.0)),
        ("mul", "mul", lambda a, b: a * b, lambda a, b: a * b, (-2.0, 2.0)),
        ("div", "div", lambda a, b: a / b, lambda a, b: a / b, NEG_OR_POS),
        ("pow", "pow", lambda a, b: a**b, lambda a, b: a**b, [POS, (-2.0, 2.0)]),
        ("max", "max", O.maximum, torch.maximum if torch else None, (-2.0, 2.0)),
        ("min", "min", O.minimum, torch.minimum if torch else None, (-2.0, 2.0)),
    ]
    cases = []
    for name, op, eng, th, dom in rows:
        for sa, sb in BROADCAST_PAIRS:
            cases.append(_case(f"{name}-{sa}-{sb}", op, eng, th, sa, sb, domain=dom))
    # Function forms and mixed Value/number forms.
    cases += [
        _case("add-fn", "add", O.add, torch.add if torch else None, (2, 3), (3,)),
        _case("sub-fn", "sub", O.sub, torch.sub if torch else None, (2, 3), (2, 1)),
        _case("mul-fn", "mul", O.mul, torch.mul if torch else None, (2, 3), (1, 3)),
        _case(
            "div-fn", "div", O.div, torch.div if torch else None, (2, 3), (3,), domain=NEG_OR_POS
        ),
        _case(
            "pow-fn",
            "pow",
            O.power,
            torch.pow if torch else None,
            (3,),
            (2, 3),
            domain=[POS, (-2.0, 2.0)],
        ),
        _case("radd", "add", lambda a: 2.5 + a, lambda a: 2.5 + a, (2, 3)),
        _case("rsub", "sub", lambda a: 2.5 - a, lambda a: 2.5 - a, (2, 3)),
        _case("rmul", "mul", lambda a: 2.5 * a, lambda a: 2.5 * a, (2, 3)),
        _case("rdiv", "div", lambda a: 2.5 / a, lambda a: 2.5 / a, (2, 3), domain=POS),
        _case("rpow", "pow", lambda a: 2.5**a, lambda a: 2.5**a, (2, 3)),
        _case(
            "pow-const-2-neg-base",
            "pow",
            lambda a: a**2.0,
            lambda a: a**2.0,
            (2, 3),
            domain=(-3.0, -0.5),
        ),
        _case("pow-const-3", "pow", lambda a: a**3, lambda a: a**3, (4,), domain=(-2.0, 2.0)),
        _case("pow-const-half", "pow", lambda a: a**0.5, lambda a: a**0.5, (4,), domain=POS),
        _case("pow-const-neg", "pow", lambda a: a**-1.5, lambda a: a**-1.5, (4,), domain=POS),
        _case(
            "pow-array-exponent",
            "pow",
            lambda a: a ** np.array([1.0, 2.0, -0.5]),
            lambda a: a ** torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64),
            (2, 3),
            domain=POS,
        ),
    ]
    return cases


UNARY = [
    # name, engine function, method name, torch function, domain
    ("neg", O.neg, None, lambda t: -t, (-2.0, 2.0)),
    ("exp", O.exp, "exp", torch.exp if torch else None, (-3.0, 3.0)),
    ("log", O.log, "log", torch.log if torch else None, (0.1, 5.0)),
    ("sqrt", O.sqrt, "sqrt", torch.sqrt if torch else None, (0.1, 5.0)),
    ("sin", O.sin, "sin", torch.sin if torch else None, (-4.0, 4.0)),
    ("cos", O.cos, "cos", torch.cos if torch else None, (-4.0, 4.0)),
    ("tanh", O.tanh, "tanh", torch.tanh if torch else None, (-3.0, 3.0)),
    ("sigmoid", O.sigmoid, "sigmoid", torch.sigmoid if torch else None, (-6.0, 6.0)),
    ("softplus", O.softplus, None, torch.nn.functional.softplus if torch else None, (-25.0, 25.0)),
    ("relu", O.relu, "relu", torch.relu if torch else None, (-2.0, 2.0)),
    ("abs", O.absolute, "abs", torch.abs if torch else None, (-2.0, 2.0)),
]


def _unary_cases() -> list[OpCase]:
    cases = []
    for name, fn, method, th, dom in UNARY:
        for shape in ((), (5,), (2, 3, 4)):
            cases.append(_case(f"{name}-{shape}", name, fn, th, shape, domain=dom))
        if method is not None:
            cases.append(
                _case(
                    f"{name}-method",
                    name,
                    lambda x, m=method: getattr(x, m)(),
                    th,
                    (2, 3),
                    domain=dom,
                )
            )
    cases.append(_case("neg-operator", "neg", lambda x: -x, lambda t: -t, (2, 3)))
    cases.append(
        _case("abs-builtin", "abs", lambda x: x.abs(), torch.abs if torch else None, (2, 3))
    )
    return cases


MATMUL_SHAPES = [
    ((3,), (3,)),  # vector @ vector → scalar
    ((3,), (3, 4)),  # vector @ matrix
    ((2, 3), (3,)),  # matrix @ vector
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),  # batch on the left only
    ((2, 3), (5, 3, 4)),  # batch on the right only
    ((5, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (1, 3, 4)),  # broadcast batch dim of size 1
    ((2, 1, 3, 4), (5, 4, 2)),  # the example: batch dims (2,1) and (5,) → (2,5)
    ((3,), (2, 3, 4)),  # vector @ batched matrix
    ((2, 4, 3), (3,)),  # batched matrix @ vector
    ((1, 1), (1, 1)),
]


def _matmul_cases() -> list[OpCase]:
    cases = []
    for sa, sb in MATMUL_SHAPES:
        cases.append(
            _case(
                f"matmul-{sa}-{sb}",
                "matmul",
                lambda a, b: a @ b,
                torch.matmul if torch else None,
                sa,
                sb,
            )
        )
    cases.append(
        _case("matmul-fn", "matmul", O.matmul, torch.matmul if torch else None, (2, 3), (3, 2))
    )
    cases.append(
        _case(
            "matmul-const-left",
            "matmul",
            lambda b: np.arange(6.0).reshape(2, 3) @ b,
            lambda b: torch.arange(6.0, dtype=torch.float64).reshape(2, 3) @ b,
            (3, 4),
        )
    )
    return cases


AXES: list[Any] = [None, 0, 1, 2, -1, -2, (0, 2), (2, 0), (-1, 0), (0, 1, 2)]


def _reduction_cases() -> list[OpCase]:
    cases = []
    for name, fn, th in (("sum", O.sum, torch_sum), ("mean", O.mean, torch_mean)):
        for axis in AXES:
            for keep in (False, True):
                cases.append(
                    _case(
                        f"{name}-axis={axis}-keep={keep}",
                        name,
                        lambda x, f=fn, a=axis, k=keep: f(x, axis=a, keepdims=k),
                        lambda t, f=th, a=axis, k=keep: f(t, a, k),
                        (2, 3, 4),
                    )
                )
        cases.append(_case(f"{name}-scalar", name, fn, th, ()))
        cases.append(
            _case(
                f"{name}-vector", name, lambda x, f=fn: f(x, axis=0), lambda t, f=th: f(t, 0), (5,)
            )
        )
        cases.append(
            _case(
                f"{name}-method",
                name,
                lambda x, m=name: getattr(x, m)(axis=1),
                lambda t, f=th: f(t, 1),
                (2, 3),
            )
        )
    return cases


def _view_cases() -> list[OpCase]:
    cases = []
    for shape in [(-1,), (4, -1), (-1, 2, 3), (24,), (2, 12), (1, 24, 1), (6, 4)]:
        cases.append(
            _case(
                f"reshape-{shape}",
                "reshape",
                lambda x, s=shape: O.reshape(x, s),
                lambda t, s=shape: t.reshape(s),
                (2, 3, 4),
            )
        )
    cases.append(
        _case(
            "reshape-method",
            "reshape",
            lambda x: x.reshape((3, -1)),
            lambda t: t.reshape(3, -1),
            (2, 3),
        )
    )
    cases.append(
        _case(
            "reshape-scalar",
            "reshape",
            lambda x: O.reshape(x, (1, 1)),
            lambda t: t.reshape(1, 1),
            (),
        )
    )
    for axes in [None, (1, 0, 2), (2, 0, 1), (0, 2, 1), (-1, 0, 1), (0, 1, 2)]:
        cases.append(
            _case(
                f"transpose-{axes}",
                "transpose",
                lambda x, a=axes: O.transpose(x, a),
                lambda t, a=axes: torch_transpose(t, a),
                (2, 3, 4),
            )
        )
    cases.append(_case("transpose-.T-2d", "transpose", lambda x: x.T, lambda t: t.T, (2, 3)))
    cases.append(
        _case(
            "transpose-.T-3d", "transpose", lambda x: x.T, lambda t: torch_transpose(t), (2, 3, 4)
        )
    )
    cases.append(
        _case(
            "transpose-method",
            "transpose",
            lambda x: x.transpose((1, 0)),
            lambda t: t.permute(1, 0),
            (2, 3),
        )
    )
    keys: list[Any] = [
        0,
        -1,
        2,
        slice(1, 3),
        slice(None, None, 2),
        slice(None, None, -1),
        slice(-1, 0, -2),
        (0, 1),
        (-1, -2, -3),
        (slice(None), 1),
        (slice(None), slice(1, None), 0),
        (1, slice(None, None, -1)),
        (slice(0, 2), slice(None), slice(1, 4, 2)),
    ]
    for key in keys:
        cases.append(
            _case(
                f"index-{key}",
                "index",
                lambda x, k=key: x[k],
                lambda t, k=key: torch_index(t, k),
                (3, 3, 4),
            )
        )
    cases.append(
        _case(
            "index-fn", "index", lambda x: O.index(x, (1, slice(0, 2))), lambda t: t[1, 0:2], (3, 4)
        )
    )
    cases.append(_case("index-vector", "index", lambda x: x[3], lambda t: t[3], (5,)))
    return cases


def _softmax_cases() -> list[OpCase]:
    cases = []
    for name, fn, th in (
        ("softmax", O.softmax, torch.softmax if torch else None),
        ("log_softmax", O.log_softmax, torch.log_softmax if torch else None),
    ):
        cases.append(
            _case(f"{name}-vector", name, fn, lambda t, f=th: f(t, -1), (5,), domain=(-3.0, 3.0))
        )
        for axis in (0, 1, 2, -1, -2):
            cases.append(
                _case(
                    f"{name}-axis={axis}",
                    name,
                    lambda x, f=fn, a=axis: f(x, axis=a),
                    lambda t, f=th, a=axis: f(t, a),
                    (2, 3, 4),
                    domain=(-3.0, 3.0),
                )
            )
        cases.append(
            _case(
                f"{name}-method",
                name,
                lambda x, m=name: getattr(x, m)(axis=0),
                lambda t, f=th: f(t, 0),
                (3, 2),
            )
        )
        cases.append(
            _case(
                f"{name}-large",
                name,
                fn,
                lambda t, f=th: f(t, -1),
                (4,),
                fixed=[[1000.0, 999.0, -1000.0, 998.5]],
            )
        )
    return cases


def _loss_cases() -> list[OpCase]:
    cases = [
        _case(
            "cross_entropy-C-int",
            "cross_entropy",
            lambda z: O.cross_entropy(z, 2),
            lambda t: torch_cross_entropy(t, 2),
            (4,),
            domain=(-3.0, 3.0),
        ),
        _case(
            "cross_entropy-C-int0",
            "cross_entropy",
            lambda z: O.cross_entropy(z, 0),
            lambda t: torch_cross_entropy(t, 0),
            (3,),
            domain=(-3.0, 3.0),
        ),
        _case(
            "cross_entropy-NC",
            "cross_entropy",
            lambda z: O.cross_entropy(z, [0, 2, 1, 2, 4]),
            lambda t: torch_cross_entropy(t, [0, 2, 1, 2, 4]),
            (5, 5),
            domain=(-3.0, 3.0),
        ),
        _case(
            "cross_entropy-NC-tuple",
            "cross_entropy",
            lambda z: O.cross_entropy(z, (1, 1)),
            lambda t: torch_cross_entropy(t, [1, 1]),
            (2, 3),
            domain=(-3.0, 3.0),
        ),
        _case(
            "cross_entropy-1xC",
            "cross_entropy",
            lambda z: O.cross_entropy(z, [2]),
            lambda t: torch_cross_entropy(t, [2]),
            (1, 4),
            domain=(-3.0, 3.0),
        ),
        _case(
            "cross_entropy-large-logits",
            "cross_entropy",
            lambda z: O.cross_entropy(z, [0, 1]),
            lambda t: torch_cross_entropy(t, [0, 1]),
            (2, 3),
            fixed=[[[800.0, 799.0, -800.0], [0.5, 700.0, 701.0]]],
        ),
    ]
    for sa, sb in [
        ((), ()),
        ((4,), (4,)),
        ((2, 3), (2, 3)),
        ((2, 3, 4), (3, 1)),
        ((3,), (2, 3)),
        ((2, 1), (1, 3)),
    ]:
        cases.append(_case(f"mse-{sa}-{sb}", "mse", O.mse, torch_mse, sa, sb))
    return cases


def op_cases() -> list[OpCase]:
    return (
        _binary_cases()
        + _unary_cases()
        + _matmul_cases()
        + _reduction_cases()
        + _view_cases()
        + _softmax_cases()
        + _loss_cases()
    )


# --- building an op case -----------------------------------------------------------------------


def upstream_for(out_shape: tuple[int, ...], seed: int = 1) -> np.ndarray:
    """A random upstream gradient, so the whole vector–Jacobian product is tested (with ones,
    softmax's gradient would be 0 and many mistakes would hide)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, size=out_shape) * rng.choice([-1.0, 1.0], size=out_shape)


def engine_value_and_grads(case: OpCase, arrays: Sequence[np.ndarray], w: np.ndarray | None = None):
    """Run the case in the engine: its output, and each input's grad of sum(out · w)."""
    from engine.autograd.backward import backward

    leaves = [leaf(a.copy(), name=f"in{i}") for i, a in enumerate(arrays)]
    out = case.eng(*leaves)
    if w is None:
        w = upstream_for(out.data.shape)
    loss = O.sum(O.mul(out, constant(w)))
    backward(loss)
    return out.data.copy(), [engine_grad(x) for x in leaves], w


def torch_value_and_grads(case: OpCase, arrays: Sequence[np.ndarray], w: np.ndarray):
    ts = [tensor(a) for a in arrays]
    out = case.th(*ts)
    out.backward(torch.as_tensor(w, dtype=torch.float64))
    return out.detach().numpy().copy(), [grad_of(t) for t in ts]


# --- random programs ---------------------------------------------------------------------------


@dataclass
class Leaf:
    name: str
    value: np.ndarray


@dataclass
class Instr:
    op: str
    args: tuple[Any, ...]  # int: an earlier entry; float: a constant written in the program
    params: dict[str, Any] = field(default_factory=dict)
    inline: bool = False  # in source text, written inside its only user instead of named


@dataclass
class Program:
    entries: list[Leaf | Instr]
    leaves_as_literals: bool = False  # in source text: `x0 = [...]` rather than `values=`
    bare_output: bool = False  # in source text: the last statement is a bare expression

    @property
    def leaves(self) -> list[Leaf]:
        return [e for e in self.entries if isinstance(e, Leaf)]

    def users(self) -> list[int]:
        """How many op edges use each entry (x*x counts twice)."""
        count = [0] * len(self.entries)
        for e in self.entries:
            if isinstance(e, Instr):
                for a in e.args:
                    if isinstance(a, int):
                        count[a] += 1
        return count

    def has_fanout(self) -> bool:
        """Some value feeds two or more op edges on the way to the output."""
        live = self.live()
        count = [0] * len(self.entries)
        for i, e in enumerate(self.entries):
            if isinstance(e, Instr) and live[i]:
                for a in e.args:
                    if isinstance(a, int):
                        count[a] += 1
        return any(c > 1 for c in count)

    def live(self) -> list[bool]:
        """Which entries the output depends on."""
        live = [False] * len(self.entries)
        live[-1] = True
        for i in range(len(self.entries) - 1, -1, -1):
            e = self.entries[i]
            if live[i] and isinstance(e, Instr):
                for a in e.args:
                    if isinstance(a, int):
                        live[a] = True
        return live

    def describe(self) -> str:
        lines = []
        for i, e in enumerate(self.entries):
            if isinstance(e, Leaf):
                lines.append(f"[{i}] leaf {e.name} shape={e.value.shape}")
            else:
                lines.append(f"[{i}] {e.op}{e.args} {e.params}")
        return "\n".join(lines)


@dataclass(frozen=True)
class ProgOp:
    """How one op of a program is computed in NumPy (to steer generation), built in the engine,
    built in torch and written in the language."""

    np: Callable[[list[Any], dict[str, Any]], np.ndarray]
    eng: Callable[[list[Any], dict[str, Any]], Value]
    th: Callable[[list[Any], dict[str, Any]], Any]
    src: Callable[[list[str], dict[str, Any]], str]


def _unary_np(
    fn: Callable[[np.ndarray], np.ndarray],
) -> Callable[[list[Any], dict[str, Any]], np.ndarray]:
    return lambda a, p: fn(np.asarray(a[0]))


def _unary_src(name: str) -> Callable[[list[str], dict[str, Any]], str]:
    def src(a: list[str], p: dict[str, Any]) -> str:
        return f"{a[0]}.{name}()" if p.get("method") else f"{name}({a[0]})"

    return src


def _unary_eng(
    name: str, fn: Callable[[Any], Value]
) -> Callable[[list[Any], dict[str, Any]], Value]:
    def eng(a: list[Any], p: dict[str, Any]) -> Value:
        return getattr(a[0], name)() if p.get("method") else fn(a[0])

    return eng


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _np_softmax(z: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _np_log_softmax(z: np.ndarray, axis: int) -> np.ndarray:
    s = z - z.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def _np_cross_entropy(z: np.ndarray, labels: Any) -> np.ndarray:
    lp = _np_log_softmax(z, -1)
    if z.ndim == 1:
        return np.asarray(-lp[labels])
    return np.asarray(-lp[np.arange(z.shape[0]), list(labels)].mean())


def _axis_src(p: dict[str, Any]) -> str:
    parts = []
    if p.get("axis") is not None:
        parts.append(f"axis={p['axis']!r}")
    if p.get("keepdims"):
        parts.append("keepdims=True")
    return ", ".join(parts)


def _reduce_src(name: str) -> Callable[[list[str], dict[str, Any]], str]:
    def src(a: list[str], p: dict[str, Any]) -> str:
        extra = _axis_src(p)
        if p.get("method"):
            return f"{a[0]}.{name}({extra})"
        return f"{name}({a[0]}{', ' + extra if extra else ''})"

    return src


def _reduce_eng(
    fn: Callable[..., Value], name: str
) -> Callable[[list[Any], dict[str, Any]], Value]:
    def eng(a: list[Any], p: dict[str, Any]) -> Value:
        if p.get("method"):
            return getattr(a[0], name)(axis=p.get("axis"), keepdims=p.get("keepdims", False))
        return fn(a[0], axis=p.get("axis"), keepdims=p.get("keepdims", False))

    return eng


def _key_src(key: tuple[Any, ...]) -> str:
    def one(k: Any) -> str:
        if isinstance(k, int):
            return str(k)
        s = (
            ("" if k.start is None else str(k.start))
            + ":"
            + ("" if k.stop is None else str(k.stop))
        )
        return s + ("" if k.step is None else f":{k.step}")

    return ", ".join(one(k) for k in key)


def _transpose_src(a: list[str], p: dict[str, Any]) -> str:
    if p.get("dot_t"):
        return f"{a[0]}.T"
    if p.get("axes") is None:
        return f"transpose({a[0]})"
    return f"transpose({a[0]}, axes={tuple(p['axes'])!r})"


def _transpose_eng(a: list[Any], p: dict[str, Any]) -> Value:
    if p.get("dot_t"):
        return a[0].T
    return O.transpose(a[0], p.get("axes"))


def _transpose_np(a: list[Any], p: dict[str, Any]) -> np.ndarray:
    x = np.asarray(a[0])
    axes = None if p.get("axes") is None else tuple(p["axes"])
    return np.transpose(x, axes)


PROGRAM_OPS: dict[str, ProgOp] = {
    "add": ProgOp(
        lambda a, p: np.add(a[0], a[1]),
        lambda a, p: a[0] + a[1],
        lambda a, p: a[0] + a[1],
        lambda a, p: f"{a[0]} + {a[1]}",
    ),
    "sub": ProgOp(
        lambda a, p: np.subtract(a[0], a[1]),
        lambda a, p: a[0] - a[1],
        lambda a, p: a[0] - a[1],
        lambda a, p: f"{a[0]} - {a[1]}",
    ),
    "mul": ProgOp(
        lambda a, p: np.multiply(a[0], a[1]),
        lambda a, p: a[0] * a[1],
        lambda a, p: a[0] * a[1],
        lambda a, p: f"{a[0]} * {a[1]}",
    ),
    "div": ProgOp(
        lambda a, p: np.divide(a[0], a[1]),
        lambda a, p: a[0] / a[1],
        lambda a, p: a[0] / a[1],
        lambda a, p: f"{a[0]} / {a[1]}",
    ),
    "pow": ProgOp(
        lambda a, p: np.power(a[0], a[1]),
        lambda a, p: a[0] ** a[1],
        lambda a, p: a[0] ** a[1],
        lambda a, p: f"{a[0]} ** {a[1]}",
    ),
    "max": ProgOp(
        lambda a, p: np.maximum(a[0], a[1]),
        lambda a, p: O.maximum(a[0], a[1]),
        lambda a, p: torch.maximum(a[0], a[1]),
        lambda a, p: f"max({a[0]}, {a[1]})",
    ),
    "min": ProgOp(
        lambda a, p: np.minimum(a[0], a[1]),
        lambda a, p: O.minimum(a[0], a[1]),
        lambda a, p: torch.minimum(a[0], a[1]),
        lambda a, p: f"min({a[0]}, {a[1]})",
    ),
    "neg": ProgOp(
        _unary_np(np.negative), lambda a, p: -a[0], lambda a, p: -a[0], lambda a, p: f"-{a[0]}"
    ),
    "exp": ProgOp(
        _unary_np(np.exp), _unary_eng("exp", O.exp), lambda a, p: torch.exp(a[0]), _unary_src("exp")
    ),
    "log": ProgOp(
        _unary_np(np.log), _unary_eng("log", O.log), lambda a, p: torch.log(a[0]), _unary_src("log")
    ),
    "sqrt": ProgOp(
        _unary_np(np.sqrt),
        _unary_eng("sqrt", O.sqrt),
        lambda a, p: torch.sqrt(a[0]),
        _unary_src("sqrt"),
    ),
    "sin": ProgOp(
        _unary_np(np.sin), _unary_eng("sin", O.sin), lambda a, p: torch.sin(a[0]), _unary_src("sin")
    ),
    "cos": ProgOp(
        _unary_np(np.cos), _unary_eng("cos", O.cos), lambda a, p: torch.cos(a[0]), _unary_src("cos")
    ),
    "tanh": ProgOp(
        _unary_np(np.tanh),
        _unary_eng("tanh", O.tanh),
        lambda a, p: torch.tanh(a[0]),
        _unary_src("tanh"),
    ),
    "sigmoid": ProgOp(
        _unary_np(_np_sigmoid),
        _unary_eng("sigmoid", O.sigmoid),
        lambda a, p: torch.sigmoid(a[0]),
        _unary_src("sigmoid"),
    ),
    "relu": ProgOp(
        _unary_np(lambda x: np.maximum(x, 0.0)),
        _unary_eng("relu", O.relu),
        lambda a, p: torch.relu(a[0]),
        _unary_src("relu"),
    ),
    "abs": ProgOp(
        _unary_np(np.abs),
        _unary_eng("abs", O.absolute),
        lambda a, p: torch.abs(a[0]),
        _unary_src("abs"),
    ),
    "matmul": ProgOp(
        lambda a, p: np.matmul(a[0], a[1]),
        lambda a, p: a[0] @ a[1],
        lambda a, p: a[0] @ a[1],
        lambda a, p: f"{a[0]} @ {a[1]}",
    ),
    "sum": ProgOp(
        lambda a, p: np.asarray(
            np.sum(a[0], axis=p.get("axis"), keepdims=p.get("keepdims", False))
        ),
        _reduce_eng(O.sum, "sum"),
        lambda a, p: torch_sum(a[0], p.get("axis"), p.get("keepdims", False)),
        _reduce_src("sum"),
    ),
    "mean": ProgOp(
        lambda a, p: np.asarray(
            np.mean(a[0], axis=p.get("axis"), keepdims=p.get("keepdims", False))
        ),
        _reduce_eng(O.mean, "mean"),
        lambda a, p: torch_mean(a[0], p.get("axis"), p.get("keepdims", False)),
        _reduce_src("mean"),
    ),
    "reshape": ProgOp(
        lambda a, p: np.reshape(a[0], p["shape"]),
        lambda a, p: O.reshape(a[0], p["shape"]),
        lambda a, p: a[0].reshape(p["shape"]),
        lambda a, p: f"reshape({a[0]}, {tuple(p['shape'])!r})",
    ),
    "transpose": ProgOp(
        _transpose_np,
        _transpose_eng,
        lambda a, p: torch_transpose(a[0], p.get("axes")),
        _transpose_src,
    ),
    "index": ProgOp(
        lambda a, p: np.array(np.asarray(a[0])[p["key"]]),
        lambda a, p: a[0][p["key"]],
        lambda a, p: torch_index(a[0], p["key"]),
        lambda a, p: f"{a[0]}[{_key_src(p['key'])}]",
    ),
    "softmax": ProgOp(
        lambda a, p: _np_softmax(a[0], p["axis"]),
        lambda a, p: O.softmax(a[0], axis=p["axis"]),
        lambda a, p: torch.softmax(a[0], p["axis"]),
        lambda a, p: f"softmax({a[0]}, axis={p['axis']})",
    ),
    "log_softmax": ProgOp(
        lambda a, p: _np_log_softmax(a[0], p["axis"]),
        lambda a, p: O.log_softmax(a[0], axis=p["axis"]),
        lambda a, p: torch.log_softmax(a[0], p["axis"]),
        lambda a, p: f"log_softmax({a[0]}, axis={p['axis']})",
    ),
    "cross_entropy": ProgOp(
        lambda a, p: _np_cross_entropy(a[0], p["labels"]),
        lambda a, p: O.cross_entropy(a[0], p["labels"]),
        lambda a, p: torch_cross_entropy(a[0], p["labels"]),
        lambda a, p: f"cross_entropy({a[0]}, {p['labels']!r})",
    ),
    "mse": ProgOp(
        lambda a, p: np.asarray(np.mean((np.asarray(a[0]) - a[1]) ** 2)),
        lambda a, p: O.mse(a[0], a[1]),
        lambda a, p: torch_mse(a[0], a[1]),
        lambda a, p: f"mse({a[0]}, {a[1]})",
    ),
}

ELEMENTWISE_BINARY = ("add", "sub", "mul", "max", "min")
UNARY_OPS = ("neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs")
SCALAR_KINDS = ELEMENTWISE_BINARY + ("div", "pow_const", "pow_tensor") + UNARY_OPS
TENSOR_KINDS = SCALAR_KINDS + (
    "matmul", "sum", "mean", "reshape", "transpose", "index", "softmax", "log_softmax",
    "cross_entropy", "mse",
)  # fmt: skip

# Leaf shapes for tensor programs: chosen so that many pairs broadcast and some multiply.
TENSOR_SHAPES = [(), (3,), (2, 3), (2, 1), (1, 3), (3, 2), (4, 2, 3), (4, 1, 3), (2, 3, 1)]

BOUND = 1e3  # generated values stay within ±BOUND, so relative comparisons are meaningful
CONSTANTS = (0.5, 1.5, 2.0, 3.0)


class _Builder:
    """Grows a program, computing every value with NumPy to keep it finite and bounded."""

    def __init__(
        self, draw: Any, rng: np.random.Generator, leaf_range: tuple[float, float]
    ) -> None:
        self.draw = draw
        self.rng = rng
        self.leaf_range = leaf_range
        self.entries: list[Leaf | Instr] = []
        self.values: list[np.ndarray] = []

    # -- entries
    def leaf(self, shape: tuple[int, ...]) -> int:
        lo, hi = self.leaf_range
        value = np.asarray(self.rng.uniform(lo, hi, size=shape), dtype=np.float64)
        n = sum(isinstance(e, Leaf) for e in self.entries)
        self.entries.append(Leaf(f"x{n}", value))
        self.values.append(value)
        return len(self.entries) - 1

    def try_instr(
        self, op: str, args: tuple[Any, ...], params: dict[str, Any] | None = None
    ) -> int | None:
        params = params or {}
        arrays = [self.values[a] if isinstance(a, int) else a for a in args]
        with np.errstate(all="ignore"):
            try:
                value = np.asarray(PROGRAM_OPS[op].np(arrays, params), dtype=np.float64)
            except (ValueError, IndexError):
                return None
        if value.size == 0 or not np.all(np.isfinite(value)) or np.abs(value).max() > BOUND:
            return None
        self.entries.append(Instr(op, args, params))
        self.values.append(value)
        return len(self.entries) - 1

    def instr(self, op: str, args: tuple[Any, ...], params: dict[str, Any] | None = None) -> int:
        i = self.try_instr(op, args, params)
        assert i is not None, (op, args, params)
        return i

    def scalar(self, i: int, params: dict[str, Any] | None = None) -> int:
        """The sum of a value, or its mean when the sum would leave the bound."""
        j = self.try_instr("sum", (i,), params)
        return j if j is not None else self.instr("mean", (i,), params)

    # -- choices
    def pick(self, where: Callable[[np.ndarray], bool] = lambda v: True) -> int | None:
        ok = [i for i, v in enumerate(self.values) if where(v)]
        if not ok:
            return None
        if len(ok) > 3 and self.draw(st.booleans()):
            ok = ok[-3:]  # prefer recent values: deeper chains
        return ok[self.draw(st.integers(0, len(ok) - 1))]

    def fold_sinks(self) -> None:
        """Make every value feed the output: add each op result nothing uses into the last one
        (broadcasting when the shapes allow, else through its sum)."""
        users = Program(self.entries).users()
        last = len(self.entries) - 1
        sinks = [
            i for i, e in enumerate(self.entries[:-1]) if isinstance(e, Instr) and users[i] == 0
        ]
        acc = last
        for i in sinks:
            sv, av = self.values[i], self.values[acc]
            op = self.draw(st.sampled_from(("add", "sub", "mul")))
            if _bc(sv.shape, av.shape) and np.broadcast_shapes(sv.shape, av.shape) == av.shape:
                j = self.try_instr(op, (acc, i))
            else:
                j = self.try_instr(op, (acc, self.scalar(i)))
            if j is not None:
                acc = j

    def positive(self, i: int) -> int:
        """A value that is positive everywhere: i itself if it is (≥ 0.1), else i*i + 1."""
        if np.all(self.values[i] >= 0.1) and self.draw(st.booleans()):
            return i
        sq = self.try_instr("mul", (i, i))
        if sq is None:  # too large to square: squash it first
            t = self.instr("tanh", (i,), {"method": False})
            sq = self.instr("mul", (t, t))
        return self.instr("add", (sq, 1.0))

    def operand(self, shape: tuple[int, ...]) -> Any:
        """A constant (sometimes) or a pool value whose shape broadcasts with `shape`."""
        if self.draw(st.integers(0, 4)) == 0:
            return self.draw(st.sampled_from(CONSTANTS))

        def fits(v: np.ndarray) -> bool:
            try:
                np.broadcast_shapes(v.shape, shape)
                return True
            except ValueError:
                return False

        return self.pick(fits)

    # -- one op (may add helper nodes first); None when it did not fit
    def add_op(self, kind: str) -> int | None:
        d = self.draw
        x = self.pick()
        assert x is not None
        xv = self.values[x]
        if kind in ELEMENTWISE_BINARY:
            other = self.operand(xv.shape)
            args = (other, x) if d(st.booleans()) else (x, other)
            return self.try_instr(kind, args)
        if kind == "div":
            den = self.pick(lambda v: _bc(v.shape, xv.shape))
            assert den is not None
            if d(st.integers(0, 4)) == 0:
                return self.try_instr("div", (d(st.sampled_from(CONSTANTS)), self.positive(den)))
            return self.try_instr("div", (x, self.positive(den)))
        if kind == "pow_const":
            c = d(st.sampled_from((2.0, 3.0, 0.5, -1.0)))
            base = self.positive(x) if c in (0.5, -1.0) else x
            return self.try_instr("pow", (base, c))
        if kind == "pow_tensor":
            base = self.positive(x)
            e = self.pick(
                lambda v: _bc(v.shape, self.values[base].shape) and np.abs(v).max() <= 3.0
            )
            if e is None:
                return None
            if d(st.integers(0, 4)) == 0:
                return self.try_instr("pow", (d(st.sampled_from((1.5, 2.0))), e))
            return self.try_instr("pow", (base, e))
        if kind in ("log", "sqrt"):
            return self.try_instr(kind, (self.positive(x),), {"method": d(st.booleans())})
        if kind in UNARY_OPS:
            limit = {"exp": 5.0, "tanh": 4.0, "sigmoid": 6.0, "sin": 20.0, "cos": 20.0}.get(kind)
            if limit is not None and np.abs(xv).max() > limit:
                return None
            params = {} if kind == "neg" else {"method": d(st.booleans())}
            return self.try_instr(kind, (x,), params)
        if kind == "matmul":
            return self.matmul()
        if kind in ("sum", "mean"):
            params: dict[str, Any] = {"method": d(st.booleans()), "keepdims": d(st.booleans())}
            nd = xv.ndim
            if nd and d(st.integers(0, 3)):
                if d(st.booleans()):
                    params["axis"] = d(st.integers(-nd, nd - 1))
                else:
                    axes = d(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
                    params["axis"] = tuple(a - nd if d(st.booleans()) else a for a in axes)
            return self.try_instr(kind, (x,), params)
        if kind == "reshape":
            size = xv.size
            shapes = (
                [(-1,), (1, -1), (-1, 1), (size,)]
                + [(k, -1) for k in range(2, size + 1) if size % k == 0]
                + [(-1, k, 1) for k in range(2, size + 1) if size % k == 0]
            )
            return self.try_instr("reshape", (x,), {"shape": d(st.sampled_from(shapes))})
        if kind == "transpose":
            nd = xv.ndim
            if nd == 0:
                return None
            choice = d(st.integers(0, 2))
            if choice == 0:
                return self.try_instr("transpose", (x,), {"dot_t": True})
            if choice == 1:
                return self.try_instr("transpose", (x,), {"axes": None})
            perm = d(st.permutations(range(nd)))
            return self.try_instr(
                "transpose", (x,), {"axes": tuple(a - nd if d(st.booleans()) else a for a in perm)}
            )
        if kind == "index":
            nd = xv.ndim
            if nd == 0:
                return None
            key = []
            for n in xv.shape[: d(st.integers(1, nd))]:
                if d(st.booleans()):
                    key.append(d(st.integers(-n, n - 1)))
                else:
                    start = d(st.one_of(st.none(), st.integers(-n, n - 1)))
                    stop = d(st.one_of(st.none(), st.integers(-n, n)))
                    step = d(st.sampled_from((None, 1, 2, -1, -2)))
                    key.append(slice(start, stop, step))
            return self.try_instr("index", (x,), {"key": tuple(key)})
        if kind in ("softmax", "log_softmax"):
            nd = xv.ndim
            if nd == 0:
                return None
            return self.try_instr(kind, (x,), {"axis": d(st.integers(-nd, nd - 1))})
        if kind == "cross_entropy":
            if xv.ndim not in (1, 2):
                return None
            c = xv.shape[-1]
            if xv.ndim == 1:
                labels: Any = d(st.integers(0, c - 1))
            else:
                labels = d(
                    st.lists(st.integers(0, c - 1), min_size=xv.shape[0], max_size=xv.shape[0])
                )
            return self.try_instr("cross_entropy", (x,), {"labels": labels})
        if kind == "mse":
            y = self.pick(lambda v: _bc(v.shape, xv.shape))
            return self.try_instr("mse", (x, y) if d(st.booleans()) else (y, x))
        raise AssertionError(kind)

    def matmul(self) -> int | None:
        d = self.draw
        p = self.pick(lambda v: v.ndim >= 1)
        if p is None:
            p = self.leaf(d(st.sampled_from([(3,), (2, 3), (4, 2, 3)])))
        ps = self.values[p].shape
        left = d(st.booleans())
        m = d(st.integers(1, 3))
        batch = ps[:-2] if len(ps) > 2 else ()
        if left:  # p @ q: q has p's last dim as its rows
            k = ps[-1]
            options = [(k,), (k, m), (4, k, m), (1, k, m), (5, 1, k, m)]
        else:  # q @ p: q has p's rows as its last dim
            k = ps[0] if len(ps) == 1 else ps[-2]
            options = [(k,), (m, k), (4, m, k), (1, m, k), (5, 1, m, k)]
        options = [s for s in options if _bc(s[:-2], batch)]
        shape = d(st.sampled_from(options))
        same = [i for i, v in enumerate(self.values) if v.shape == shape]
        if same and d(st.booleans()):
            q = same[d(st.integers(0, len(same) - 1))]
        else:
            q = self.leaf(shape)
        return self.try_instr("matmul", (p, q) if left else (q, p))


def _bc(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


@st.composite
def programs(
    draw: Any,
    tensors: bool = True,
    min_ops: int = 1,
    max_ops: int = 8,
    kinds: Sequence[str] | None = None,
    leaf_range: tuple[float, float] = (-2.0, 2.0),
    reduce_output: bool | None = None,
    fold: bool = True,
) -> Program:
    """A random program: 1–3 leaves, then `min_ops`…`max_ops` ops drawn from `kinds`, each using
    any earlier value (so values fan out and subexpressions are shared), constants sometimes.

    Tensor programs draw leaf shapes that broadcast against each other and add matmul partners
    as needed. `reduce_output` ends with a sum to a scalar (None: sometimes). `fold` (most of the
    time) folds every otherwise unused result into the output, so little of the program is dead.
    """
    kinds = tuple(kinds or (TENSOR_KINDS if tensors else SCALAR_KINDS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    b = _Builder(draw, rng, leaf_range)
    for _ in range(draw(st.integers(1, 3))):
        b.leaf(draw(st.sampled_from(TENSOR_SHAPES)) if tensors else ())
    n_ops = draw(st.integers(min_ops, max_ops))
    made = 0
    attempts = 0
    while made < n_ops and attempts < 4 * n_ops + 4:
        attempts += 1
        kind = draw(st.sampled_from(kinds))
        if b.add_op(kind) is not None:
            made += 1
    if made == 0 or not isinstance(b.entries[-1], Instr):
        # Guarantee the output is an op that depends on a leaf.
        last = len(b.entries) - 1
        b.instr("mul", (last, 2.0))
    if fold and draw(st.integers(0, 3)):
        b.fold_sinks()
    if tensors:
        reduce = draw(st.booleans()) if reduce_output is None else reduce_output
        if reduce and b.values[-1].ndim:
            b.scalar(len(b.entries) - 1, {"method": draw(st.booleans())})
    # Source-text choices: inline single-use values, literal leaves, a bare last expression.
    users = Program(b.entries).users()
    for i, e in enumerate(b.entries[:-1]):
        if isinstance(e, Instr) and users[i] == 1:
            e.inline = draw(st.booleans())
    return Program(
        b.entries, leaves_as_literals=draw(st.booleans()), bare_output=draw(st.booleans())
    )


# --- building a program --------------------------------------------------------------------------


def build_engine(prog: Program) -> tuple[list[Value], Value, list[Value]]:
    """The program through the engine's Python API: (leaves, output, every node made)."""
    made: list[Value] = []
    leaves: list[Value] = []
    for e in prog.entries:
        if isinstance(e, Leaf):
            v = leaf(e.value.copy(), name=e.name)
            leaves.append(v)
        else:
            args = [made[a] if isinstance(a, int) else a for a in e.args]
            v = PROGRAM_OPS[e.op].eng(args, e.params)
        made.append(v)
    return leaves, made[-1], made


def build_torch(prog: Program) -> tuple[list[Any], Any]:
    made: list[Any] = []
    leaves: list[Any] = []
    for e in prog.entries:
        if isinstance(e, Leaf):
            t = tensor(e.value)
            leaves.append(t)
        else:
            args = [
                made[a] if isinstance(a, int) else tensor(a, requires_grad=False) for a in e.args
            ]
            t = PROGRAM_OPS[e.op].th(args, e.params)
        made.append(t)
    return leaves, made[-1]


def torch_reference(prog: Program) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Output value and every leaf's grad in torch (a non-scalar output is seeded with ones)."""
    leaves, out = build_torch(prog)
    out.backward(torch.ones_like(out))
    names = [e.name for e in prog.leaves]
    return out.detach().numpy().copy(), {n: grad_of(t) for n, t in zip(names, leaves, strict=True)}


def literal(a: np.ndarray) -> str:
    """A value as the language writes it: a number or nested lists (repr round-trips floats)."""
    return repr(float(a)) if a.ndim == 0 else repr(a.tolist())


def to_source(prog: Program) -> tuple[str, dict[str, Any] | None]:
    """The program as source text, and the values of its free names (None if all are bound)."""
    lines: list[str] = []
    values: dict[str, Any] = {}
    text: dict[int, str] = {}
    users = prog.users()
    for i, e in enumerate(prog.entries):
        if isinstance(e, Leaf):
            text[i] = e.name
            # A leaf no op uses is not a free name of the text: it must be bound to a literal.
            if prog.leaves_as_literals or users[i] == 0:
                lines.append(f"{e.name} = {literal(e.value)}")
            else:
                values[e.name] = e.value.tolist()
    last = len(prog.entries) - 1
    for i, e in enumerate(prog.entries):
        if not isinstance(e, Instr):
            continue
        args = [text[a] if isinstance(a, int) else repr(float(a)) for a in e.args]
        expr = PROGRAM_OPS[e.op].src(args, e.params)
        if i == last:
            lines.append(expr if prog.bare_output else f"out = {expr}")
        elif e.inline:
            text[i] = f"({expr})"
        else:
            text[i] = f"v{i}"
            lines.append(f"v{i} = {expr}")
    return "\n".join(lines) + "\n", (values or None)


# --- small helpers for tests ----------------------------------------------------------------------


def finite_float(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def isclose(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
