"""The program's statements, one by one, as the PyTorch script's lines and the JAX function's
(the code lesson), keeping what is printed after them: the leaves whose grads are shown, the
named results with the grad_fn PyTorch gives them, and the name that holds the output."""

from __future__ import annotations

from typing import Any

from engine.autograd.value import Value
from engine.language import ir
from engine.language.build_names import CONSTRUCTED
from engine.language.shown_ir import Backward, Print
from engine.lessons.code.grad_fns import predict_grad_fn
from engine.lessons.code.writer import Writer, array_text, number_text, range_text, unwritable


def assignment_counts(body: tuple[Any, ...]) -> dict[str, int]:
    """How often each name is assigned, up to 2 (all that matters: once, or more). A loop body
    counts twice: it may run more than once. One walk, however deep the loops nest (walking a
    loop body twice per level was 2**depth walks)."""
    counts: dict[str, int] = {}

    def walk(body: tuple[Any, ...], times: int) -> None:
        for st in body:
            if isinstance(st, ir.Assign):
                counts[st.name] = min(2, counts.get(st.name, 0) + times)
            elif isinstance(st, ir.Loop):
                walk(st.body, 2)

    walk(body, 1)
    return counts


class Translation:
    """Both codes' lines for one program, written as its statements are walked."""

    def __init__(
        self, program: ir.Program, by_span: dict[Any, Value], names: dict[str, str]
    ) -> None:
        self.torch = Writer("torch", by_span, names)
        self.jax = Writer("jax", by_span, names)
        self.by_span = by_span
        self.assigned = assignment_counts(program.body)
        self.torch_lines: list[str] = []
        self.jax_lines: list[str] = []  # the body of JAX's `def f(params):`
        self.jax_params: list[str] = []  # the entries of JAX's `params = {…}`
        self.leaf_names: list[str] = []  # program names of the parameters
        # (name in the code, predicted grad_fn) printed after backward
        self.named_ops: list[tuple[str, str]] = []
        self.output_name = "out"
        self.backward_marked = False  # L.backward() named the output: later lines keep it
        self.seed: tuple[str, str] | None = None  # backward(gradient=v): v, in each code
        self.jax_ok = True  # False once something JAX's code cannot be written for

    def both(self, indent: str, torch_line: str, jax_line: str) -> None:
        self.torch_lines.append(indent + torch_line)
        self.jax_lines.append("    " + indent + jax_line)

    def free_names(self, free: tuple[str, ...], given: dict[str, dict[str, Any]]) -> None:
        """A tensor for each free name, from the value it was given (1.0 if none)."""
        for name in free:
            f = given.get(name, {})
            written = self.torch.name(name)
            if f.get("labels"):
                v = f.get("value", 0)
                self.both(
                    "",
                    f"{written} = torch.tensor({v})  # class labels",
                    f"{written} = jnp.array({v})  # class labels",
                )
                continue
            v = f.get("value", 1.0)
            text = number_text(v) if isinstance(v, int | float) else repr(v)
            self.torch_lines.append(
                f"{written} = torch.tensor({float(v) if isinstance(v, int | float) else text}"
                ", requires_grad=True)"
            )
            # a float, not `jnp.array(1)`: jax.grad refuses integer inputs
            j_text = repr(float(v)) if isinstance(v, int | float) else text
            self.jax_params.append(f'    "{written}": jnp.array({j_text}),')
            self.jax_lines.append(f'    {written} = params["{written}"]')
            self.leaf_names.append(name)

    def statements(self, body: tuple[Any, ...], indent: str, top: bool) -> None:
        """Each statement as both codes' lines. Imports and `x.requires_grad_()` (ir.Note) need
        none: the code has its own imports and makes each leaf where it is assigned; a print
        shows what the output panel shows already. Anything else the lesson cannot write is
        refused at its position."""
        for st in body:
            if isinstance(st, ir.Seed):
                line = f"rng = np.random.default_rng({st.value})"
                self.both(indent, line, line)
            elif isinstance(st, ir.Loop):
                self.loop(st, indent)
            elif isinstance(st, ir.Assign):
                self.assign(st, indent, top)
            elif isinstance(st, ir.Output):
                self.output(st, indent)
            elif isinstance(st, Backward) and top:
                self.marked(st)
            elif not isinstance(st, ir.Note | Print):
                raise unwritable(st)

    def marked(self, st: Backward) -> None:
        """`L.backward()` or `L.backward(gradient=v)`: L is the output (the last call wins); the
        code calls backward on it, with v, at its end."""
        if not isinstance(st.target, ir.Name):
            raise unwritable(st)
        self.output_name = self.torch.name(st.target.id)
        self.backward_marked = True
        if st.gradient is not None:
            self.seed = (
                self.torch.as_tensor(st.gradient, always=True),
                self.jax.as_tensor(st.gradient, always=True),
            )

    def loop(self, st: ir.Loop, indent: str) -> None:
        bounds = range_text(*(self.torch.static(b) for b in (st.start, st.stop, st.step)))
        header = f"for {self.torch.name(st.var)} in range({bounds}):"
        self.both(indent, header, header)
        self.statements(st.body, indent + "    ", False)

    def made_leaf(self, st: ir.Assign) -> bool:
        """Did the build make `st.name` a leaf here (a literal, a constructor, `torch.tensor(…,
        requires_grad=True)`, or without torch an expression of constants: `0.01 * randn(2)`)?
        The graph says: the node at the expression's place, named by this assignment."""
        node = self.by_span.get(getattr(st.expr, "span", None))
        return node is not None and node.kind == "leaf" and node.name == st.name

    def assign(self, st: ir.Assign, indent: str, top: bool) -> None:
        e = st.expr
        target = self.torch.name(st.name)
        if self.backward_marked and target == self.output_name:
            raise unwritable(st)  # L rebound after L.backward(): the code's L would be another
        if isinstance(e, ir.StaticArg):  # a name read as a whole number: `n = x.shape[0]`
            line = f"{target} = {self.torch.static(e.value)}"
            self.both(indent, line, f"{target} = {self.jax.static(e.value)}")
            return
        is_leaf = self.made_leaf(st)
        if isinstance(e, ir.Labels):
            self.both(
                indent,
                f"{target} = {self.torch.expr(e)}  # class labels",
                f"{target} = {self.jax.expr(e)}  # class labels",
            )
        elif is_leaf:
            self.leaf(st, target, indent, top)
        else:
            self.torch_lines.append(f"{indent}{target} = {self.torch.expr(e)}")
            self.jax_line(indent, target, e)
            if top and self.assigned.get(st.name) == 1:
                self.name_op(target, e)
        if not self.backward_marked:
            self.output_name = target

    def leaf(self, st: ir.Assign, target: str, indent: str, top: bool) -> None:
        """A parameter: requires_grad in PyTorch; in JAX, one of `params` when it is assigned
        once at the top level (jax.grad differentiates those), else a plain array."""
        e = st.expr
        if isinstance(e, ir.Num):
            t_text = f"torch.tensor({float(e.value)!r}, requires_grad=True)"
            j_text = f"jnp.array({float(e.value)!r})"
        elif isinstance(e, ir.Array):
            t_text = f"torch.tensor({array_text(e.value)}, requires_grad=True)"
            j_text = f"jnp.array({array_text(e.value)})"
        elif isinstance(e, ir.Call) and e.func in CONSTRUCTED:
            t_text = self.torch.constructor(e, leaf=True)
            j_text = self.jax.constructor(e, leaf=True)
        else:  # `W = 0.01 * randn(2, 3)`: computed once, then the parameter itself
            t_text = f"({self.torch.expr(e)}).requires_grad_()"
            j_text = self.jax.expr(e)
        self.torch_lines.append(f"{indent}{target} = {t_text}")
        if top and self.assigned.get(st.name) == 1:
            self.jax_params.append(f'    "{target}": {j_text},')
            self.jax_lines.append(f'    {indent}{target} = params["{target}"]')
            self.leaf_names.append(st.name)
        else:
            self.jax_lines.append(f"    {indent}{target} = {j_text}")

    def output(self, st: ir.Output, indent: str) -> None:
        """The program's bare last expression, bound to `out`."""
        self.torch_lines.append(f"{indent}out = {self.torch.expr(st.expr)}")
        self.jax_line(indent, "out", st.expr)
        self.name_op("out", st.expr)
        if not self.backward_marked:
            self.output_name = "out"

    def jax_line(self, indent: str, target: str, e: Any) -> None:
        try:
            self.jax_lines.append(f"    {indent}{target} = {self.jax.expr(e)}")
        except NotImplementedError:
            self.jax_ok = False

    def name_op(self, target: str, e: Any) -> None:
        """Print `target`'s grad_fn after backward, where PyTorch's name for it is predicted."""
        node = self.by_span.get(getattr(e, "span", None))
        if node is not None:
            predicted = predict_grad_fn(node, e)
            if predicted:
                self.named_ops.append((target, predicted))
