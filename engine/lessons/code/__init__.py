"""Lesson 7, the same program in PyTorch and JAX: generated code, runnable as shown, and the
lines it prints (the leaves' grads), with the `grad_fn` PyTorch gives each named result
(AddBackward0, MulBackward0, …) said in a comment.

The code is made from the parsed program (engine/language/ir.py), statement by statement, so
loops stay loops (translate.py; expressions in writer.py, names in names.py, grad_fn names in
grad_fns.py). Random leaves are drawn from NumPy's `default_rng(seed)` in program order, exactly
as gradtrace draws them, so the generated PyTorch code prints the same numbers.

The PyTorch code is also a gradtrace program: pasted back, it is the same graph with the same
grads, and what gradtrace prints for it (engine/language/printing.py, as PyTorch prints) is
the expected output given here — one source of truth (tests/test_round_trip.py; torch runs it
in tests/test_lessons_code.py). The JAX code is shown, not run in CI.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.value import Value
from engine.lessons.code.grad_fns import exprs_by_span, predict_grad_fn
from engine.lessons.code.names import GENERATED_NAMES, code_names
from engine.lessons.code.translate import Translation
from engine.library.printing import torch_text
from engine.program import Run

TORCH_HEAD = [
    "import numpy as np",
    "import torch",
    "import torch.nn.functional as F",
    "",
    "torch.set_default_dtype(torch.float64)  # gradtrace computes in float64",
    "rng = np.random.default_rng(0)  # randn/rand: NumPy's generator, drawn in program order",
    "",
]
JAX_NOTE = (
    "grad() inside a program is written with jax.grad of an inner function; this one is not "
    "generated"
)


def show_text(name: str, g: np.ndarray | None) -> str:
    """What the JAX code's loop prints for a grad g, rounded to 6 decimals."""
    if g is None:
        return f"{name} = None"
    return f"{name} = {(np.round(np.asarray(g, dtype=np.float64), 6) + 0.0).tolist()}"


def grad_line(name: str, g: np.ndarray) -> str:
    """What `print("x.grad =", x.grad)` prints in PyTorch for a leaf whose grad is g: the text
    gradtrace's own print gives it (engine/language/printing.py), so pasted back, the code
    prints these lines there too. A leaf that backward never reaches is not printed: PyTorch
    prints None, gradtrace's print in torch mode zeros (Trace.grad_of)."""
    return f"{name} = {torch_text(np.asarray(g, dtype=np.float64))}"


def code(run: Run) -> dict[str, Any]:
    """The program as PyTorch and JAX code, and the lines each prints when run."""
    by_span: dict[Any, Value] = {n.span: n for n in run.nodes if n.span is not None}
    t = Translation(run.program, by_span, code_names(run.program))
    t.free_names(run.program.free, {f["name"]: f for f in run.graph.free})
    t.statements(run.program.body, "", True)
    grads = leaf_grads(run, t)
    torch_tail, torch_expected = torch_ending(t, run.output, grads)
    jax_code = jax_text(t, run.output.data.ndim == 0) if t.jax_ok else None
    py = t.torch.name
    jax_expected = (  # jax.grad gives zeros for a parameter the output does not use
        [
            show_text(f"{py(name)}.grad", zeros_if_none(grads[name], run, name))
            for name in t.leaf_names
            if name in grads
        ]
        if run.output.requires_grad
        else []
    )
    return {
        "node_grad_fns": node_grad_fns(run),
        "torch": "\n".join(TORCH_HEAD + t.torch_lines + torch_tail) + "\n",
        "torch_output": "\n".join(torch_expected) + ("\n" if torch_expected else ""),
        "grad_fns": dict(t.named_ops),
        "jax": jax_code,
        "jax_output": "\n".join(jax_expected) + ("\n" if jax_expected else "")
        if jax_code
        else None,
        "jax_note": None if jax_code else JAX_NOTE,
    }


