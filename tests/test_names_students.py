"""The names students reach for (issue 25, item 5): torch.add/sub/mul/div/eye, F.mse_loss,
F.cross_entropy, F.binary_cross_entropy(_with_logits), F.softmax, F.log_softmax, a max or min
over an axis with PyTorch's (values, indices), argmax/argmin, torch.where and jnp.where,
jnp.asarray, jnp.eye, np.random.random/uniform/normal. Each PyTorch program is run as it is
by real torch 2.13 (float64) beside gradtrace: the same lines printed, the same grads; the JAX
ones against jax.grad; refusals at their line and column."""

from __future__ import annotations

import numpy as np
import pytest

from engine import ProgramError, run_program
from tests.test_differential_torch import run_torch

torch = pytest.importorskip("torch")

X = "x = torch.tensor([[0.2, -0.7, 1.5], [3.0, 1.0, -2.0]], requires_grad=True)\n"
HEAD = "import torch\nimport torch.nn.functional as F\n" + X

PROGRAMS = {
    "add": "y = torch.add(x, 2)\nprint(y)\nL = torch.sub(torch.mul(y, x), torch.div(x, 4)).sum()",
    "eye": "E = torch.eye(3)\nprint(E)\nL = (x @ E).sum()",
    "mse_loss": "L = F.mse_loss(x, torch.zeros(2, 3))\nprint(L)",
    "cross_entropy": "L = F.cross_entropy(x, torch.tensor([2, 0]))\nprint(L)",
    "bce": "p = torch.sigmoid(x)\nt = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])\n"
    "L = F.binary_cross_entropy(p, t)\nprint(L)",
    "bce_sum": "p = torch.sigmoid(x)\nL = F.binary_cross_entropy(p, torch.ones(2, 3), "
    "reduction='sum')\nprint(L)",
    "bce_logits": "t = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])\n"
    "L = F.binary_cross_entropy_with_logits(x, t)\nprint(L)",
    "softmax": "s = F.softmax(x, dim=1)\nprint(s)\n"
    "L = (s[:, 0] * F.log_softmax(x, dim=1)[:, 1]).sum()",
    "max_dim": "v, i = torch.max(x, dim=1)\nprint(v)\nprint(i)\nL = v.sum()",
    "max_method": "r = x.max(0)\nprint(r)\nprint(r.values, r.indices)\nL = (r.values * 2).sum()",
    "min_keepdim": "v, i = torch.min(x, 1, keepdim=True)\nprint(v)\nprint(i)\nL = (v * x).sum()",
    "argmax": "print(torch.argmax(x, dim=1))\nprint(x.argmin())\nprint(torch.argmax(x))\n"
    "L = x.sum()",
    "max_all": "m = torch.max(x)\nprint(m)\nL = m * 3",
    "max_two": "L = torch.max(x, torch.zeros(2, 3)).sum()\nprint(L)",
    "where": "y = torch.where(x > 0, x, 0.1 * x)\nprint(y)\nL = y.sum()",
    "normal_": "torch.set_default_dtype(torch.float64)\ntorch.manual_seed(0)\n"
    "w = torch.zeros(3)\nw.normal_()\nprint(w)\nL = (x * w).sum()",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_name_runs_as_torch_runs_it(name: str) -> None:
    source = HEAD + PROGRAMS[name] + "\nL.backward()"
    ours = run_program(source)
    ref = run_torch(source, ["x"])
    assert ref.error is None, ref.error
    assert [p["text"] for p in ours.printed] == [s.text for s in ref.shown]
    got = ours.trace.to_dict()["grads"]["x"]
    np.testing.assert_allclose(got, ref.grads["x"], rtol=1e-12, atol=1e-12)


def test_max_over_the_last_axis_of_a_3d_tensor_and_its_grad() -> None:
    source = (
        "import torch\nx = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()\n"
        "v, i = x.max(dim=2)\nprint(i)\nw, j = torch.min(x, -3)\nprint(j)\n"
        "L = (v + w.sum()).sum()\nL.backward()"
    )
    ours = run_program(source)
    ref = run_torch(source, ["x"])
    assert [p["text"] for p in ours.printed] == [s.text for s in ref.shown]
    np.testing.assert_allclose(ours.trace.to_dict()["grads"]["x"], ref.grads["x"])


jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@pytest.mark.parametrize(
    ("body", "f"),
    [
        ("jnp.sum(jnp.where(x > 0, x, 0.1 * x))", lambda x: jnp.sum(jnp.where(x > 0, x, 0.1 * x))),
        ("jnp.sum(jnp.max(x, axis=1))", lambda x: jnp.sum(jnp.max(x, axis=1))),
        ("jnp.sum(jnp.asarray([1.0, 2.0, 3.0]) * jnp.min(x, axis=0))",
         lambda x: jnp.sum(jnp.asarray([1.0, 2.0, 3.0]) * jnp.min(x, axis=0))),
        ("jnp.sum(x @ jnp.eye(3))", lambda x: jnp.sum(x @ jnp.eye(3))),
        ("jnp.max(x) * 2", lambda x: jnp.max(x) * 2),
    ],
)  # fmt: skip
def test_jax_names_give_jax_grad(body: str, f: object) -> None:
    data = [[0.2, -0.7, 1.5], [3.0, 1.0, -2.0]]
    source = f"import jax\nimport jax.numpy as jnp\ndef f(x):\n    return {body}\n" \
             f"x = jnp.array({data})\ng = jax.grad(f)(x)\nprint(g)"  # fmt: skip
    ours = run_program(source)
    with jax.enable_x64(True):  # float64 here only: the setting is global to the process
        want = jax.grad(f)(jnp.array(data))  # type: ignore[arg-type]
    got = ours.interpreter.env["g"]
    np.testing.assert_allclose(np.asarray(getattr(got, "data", got)), np.asarray(want))


def test_numpy_argmax_and_max_over_an_axis_are_numpys() -> None:
    r = run_program(
        "import numpy as np\nx = np.array([[0.2, 0.7], [3.0, 1.0]])\nprint(np.argmax(x, axis=1))\n"
        "print(np.max(x, axis=0))\nprint(np.amin(x, 1))\nL = np.sum(x)"
    )
    x = np.array([[0.2, 0.7], [3.0, 1.0]])
    assert [p["text"] for p in r.printed] == [
        str(np.argmax(x, axis=1)), str(np.max(x, axis=0)), str(np.amin(x, 1))
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "line", "column", "key"),
    [
        ("v = torch.max(x, 2)", 4, 5, "axis_out_of_range"),
        ("v = torch.argmax(x, dim=-3)", 4, 5, "axis_out_of_range"),
        ("v = F.binary_cross_entropy(torch.sigmoid(x), x, reduction='avg')", 4, 5,
         "reduction_value"),
        ("v = torch.max(x, 0, keepdim=1)", 4, 29, "keepdims_bool"),
        ("v = torch.where(x > 0, x)", 4, 5, "library_usage"),
    ],
)  # fmt: skip
def test_refusals_are_positioned(body: str, line: int, column: int, key: str) -> None:
    with pytest.raises(ProgramError) as info:
        run_program(HEAD + body + "\nL = x.sum()")
    e = info.value
    assert (e.line, e.column) == (line, column), e.message
    assert e.msg is not None and e.msg.key == key, e.message
