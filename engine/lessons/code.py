"""Lesson 7, the same program in PyTorch and JAX: generated code, runnable as shown, and the
lines it prints (computed here by the engine: the grads, and the `grad_fn` names PyTorch gives
the named results — AddBackward0, MulBackward0, …).

The code is made from the parsed program (engine/language/ir.py), statement by statement, so loops stay
loops. Random leaves are drawn from NumPy's `default_rng(seed)` in program order, exactly as
gradtrace draws them, so the generated PyTorch code prints the same numbers.
tests/test_lessons_code.py runs it with torch; the JAX code is shown, not run in CI.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd.value import Value
from engine.language import ir
from engine.language.parse import CONSTRUCTORS, UNARY, parse
from engine.lessons.common import load
from engine.limits import DEFAULT_LIMITS, Limits

PREC = {"add": 1, "sub": 1, "mul": 2, "div": 2, "matmul": 2, "pow": 4}
SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@", "pow": "**"}
TORCH_UNARY = {
    "exp": "torch.exp",
    "log": "torch.log",
    "sqrt": "torch.sqrt",
    "sin": "torch.sin",
    "cos": "torch.cos",
    "tanh": "torch.tanh",
    "sigmoid": "torch.sigmoid",
    "relu": "torch.relu",
    "abs": "torch.abs",
}
JAX_UNARY = {
    "exp": "jnp.exp",
    "log": "jnp.log",
    "sqrt": "jnp.sqrt",
    "sin": "jnp.sin",
    "cos": "jnp.cos",
    "tanh": "jnp.tanh",
    "sigmoid": "jax.nn.sigmoid",
    "relu": "jax.nn.relu",
    "abs": "jnp.abs",
}
BACKWARD = {
    "add": "AddBackward0",
    "mul": "MulBackward0",
    "max": "MaximumBackward0",
    "min": "MinimumBackward0",
    "neg": "NegBackward0",
    "softmax": "SoftmaxBackward0",
    "log_softmax": "LogSoftmaxBackward0",
    "cross_entropy": "NllLossBackward0",
    "mse": "MeanBackward0",
    "transpose": "PermuteBackward0",
}


# The names the generated code itself reads at the top level (PyTorch) or inside JAX's `f`:
# a program name equal to one would shadow it there (`np = 2` breaks every `np.…` after it,
# `print = x*y` the lines that print). Such a name is written with a trailing underscore
# (`print_`), everywhere in both codes. `out` is added when the generated code binds the
# program's bare last expression to `out`.
GENERATED_NAMES = frozenset(
    {"np", "torch", "F", "rng", "show", "print", "range", "float", "jax", "jnp", "params"}
)


def code_names(program: ir.Program) -> dict[str, str]:
    """Program name -> the name the generated code uses for it (itself, unless it would
    shadow one of the code's own; then with `_` appended until it is unused)."""
    names = set(program.free)
    has_output = False
    todo = list(program.body)
    while todo:
        st = todo.pop()
        if isinstance(st, ir.Assign):
            names.add(st.name)
        elif isinstance(st, ir.Loop):
            names.add(st.var)
            todo += st.body
        elif isinstance(st, ir.Output):
            has_output = True
    reserved = GENERATED_NAMES | ({"out"} if has_output else set())
    taken = names | reserved
    renamed = {}
    for name in sorted(names & reserved):
        new = name + "_"
        while new in taken:
            new += "_"
        taken.add(new)
        renamed[name] = new
    return {name: renamed.get(name, name) for name in names}


def number_text(v: float) -> str:
    return repr(float(v)) if not float(v).is_integer() or abs(v) >= 1e15 else str(int(v))


def array_text(a: np.ndarray) -> str:
    return repr(np.asarray(a, dtype=np.float64).tolist())


def show_text(name: str, g: np.ndarray) -> str:
    """What the generated `show(name, t)` prints for a tensor t equal to g."""
    return f"{name} = {(np.round(np.asarray(g, dtype=np.float64), 6) + 0.0).tolist()}"


class Writer:
    """Turns the IR into Python text for one framework ("torch" or "jax")."""

    def __init__(
        self, flavour: str, nodes_by_span: dict[Any, Value], names: dict[str, str]
    ) -> None:
        self.flavour = flavour
        self.by_span = nodes_by_span
        self.names = names  # program name -> name in the code (see code_names)

    def name(self, name: str) -> str:
        return self.names.get(name, name)

    # static ints ----------------------------------------------------------------------------
    def static(self, s: Any) -> str:
        if isinstance(s, ir.SInt):
            return str(s.value)
        if isinstance(s, ir.SVar):
            return self.name(s.name)
        return f"({self.static(s.left)} {s.op} {self.static(s.right)})"

    def statics(self, arg: Any) -> str:
        value = arg.value if isinstance(arg, ir.StaticArg) else arg
        parts = value if isinstance(value, tuple) else (value,)
        inner = ", ".join(self.static(p) for p in parts)
        return f"({inner},)" if len(parts) == 1 else f"({inner})"

    def axis(self, a: Any) -> str:
        if a is None:
            return "None"
        if isinstance(a, tuple):
            return "(" + ", ".join(self.static(x) for x in a) + ("," if len(a) == 1 else "") + ")"
        return self.static(a)

    def key(self, parts: tuple[Any, ...]) -> str:
        out = []
        for k in parts:
            if isinstance(k, ir.SSlice):
                text = (self.static(k.start) if k.start else "") + ":"
                text += self.static(k.stop) if k.stop else ""
                text += (":" + self.static(k.step)) if k.step else ""
                out.append(text)
            else:
                out.append(self.static(k))
        return ", ".join(out)

    # expressions ----------------------------------------------------------------------------
    def expr(self, e: Any, prec: int = 0) -> str:
        torch = self.flavour == "torch"
        if isinstance(e, ir.Num):
            return number_text(e.value)
        if isinstance(e, ir.Array):
            return ("torch.tensor(" if torch else "jnp.array(") + array_text(e.value) + ")"
        if isinstance(e, ir.Name):
            return self.name(e.id)
        if isinstance(e, ir.Labels):
            v = list(e.value) if isinstance(e.value, tuple) else e.value
            return f"torch.tensor({v})" if torch else f"jnp.array({v})"
        if isinstance(e, ir.BinOp):
            return self.binop(e, prec)
        if isinstance(e, ir.Neg):
            text = "-" + self.expr(e.operand, 3)
            return f"({text})" if prec > 3 else text
        if isinstance(e, ir.Index):
            return f"{self.expr(e.value, 9)}[{self.key(e.key)}]"
        if isinstance(e, ir.Call):
            return self.call(e, prec)
        raise ValueError(f"cannot write {type(e).__name__}")

    def binop(self, e: ir.BinOp, prec: int) -> str:
        """A chain of binary operators, written without recursing down its left operands: the
        language lets `x + x + … + x` run to max_nodes terms (only its right operands, and
        everything else, count towards max_depth), far past Python's recursion limit."""
        spine: list[tuple[ir.BinOp, int]] = []  # each operator and the precedence around it
        cur: Any = e
        while isinstance(cur, ir.BinOp):
            spine.append((cur, prec))
            prec = PREC[cur.op] + (1 if cur.op == "pow" else 0)  # what its left operand gets
            cur = cur.left
        text = self.expr(cur, prec)
        for node, around in reversed(spine):
            p = PREC[node.op]
            right = self.expr(node.right, p + (0 if node.op == "pow" else 1))
            text = f"{text}**{right}" if node.op == "pow" else f"{text} {SYMBOL[node.op]} {right}"
            if p < around:
                text = f"({text})"
        return text

    def call(self, e: ir.Call, prec: int) -> str:
        torch = self.flavour == "torch"
        f = e.func
        args = e.args
        kw = dict(e.kwargs)
        a0 = self.expr(args[0], 9) if args and not isinstance(args[0], ir.StaticArg) else ""
        if f in UNARY:
            return f"{(TORCH_UNARY if torch else JAX_UNARY)[f]}({self.expr(args[0])})"
        if f in ("max", "min"):
            fn = ("torch." if torch else "jnp.") + ("maximum" if f == "max" else "minimum")
            return f"{fn}({self.as_tensor(args[0])}, {self.as_tensor(args[1])})"
        if f == "matmul":
            text = f"{self.expr(args[0], 3)} @ {self.expr(args[1], 3)}"
            return f"({text})" if prec > 2 else text
        if f == "mse":
            return f"(({self.expr(args[0], 1)} - {self.expr(args[1], 1)})**2).mean()"
        if f in ("sum", "mean"):
            axis, keep = kw.get("axis"), bool(kw.get("keepdims", False))
            if torch:
                inner = "" if axis is None else f"dim={self.axis(axis)}"
                if keep and axis is not None:
                    inner += ", keepdim=True"
                return f"{a0}.{f}({inner})"
            inner = "" if axis is None else f", axis={self.axis(axis)}"
            return f"jnp.{f}({self.expr(args[0])}{inner}{', keepdims=True' if keep else ''})"
        if f in ("softmax", "log_softmax"):
            axis = self.axis(kw.get("axis", ir.SInt(-1)))
            if torch:
                return f"torch.{f}({self.expr(args[0])}, dim={axis})"
            return f"jax.nn.{f}({self.expr(args[0])}, axis={axis})"
        if f == "reshape":
            return (
                f"{a0}.reshape{self.statics(args[1])}"
                if torch
                else f"jnp.reshape({self.expr(args[0])}, {self.statics(args[1])})"
            )
        if f == "transpose":
            node = self.by_span.get(e.span)
            ndim = node.data.ndim if node is not None else 2
            if len(args) > 1:
                axes = self.statics(args[1])
            else:
                axes = (
                    "("
                    + ", ".join(str(i) for i in reversed(range(ndim)))
                    + ("," if ndim == 1 else "")
                    + ")"
                )
            return (
                f"{a0}.permute{axes}" if torch else f"jnp.transpose({self.expr(args[0])}, {axes})"
            )
        if f == "cross_entropy":
            z, t = self.expr(args[0]), self.labels(args[1])
            if torch:
                return f"F.cross_entropy({z}, {t})"
            node = self.by_span.get(e.span)
            z_ndim = node.inputs[0].data.ndim if node is not None else 1
            if z_ndim == 1:
                return f"-jax.nn.log_softmax({z})[{t}]"
            return (
                f"-jnp.mean(jax.nn.log_softmax({z})"
                f"[jnp.arange({z}.shape[0]), {t}])"
            )  # one label per row (ERRATA 3)
        if f in ("const", "detach"):
            return f"{a0}.detach()" if torch else f"jax.lax.stop_gradient({self.expr(args[0])})"
        if f == "grad":
            if torch:
                return (
                    f"torch.autograd.grad({self.expr(args[0])}, {self.expr(args[1])}, "
                    "create_graph=True)[0]"
                )
            raise NotImplementedError
        if f in CONSTRUCTORS:
            return self.constructor(e, leaf=False)
        raise ValueError(f"cannot write {f}")

    def labels(self, e: Any) -> str:
        if isinstance(e, ir.Name):
            return self.name(e.id)
        return self.expr(e)

    def as_tensor(self, e: Any) -> str:
        if isinstance(e, ir.Num) and self.flavour == "torch":
            return f"torch.tensor({number_text(e.value)})"
        return self.expr(e)

    def constructor(self, e: ir.Call, leaf: bool) -> str:
        f = e.func
        shape = self.statics(e.args[0])
        numpy = {
            "randn": f"rng.standard_normal({shape})",
            "rand": f"rng.random({shape})",
            "zeros": f"np.zeros({shape})",
            "ones": f"np.ones({shape})",
            "arange": f"np.arange({self.static(e.args[0].value[0])}, dtype=float)",  # type: ignore[union-attr,index]
        }
        if f == "full":
            fill = e.args[1]
            numpy["full"] = f"np.full({shape}, {number_text(fill.value)})"  # type: ignore[union-attr,arg-type]
        if self.flavour == "torch":
            return f"torch.tensor({numpy[f]}{', requires_grad=True' if leaf else ''})"
        return f"jnp.array({numpy[f]})"


def predict_grad_fn(node: Value, e: Any) -> str | None:
    """The grad_fn name PyTorch 2.13 gives the result of expression `e` (None: none, or not
    predicted)."""
    if node.op is None or not node.requires_grad:
        return None
    op = node.op.name
    if isinstance(e, ir.Call) and e.func == "grad":
        return None
    if op in BACKWARD:
        return BACKWARD[op]
    if op in UNARY:
        return op.capitalize() + "Backward0"
    if op == "sub":
        return (
            "RsubBackward1"
            if isinstance(e, ir.BinOp) and isinstance(e.left, ir.Num)
            else "SubBackward0"
        )
    if op == "div":
        return (
            "MulBackward0"
            if isinstance(e, ir.BinOp) and isinstance(e.left, ir.Num)
            else "DivBackward0"
        )
    if op == "pow":
        if isinstance(e, ir.BinOp) and isinstance(e.right, ir.Num):
            return "PowBackward0"
        if isinstance(e, ir.BinOp) and isinstance(e.left, ir.Num):
            return "PowBackward2"
        return "PowBackward1"
    if op == "matmul":
        a, b = (x.data.ndim for x in node.inputs)
        if a > 2 or b > 2:
            return "UnsafeViewBackward0"
        return {
            (2, 2): "MmBackward0",
            (2, 1): "MvBackward0",
            (1, 2): "SqueezeBackward4",
            (1, 1): "DotBackward0",
        }[(a, b)]
    if op in ("sum", "mean"):
        return op.capitalize() + ("Backward0" if node.op.axis is None else "Backward1")  # type: ignore[attr-defined]
    if op == "reshape":
        src = node.inputs[0]
        moved = src.op is not None and src.op.name in ("transpose", "index")
        return "UnsafeViewBackward0" if moved else "ViewBackward0"
    if op == "index":
        key = node.op.key  # type: ignore[attr-defined]
        for k in reversed(key):
            if isinstance(k, int):
                return "SelectBackward0"
            if k != slice(None):
                return "SliceBackward0"
        return None
    return None


def exprs_by_span(body: tuple[Any, ...]) -> dict[Any, Any]:
    """Every expression of the program, by its span (the span its node carries)."""
    found: dict[Any, Any] = {}
    todo: list[Any] = []
    for st in body:
        if isinstance(st, ir.Loop):
            found.update(exprs_by_span(st.body))
        elif isinstance(st, ir.Assign | ir.Output):
            todo.append(st.expr)
    while todo:
        e = todo.pop()
        span = getattr(e, "span", None)
        if span is not None:
            found.setdefault(span, e)
        if isinstance(e, ir.BinOp):
            todo += [e.left, e.right]
        elif isinstance(e, ir.Neg):
            todo.append(e.operand)
        elif isinstance(e, ir.Index):
            todo.append(e.value)
        elif isinstance(e, ir.Call):
            todo += [a for a in e.args if not isinstance(a, ir.StaticArg)]
    return found


def code(
    source: str, values: dict[str, Any] | None = None, *, limits: Limits = DEFAULT_LIMITS, **_: Any
) -> dict[str, Any]:
    program = parse(source, limits)
    prog = load(source, values, limits)
    by_span: dict[Any, Value] = {}
    for n in prog.nodes:
        if n.span is not None:
            by_span[n.span] = n
    names = code_names(program)
    torch_w, jax_w = Writer("torch", by_span, names), Writer("jax", by_span, names)
    py = torch_w.name

    free_values = {f["name"]: f for f in prog.free}
    head_t = [
        "import numpy as np",
        "import torch",
        "import torch.nn.functional as F",
        "",
        "torch.set_default_dtype(torch.float64)  # gradtrace computes in float64",
        "rng = np.random.default_rng(0)  # randn/rand: NumPy's generator, drawn in program order",
        "",
        "",
        "def show(name, t):  # rounded to 6 decimals, as the expected output below",
        '    print(name, "=", (np.round(t.detach().numpy(), 6) + 0.0).tolist())',
        "",
        "",
    ]
    body_t: list[str] = []
    jax_params: list[str] = []
    body_j: list[str] = []
    leaf_names: list[str] = []  # program names
    assigned_count: dict[str, int] = {}
    # (name in the code, predicted grad_fn) printed after backward
    named_ops: list[tuple[str, str]] = []
    jax_ok = True

    def count_assignments(body: tuple[Any, ...], times: int = 1) -> None:
        """How often each name is assigned, up to 2 (all that matters: once, or more). A loop
        body counts twice: it may run more than once. One walk, however deep the loops nest
        (walking a loop body twice per level was 2**depth walks)."""
        for st in body:
            if isinstance(st, ir.Assign):
                assigned_count[st.name] = min(2, assigned_count.get(st.name, 0) + times)
            elif isinstance(st, ir.Loop):
                count_assignments(st.body, 2)

    count_assignments(program.body)

    for name in program.free:
        f = free_values.get(name, {})
        written = py(name)
        if f.get("labels"):
            v = f.get("value", 0)
            body_t.append(f"{written} = torch.tensor({v})  # class labels")
            body_j.append(f"    {written} = jnp.array({v})  # class labels")
            continue
        v = f.get("value", 1.0)
        text = number_text(v) if isinstance(v, int | float) else repr(v)
        body_t.append(
            f"{written} = torch.tensor({float(v) if isinstance(v, int | float) else text}"
            ", requires_grad=True)"
        )
        # a float, not `jnp.array(1)`: jax.grad refuses integer inputs
        j_text = repr(float(v)) if isinstance(v, int | float) else text
        jax_params.append(f'    "{written}": jnp.array({j_text}),')
        body_j.append(f'    {written} = params["{written}"]')
        leaf_names.append(name)

    output_name = "out"

    def statements(body: tuple[Any, ...], indent: str, top: bool) -> None:
        nonlocal output_name, jax_ok
        for st in body:
            if isinstance(st, ir.Seed):
                body_t.append(f"{indent}rng = np.random.default_rng({st.value})")
                body_j.append(f"    {indent}rng = np.random.default_rng({st.value})")
            elif isinstance(st, ir.Loop):
                rng_args = [torch_w.static(st.start), torch_w.static(st.stop)]
                if not (isinstance(st.step, ir.SInt) and st.step.value == 1):
                    rng_args.append(torch_w.static(st.step))
                if rng_args[0] == "0" and len(rng_args) == 2:
                    rng_args = rng_args[1:]
                header = f"for {py(st.var)} in range({', '.join(rng_args)}):"
                body_t.append(indent + header)
                body_j.append("    " + indent + header)
                statements(st.body, indent + "    ", False)
            elif isinstance(st, ir.Assign):
                e = st.expr
                target = py(st.name)
                is_leaf = isinstance(e, ir.Num | ir.Array) or (
                    isinstance(e, ir.Call) and e.func in CONSTRUCTORS
                )
                if isinstance(e, ir.Labels):
                    body_t.append(f"{indent}{target} = {torch_w.expr(e)}  # class labels")
                    body_j.append(f"    {indent}{target} = {jax_w.expr(e)}  # class labels")
                elif is_leaf:
                    if isinstance(e, ir.Num):
                        t_text = f"torch.tensor({float(e.value)!r}, requires_grad=True)"
                        j_text = f"jnp.array({float(e.value)!r})"
                    elif isinstance(e, ir.Array):
                        t_text = f"torch.tensor({array_text(e.value)}, requires_grad=True)"
                        j_text = f"jnp.array({array_text(e.value)})"
                    else:
                        t_text = torch_w.constructor(e, leaf=True)  # type: ignore[arg-type]
                        j_text = jax_w.constructor(e, leaf=True)  # type: ignore[arg-type]
                    body_t.append(f"{indent}{target} = {t_text}")
                    if top and assigned_count.get(st.name) == 1:
                        jax_params.append(f'    "{target}": {j_text},')
                        body_j.append(f'    {indent}{target} = params["{target}"]')
                        leaf_names.append(st.name)
                    else:
                        body_j.append(f"    {indent}{target} = {j_text}")
                        jax_ok = jax_ok and True
                else:
                    body_t.append(f"{indent}{target} = {torch_w.expr(e)}")
                    try:
                        body_j.append(f"    {indent}{target} = {jax_w.expr(e)}")
                    except NotImplementedError:
                        jax_ok = False
                    node = by_span.get(getattr(e, "span", None))
                    if top and node is not None and assigned_count.get(st.name) == 1:
                        predicted = predict_grad_fn(node, e)
                        if predicted:
                            named_ops.append((target, predicted))
                output_name = target
            elif isinstance(st, ir.Output):
                body_t.append(f"{indent}out = {torch_w.expr(st.expr)}")
                try:
                    body_j.append(f"    {indent}out = {jax_w.expr(st.expr)}")
                except NotImplementedError:
                    jax_ok = False
                node = by_span.get(getattr(st.expr, "span", None))
                if node is not None:
                    predicted = predict_grad_fn(node, st.expr)
                    if predicted:
                        named_ops.append(("out", predicted))
                output_name = "out"

    statements(program.body, "", True)

    out_node = prog.output
    scalar = out_node.data.ndim == 0
    tail_t = [""]
    if not out_node.requires_grad:
        tail_t.append(f"# {output_name} does not depend on any parameter: nothing to backpropagate")
    elif scalar:
        tail_t.append(f"{output_name}.backward()")
    else:
        tail_t.append(
            f"{output_name}.backward(torch.ones_like({output_name}))"
            "  # not a scalar: seed with ones, as gradtrace does"
        )
    expected: list[str] = []
    for name, predicted in named_ops:
        tail_t.append(f'print("{name}.grad_fn:", {name}.grad_fn.name())')
        expected.append(f"{name}.grad_fn: {predicted}")
    # Grads of the leaves that keep their name to the end (a rebound name is not a leaf).
    grads = {}
    from engine.program import run

    traced = run(source, values, limits=limits)
    for n in traced.nodes:
        if (
            n.kind == "leaf"
            and n.name is not None
            and assigned_count.get(n.name, 0) <= 1
            and n.name in leaf_names
            and n.name not in grads
        ):
            grads[n.name] = n.grad if n.grad is not None else np.zeros(n.data.shape)
    if out_node.requires_grad:
        for name, g in grads.items():
            tail_t.append(f'show("{py(name)}.grad", {py(name)}.grad)')
            expected.append(show_text(f"{py(name)}.grad", g))
    torch_code = "\n".join(head_t + body_t + tail_t) + "\n"

    jax_code = None
    if jax_ok:
        return_line = (
            f"    return {output_name}"
            if scalar
            else f"    return jnp.sum({output_name})  # not a scalar: the same as seeding ones"
        )
        jax_lines = [
            "import jax",
            "import jax.numpy as jnp",
            "import numpy as np",
            "",
            'jax.config.update("jax_enable_x64", True)  # float64, as gradtrace',
            "rng = np.random.default_rng(0)",
            "",
            "params = {",
            *jax_params,
            "}",
            "",
            "",
            "def f(params):",
            *body_j,
            return_line,
            "",
            "",
            "grads = jax.grad(f)(params)",
            "for name, g in grads.items():",
            '    print(name + ".grad =", (np.round(np.asarray(g), 6) + 0.0).tolist())',
        ]
        jax_code = "\n".join(jax_lines) + "\n"
    jax_expected = (
        [show_text(f"{py(name)}.grad", grads[name]) for name in leaf_names if name in grads]
        if out_node.requires_grad
        else []
    )
    exprs = exprs_by_span(program.body)
    node_fns: dict[str, str] = {}
    for n in prog.nodes:
        e = exprs.get(n.span)
        if n.op is not None and e is not None:
            fn = predict_grad_fn(n, e)
            if fn:
                node_fns[prog.id(n)] = fn
    return {
        "node_grad_fns": node_fns,
        "torch": torch_code,
        "torch_output": "\n".join(expected) + ("\n" if expected else ""),
        "grad_fns": dict(named_ops),
        "jax": jax_code,
        "jax_output": "\n".join(jax_expected) + ("\n" if jax_expected else "")
        if jax_code
        else None,
        "jax_note": None
        if jax_code
        else "grad() inside a program is written with jax.grad "
        "of an inner function; this one is not generated",
    }