def zeros_if_none(g: Any, run: Run, name: str) -> Any:
    """A leaf's grad as jax.grad gives it: zeros where PyTorch's stays None."""
    if g is not None:
        return g
    leaf = next(n for n in run.nodes if n.kind == "leaf" and n.name == name)
    return np.zeros(leaf.data.shape)


def leaf_grads(run: Run, t: Translation) -> dict[str, Any]:
    """Program name -> grad, for the leaves that keep their name to the end (a rebound name is
    not a leaf), as PyTorch's backward() gives them: `+=`, in DFS order; None for a leaf that
    backward never reaches (PyTorch's .grad stays None there)."""
    grads: dict[str, Any] = {}
    with run.trace_with("add", "dfs"):
        for n in run.nodes:
            if (
                n.kind == "leaf"
                and n.name is not None
                and t.assigned.get(n.name, 0) <= 1
                and n.name in t.leaf_names
                and n.name not in grads
            ):
                grads[n.name] = n.grad
    return grads


def torch_ending(t: Translation, out: Value, grads: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The PyTorch script's last lines (backward, then the prints), and what they print."""
    name = t.output_name
    tail = [""]
    if not out.requires_grad:
        tail.append(f"# {name} does not depend on any parameter: nothing to backpropagate")
    elif t.seed is not None:  # the program's own L.backward(gradient=v)
        tail.append(f"{name}.backward(gradient={t.seed[0]})")
    elif out.data.ndim == 0:
        tail.append(f"{name}.backward()")
    else:
        tail.append(
            f"{name}.backward(torch.ones_like({name}))"
            "  # not a scalar: seed with ones, as gradtrace does"
        )
    # the grad_fn PyTorch gives each named result, as a comment: gradtrace does not print it
    tail += [f"# {op_name}.grad_fn is {predicted}" for op_name, predicted in t.named_ops]
    expected: list[str] = []
    if out.requires_grad:
        py = t.torch.name
        for leaf, g in grads.items():
            if g is None:  # PyTorch leaves it None; said as a comment (see grad_line)
                tail.append(f"# {py(leaf)}.grad is None: backward does not reach {py(leaf)}")
                continue
            tail.append(f'print("{py(leaf)}.grad =", {py(leaf)}.grad)')
            expected.append(grad_line(f"{py(leaf)}.grad", g))
    return tail, expected


def jax_text(t: Translation, scalar: bool) -> str:
    name = t.output_name
    return_line = (
        f"    return {name}"
        if scalar
        else f"    return jnp.sum({name})  # not a scalar: the same as seeding ones"
    )
    if t.seed is not None:  # backward(gradient=v) is the gradient of Σ out·v
        return_line = f"    return jnp.sum({name} * {t.seed[1]})"
    lines = [
        "import jax",
        "import jax.numpy as jnp",
        "import numpy as np",
        "",
        'jax.config.update("jax_enable_x64", True)  # float64, as gradtrace',
        "rng = np.random.default_rng(0)",
        "",
        "params = {",
        *t.jax_params,
        "}",
        "",
        "",
        "def f(params):",
        *t.jax_lines,
        return_line,
        "",
        "",
        "grads = jax.grad(f)(params)",
        "for name, g in grads.items():",
        '    print(name + ".grad =", (np.round(np.asarray(g), 6) + 0.0).tolist())',
    ]
    return "\n".join(lines) + "\n"


def node_grad_fns(run: Run) -> dict[str, str]:
    """Node id -> the grad_fn PyTorch gives it, for every op node whose name is predicted."""
    exprs = exprs_by_span(run.program.body)
    fns: dict[str, str] = {}
    for n in run.nodes:
        e = exprs.get(n.span)
        if n.op is not None and e is not None:
            fn = predict_grad_fn(n, e)
            if fn:
                fns[run.id(n)] = fn
    return fns


__all__ = ["GENERATED_NAMES", "code", "code_names"]
