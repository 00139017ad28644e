"""Lesson 7, the same program in PyTorch and JAX: generated code, runnable as shown, and the
lines it prints (the program's own prints, then the leaves' grads), with the `grad_fn`
PyTorch gives each named result (AddBackward0, MulBackward0, …) said in a comment.

The code is the program's own syntax tree written back (translate.py for statements, writer.py
for expressions, spellings.py, made.py and methods.py for what each framework calls things,
names.py for names, grad_fns.py for grad_fn names), so loops stay loops, defs stay defs and a
`backward()` call runs where the program calls it. What the syntax does not say (which names
became parameters, what was a number) the run says (facts.py). Random leaves are drawn from
NumPy's `default_rng(seed)` in program order, exactly as gradtrace draws them.

The PyTorch code is also a gradtrace program: pasted back, it is the same graph with the same
grads, and what gradtrace prints for it is the expected output given here — one source of
truth (tests/test_round_trip.py; torch runs it in tests/test_lessons_code.py). The JAX code,
written for programs of one backward pass, is shown, not run in CI.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

import numpy as np

from engine.errors import ProgramError
from engine.lessons.code.facts import Facts, binds_out, implicit_output
from engine.lessons.code.grad_fns import grad_fn_of
from engine.lessons.code.names import GENERATED_NAMES, code_names, program_names
from engine.lessons.code.text import TERM, floats_text, unwritable
from engine.lessons.code.translate import Translation, assignment_counts, leaf_bindings
from engine.lessons.code.writer import Context, Writer, import_aliases
from engine.library.printing import torch_text
from engine.limits import Limits
from engine.program import Run, run_program

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
    "JAX's code is written for a program of one backward pass without grad() inside it; this "
    "one's is not generated"
)


def code(run: Run) -> dict[str, Any]:
    """The program as PyTorch and JAX code, and the lines each prints when run."""
    ctx, out = context(run)
    displayed = {p["line"] for p in run.interpreter.printed if p.get("line") is not None}
    t = Translation(ctx, "torch", out, displayed)
    t.program()
    exact = as_pytorch(run)  # the run as PyTorch computes it: grads added, in DFS order
    grads = leaf_grads(exact, t)
    name = output_name(run, ctx, out)
    tail, expected = torch_ending(run, name, t, grads)
    torch_code = "\n".join(TORCH_HEAD + free_tensors(run, t.w) + t.lines + tail) + "\n"
    lines = [p["text"] for p in exact.printed] + expected
    if exact.printed and not run.scan.torch:  # printed as NumPy prints: PyTorch's print differs
        lines = [
            p["text"] for p in run_program(torch_code, limits=room_for(torch_code, run)).printed
        ]
    jax = jax_text(run, ctx, out, displayed, name, grads)
    jax_expected = jax[1] if jax is not None else None
    return {
        "node_grad_fns": node_grad_fns(run, ctx.built),
        "torch": torch_code,
        "torch_output": "".join(line + "\n" for line in lines),
        "grad_fns": dict(t.named),
        "jax": jax[0] if jax is not None else None,
        "jax_output": jax_expected,
        "jax_note": None if jax is not None else JAX_NOTE,
    }


def context(run: Run) -> tuple[Context, bool]:
    facts = Facts(run)
    tree = run.source.tree
    built = {n.seq for g in run.grads_built for n in g["nodes"]}
    names = code_names(run, facts)
    counts = (assignment_counts(tree.body), assignment_counts(tree.body, augmented=False))
    ctx = Context(run.source, run.scan, facts, names, import_aliases(tree), program_names(run.scan),
                  built, counts)  # fmt: skip
    return ctx, binds_out(run, facts)


def as_pytorch(run: Run) -> Run:
    """The run whose grads and prints PyTorch's are: this one when it adds grads in DFS
    order, else the same program run again so (the page may show `=` or Kahn's order)."""
    if (run.accumulate, run.order) == ("add", "dfs"):
        return run
    return run_program(run.source.text, run.interpreter.values, "add", "dfs", run.limits)


def room_for(text: str, run: Run) -> Limits:
    """The run's limits, with room for the generated code's text (it writes out the values
    given for the free names, and may be longer than the program)."""
    return replace(run.limits, max_source_chars=max(run.limits.max_source_chars, len(text)))


def leaf_grads(exact: Run, t: Translation) -> dict[str, Any]:
    """Name in the code -> grad at the end of the run, for each leaf a name holds at the end
    and that is named once (the free names first); None where PyTorch's .grad is None."""
    it = exact.interpreter
    bound = leaf_bindings(it.env, it.registered)
    by_name = {name: seq for seq, name in bound.items()}
    free = [f["name"] for f in exact.free if not f.get("labels") and f["name"] in by_name]
    rest = [bound[seq] for seq in sorted(bound) if bound[seq] not in free]
    nodes = {n.seq: n for n in exact.nodes}
    grads: dict[str, Any] = {}
    for name in free + rest:
        node = nodes.get(by_name[name])
        if node is not None and t.bound.get(name, 0) <= 1:
            grads[t.w.name(name)] = node.grad
    return grads


def output_name(run: Run, ctx: Context, out: bool) -> str | None:
    """The name the code gives the implicit pass's output (None for a program with backward
    calls of its own)."""
    node = implicit_output(run)
    if node is None:
        return None
    if out:
        return "out"
    bound = ctx.facts.bound_to(node)
    if not bound and not node.requires_grad:
        return "the output"  # a number: said in a comment, nothing to differentiate
    if not bound:  # computed only inside a print: no name holds it
        raise unwritable(run.source, node.span or run.source.tree.body[-1])
    return ctx.names.get(node.name if node.name in bound else bound[0], bound[0])  # type: ignore[arg-type]


def torch_ending(
    run: Run, name: str | None, t: Translation, grads: dict[str, Any]
) -> tuple[list[str], list[str]]:
    """The PyTorch script's last lines (the implicit pass's backward, the grad_fn comments,
    the leaves' grads printed), and what they print."""
    tail = [""]
    node = implicit_output(run)
    if node is not None and not node.requires_grad:
        tail.append(f"# {name} does not depend on any parameter: nothing to backpropagate")
    elif node is not None and node.data.size == 1:
        tail.append(f"{name}.backward()")
    elif node is not None:
        tail.append(
            f"{name}.backward(torch.ones_like({name}))"
            "  # not a scalar: seed with ones, as gradtrace does"
        )
    # the grad_fn PyTorch gives each named result, as a comment: gradtrace does not print it
    tail += [f"# {op_name}.grad_fn is {predicted}" for op_name, predicted in t.named]
    expected: list[str] = []
    if node is not None and not node.requires_grad:
        return tail, expected
    for leaf, g in grads.items():
        if g is None:  # PyTorch leaves it None: said as a comment
            why = (
                f"backward does not reach {leaf}"
                if node is not None
                else "no backward() reached it"
            )
            tail.append(f"# {leaf}.grad is None: {why}")
            continue
        tail.append(f'print("{leaf}.grad =", {leaf}.grad)')
        expected.append(f"{leaf}.grad = {torch_text(np.asarray(g, dtype=np.float64))}")
    return tail, expected


def jax_stop(run: Run, ctx: Context) -> tuple[bool, ast.Expr | None]:
    """Can JAX's code be written (one pass: the implicit one, or one `L.backward(…)` at the
    program's level), and the statement of that backward call if there is one."""
    passes = run.interpreter.passes.passes
    if len(passes) != 1 or passes[0].kind == "grad" or run.grads_built:
        return False, None
    if passes[0].kind == "implicit":
        return True, None
    for st in run.source.tree.body:
        if isinstance(st, ast.Expr) and ctx.facts.span(st.value) == passes[0].span:
            return True, st
    return False, None


def jax_text(
    run: Run, ctx: Context, out: bool, displayed: set[int], name: str | None,
    grads: dict[str, Any],
) -> tuple[str, str] | None:  # fmt: skip
    """JAX's code and what it prints, or None when it is not written."""
    ok, stop = jax_stop(run, ctx)
    if not ok:
        return None
    t = Translation(ctx, "jax", out, displayed)
    t.stop = stop
    try:
        t.program()
        result = returned(run, t, stop, name)
    except ProgramError:
        return None
    params, lines = free_params(run, t.w) + t.params, free_lines(run, t.w)
    body = lines + [f"    {line}" for line in t.lines]
    text = "\n".join([
        "import jax", "import jax.numpy as jnp", "import numpy as np", "",
        'jax.config.update("jax_enable_x64", True)  # float64, as gradtrace',
        "rng = np.random.default_rng(0)", *t.preamble, "", "params = {",
        *(f'    "{k}": {v},' for k, v in params), "}", "", "", "def f(params):", *body,
        f"    return {result}", "", "", "grads = jax.grad(f)(params)",
        "for name, g in grads.items():",
        '    print(name + ".grad =", (np.round(np.asarray(g), 6) + 0.0).tolist())',
    ]) + "\n"  # fmt: skip
    node = implicit_output(run)
    reached = node is None or node.requires_grad
    shown = [show_text(f"{k}.grad", grads.get(k), run, k) for k, _ in params] if reached else []
    return text, "".join(line + "\n" for line in shown)


def returned(run: Run, t: Translation, stop: ast.Expr | None, name: str | None) -> str:
    """What JAX's `f` returns: the output (summed when not a scalar: the same as seeding
    ones), or Σ L·v for the program's `L.backward(gradient=v)`."""
    if stop is None:
        node = implicit_output(run)
        assert node is not None and name is not None
        return (
            name
            if node.data.size == 1
            else f"jnp.sum({name})  # not a scalar: the same as seeding ones"
        )
    call = stop.value
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
    seed = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "gradient"), None)  # fmt: skip
    if seed is None:
        return t.w.expr(call.func.value)
    return f"jnp.sum({t.w.expr(call.func.value, TERM)} * {t.w.expr(seed, TERM + 1)})"


def free_tensors(run: Run, w: Writer) -> list[str]:
    """A tensor for each free name, from the value it was given (1.0 if none)."""
    lines = []
    for f in run.free:
        if f.get("labels"):
            lines.append(
                f"{w.name(f['name'])} = torch.tensor({f.get('value', 0)!r})  # class labels"
            )
        else:
            value = floats_text(f["value"])
            lines.append(f"{w.name(f['name'])} = torch.tensor({value}, requires_grad=True)")
    return lines


def free_params(run: Run, w: Writer) -> list[tuple[str, str]]:
    """JAX's parameters for the free names, with the values given (1.0 by default)."""
    return [
        (w.name(f["name"]), f"jnp.array({floats_text(f['value'])})")
        for f in run.free
        if not f.get("labels")
    ]


def free_lines(run: Run, w: Writer) -> list[str]:
    lines = []
    for f in run.free:
        n = w.name(f["name"])
        value = (
            f"jnp.array({f.get('value', 0)!r})  # class labels"
            if f.get("labels")
            else f'params["{n}"]'
        )
        lines.append(f"    {n} = {value}")
    return lines


def show_text(name: str, g: Any, run: Run, leaf: str) -> str:
    """What the JAX code's loop prints for a grad g, rounded to 6 decimals (zeros where
    PyTorch's stays None: jax.grad gives zeros for a parameter the output does not use)."""
    if g is None:
        node = next((n for n in run.leaves if n.name == leaf), None)
        g = np.zeros(node.data.shape if node is not None else ())
    return f"{name} = {(np.round(np.asarray(g, dtype=np.float64), 6) + 0.0).tolist()}"


def node_grad_fns(run: Run, built: set[int]) -> dict[str, str]:
    """Node id -> the grad_fn PyTorch gives it, for every op node whose name is predicted."""
    fns: dict[str, str] = {}
    for n in run.nodes:
        if n.op is not None and n.seq not in built:
            fn = grad_fn_of(n)
            if fn:
                fns[run.id(n)] = fn
    return fns


__all__ = ["GENERATED_NAMES", "code", "code_names"]
