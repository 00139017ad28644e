"""Functions as IR: `def`, `lambda`, `return`, calls of them, the grad transform
(`grad(f)(x)`, `jax.grad(f)`, `torch.func.grad(f)`), and what a program shows rather than
computes: `print(…)`, `x.grad`, `L.backward()`.

A function is inlined where it is called (run_functions.py), so here it is only checked: its
parameters, its own names (those it assigns, as Python decides them), and that it is used only
as a call's target or as grad's argument.
"""

from __future__ import annotations

import ast

from engine.language import flow_ir as fx
from engine.language import ir
from engine.language.parse_flow import COMPARISONS, FlowParser, NameScope, assigned_in
from engine.language.vocabulary import FUNCTIONS, UNARY

# The grad transform as programs spell it (after `from jax import grad`, `import jax`, …).
GRAD_NAMES = {"grad", "jax.grad", "torch.func.grad", "func.grad", "functorch.grad"}
# What `.item()` and friends make of a value in a print.
SHOWN = {"item", "tolist", "numpy", "data"}
# Keywords backward() takes: the seed, and two that change nothing here.
BACKWARD_KEYWORDS = {"gradient", "retain_graph", "create_graph"}
MODULE_PREFIXES = {"np", "numpy", "jnp", "torch", "math", "F", "jax.numpy", "torch.nn.functional"}


def dotted(node: ast.AST) -> str | None:
    """`jax.grad` for the attribute chain jax.grad, None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def is_grad_transform(node: ast.AST) -> bool:
    """`grad(f)`: grad with one argument, which is a function (`grad(L, x)` has two)."""
    return (
        isinstance(node, ast.Call)
        and dotted(node.func) in GRAD_NAMES
        and len(node.args) == 1
        and not isinstance(node.args[0], ast.Starred)
    )


class FunctionParser(FlowParser):
    """def, lambda, calls of them, print and backward (parse.Parser is the whole)."""

    def look_ahead_functions(self, tree: ast.Module) -> None:
        """The names bound to functions anywhere (a call may come before its def, as in Python)
        and the names looped over; which names only functions bind."""
        top = assigned_in(tree.body)
        inner: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                self.functions.add(node.name)
                inner |= assigned_in(node.body) | {a.arg for a in node.args.args}
            elif (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Lambda)
                or isinstance(node, ast.Assign)
                and is_grad_transform(node.value)
            ):
                self.functions.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif (
                isinstance(node, ast.For)
                and isinstance(node.iter, ast.Name)
                or isinstance(node, ast.comprehension)
                and isinstance(node.iter, ast.Name)
            ):
                self.iter_names.add(node.iter.id)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("zip", "enumerate")
            ):
                self.iter_names.update(a.id for a in node.args if isinstance(a, ast.Name))
        self.every_assigned = top - self.functions
        self.local_only = inner - top

    # --- def and lambda ------------------------------------------------------------------------
    def parameters(
        self, args: ast.arguments, node: ast.AST
    ) -> tuple[tuple[str, ...], tuple[ir.Expr, ...]]:
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error(
                node,
                "a function's arguments must be plain names (no *args, **kwargs, / or *)",
                "unsupported",
            )
        names = []
        for a in args.args:
            self.check_name(a, a.arg)
            if a.arg in FUNCTIONS or a.arg in self.functions:
                raise self.error(a, f"'{a.arg}' is a function name; choose another name")
            if a.arg in names:
                raise self.error(a, f"the argument '{a.arg}' is named twice")
            names.append(a.arg)
        defaults = tuple(self.expr(d) for d in args.defaults)  # read where the def is
        return tuple(names), defaults

    def function_def(self, node: ast.FunctionDef) -> fx.FuncDef:
        if node.decorator_list:
            raise self.error(
                node.decorator_list[0], "decorators are not part of the language", "unsupported"
            )
        self.check_name(node, node.name)
        params, defaults = self.parameters(node.args, node)
        body = list(node.body)
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body = body[1:]  # a docstring
        if not body:
            raise self.error(node, f"{node.name} has no statements", "empty")
        own = set(params) | assigned_in(body)
        self.scopes.append(NameScope("def", node.name, own, set(params)))
        saved = self.loop_depth, self.loop_vars
        self.loop_depth, self.loop_vars = 0, []
        try:
            parsed = self.block(body)
        finally:
            self.scopes.pop()
            self.loop_depth, self.loop_vars = saved
        return fx.FuncDef(node.name, params, defaults, parsed, self.span(node))

    def lambda_expr(self, node: ast.Lambda) -> ir.Expr:
        params, defaults = self.parameters(node.args, node)
        self.scopes.append(NameScope("lambda", "lambda", set(params), set(params)))
        try:
            body = self.expr(node.body)
        finally:
            self.scopes.pop()
        return fx.Lambda(params, defaults, body, self.span(node))  # type: ignore[return-value]

    def lone_lambda(self, node: ast.Lambda) -> ir.Expr:
        raise self.error(
            node,
            "a lambda can only be named (f = lambda x: …), called, or passed to grad",
            "unsupported",
        )

    def return_statement(self, node: ast.Return) -> fx.Return:
        if not any(s.kind == "def" for s in self.scopes):
            raise self.error(node, "return can only stand inside a def", "unsupported")
        value = None if node.value is None else self.value_or_list(node.value)
        return fx.Return(value, self.span(node))

    def value_or_list(self, node: ast.AST) -> ir.Expr:
        """A value, where a tuple of values may stand too (`return a, b`)."""
        if isinstance(node, ast.Tuple) and not self.all_numbers(node):
            return self.display(node)
        return self.expr(node)

    def function_ref(self, node: ast.AST) -> ir.Expr:
        """grad's argument: a program's function, a lambda, grad(f), or one of the language's
        one-value functions (`grad(tanh)`, `grad(jnp.tanh)`)."""
        if isinstance(node, ast.Name) and node.id in self.functions:
            return ir.Name(node.id, self.span(node))
        if isinstance(node, ast.Lambda):
            return self.lambda_expr(node)
        if is_grad_transform(node):
            return self.grad_of(node)  # type: ignore[arg-type]
        name = dotted(node)
        if name is not None:
            prefix, _, last = name.rpartition(".")
            if last in UNARY and (not prefix or prefix in MODULE_PREFIXES):
                return fx.FuncRef(last, self.span(node))  # type: ignore[return-value]
        raise self.error(
            node,
            "grad(f) takes a function: the name of a def, a lambda, grad(g) or a function "
            "of one value such as tanh",
            "arguments",
        )

    def grad_of(self, node: ast.Call) -> ir.Expr:
        # argnums=0 is JAX's default, the first argument: the one grad(f) differentiates by
        other = [k for k in node.keywords if k.arg != "argnums" or ast.unparse(k.value) != "0"]
        if other:
            raise self.error(
                other[0],
                "grad(f) differentiates with respect to f's first argument; "
                f"the keyword {other[0].arg} is not supported",
                "keyword",
            )
        return fx.GradOf(self.function_ref(node.args[0]), self.span(node))  # type: ignore[return-value]

    # --- calls ---------------------------------------------------------------------------------
    def call(self, node: ast.Call) -> ir.Expr:
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.functions:
            target: ir.Expr = ir.Name(func.id, self.span(func))
        elif isinstance(func, ast.Lambda):
            target = self.lambda_expr(func)
        elif is_grad_transform(func):
            target = self.grad_of(func)  # type: ignore[arg-type]
        else:
            return self.other_call(node)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.refuse(a)
            args.append(self.value_or_list(a))
        kwargs = []
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**unpacking is not part of the language", "unsupported")
            kwargs.append((kw.arg, self.value_or_list(kw.value)))
        return fx.CallFn(target, tuple(args), tuple(kwargs), self.span(node))  # type: ignore[return-value]

    def other_call(self, node: ast.Call) -> ir.Expr:
        """A call that is not of a program's function: Python's sum of a list, else the
        language's own functions (calls.py)."""
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        if is_grad_transform(node):
            raise self.error(node, "grad(f) is a function: call it, as in grad(f)(x)", "arguments")
        if isinstance(func, ast.Attribute) and func.attr == "backward":
            raise self.error(
                node, "backward() is a statement of its own: L.backward()", "unsupported"
            )
        if name == "print":
            raise self.error(node, "print(…) is a statement of its own line", "unsupported")
        if name in ("zip", "enumerate"):
            raise self.error(
                node, f"{name}(…) can only be looped over: for … in {name}(…):", "unsupported"
            )
        if name == "sum" and node.args and not node.keywords and self.is_list(node.args[0]):
            if len(node.args) > 2:
                raise self.error(
                    node, "sum of a list takes the list and a start: sum(xs, start)", "arguments"
                )
            start = self.expr(node.args[1]) if len(node.args) == 2 else None
            items = self.iterable(node.args[0])
            return fx.ListSum(items, start, self.span(node))  # type: ignore[return-value]
        return super().call(node)

    def is_list(self, node: ast.AST) -> bool:
        """Is this, syntactically, a list of values rather than a tensor?"""
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.list_names
        return isinstance(node, ast.List | ast.Tuple) and not self.all_numbers(node)

    # --- what a program shows ------------------------------------------------------------------
    def shown_statement(self, node: ast.Expr) -> ir.Stmt | None:
        """print(…), L.backward(…), or `x.grad` on its own line; else None."""
        value = node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "print"
        ):
            if value.keywords:
                raise self.error(
                    value.keywords[0], "print takes values and strings only", "keyword"
                )
            args = tuple(self.print_arg(a) for a in value.args)
            return fx.Print(args, self.span(node))
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "backward"
        ):
            return self.backward(value, node)
        if isinstance(value, ast.Attribute) and value.attr == "grad":
            return fx.Print((self.print_arg(value),), self.span(node))
        return None

    def print_arg(self, node: ast.AST) -> ir.Expr | fx.Text | fx.GradRead | fx.Shown:
        if isinstance(node, ast.Starred):
            raise self.refuse(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return fx.Text(node.value, self.span(node))
        if isinstance(node, ast.Compare):
            return self.shown_comparison(node)  # print(9*a**2 == a.grad)
        how = None
        inner = node
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SHOWN - {"data"}
        ):
            if node.args or node.keywords:
                raise self.error(node, f".{node.func.attr}() takes no arguments", "arguments")
            how, inner = node.func.attr, node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "data":
            how, inner = "data", node.value
        if isinstance(inner, ast.Attribute) and inner.attr == "grad":
            shown: ir.Expr | fx.GradRead = fx.GradRead(self.expr(inner.value), self.span(inner))
        else:
            shown = self.value_or_list(inner)
        if how is None:
            return shown
        return fx.Shown(shown, how, self.span(node))  # type: ignore[arg-type]

    def shown_comparison(self, node: ast.Compare) -> ir.Expr:
        """A comparison that is only shown (a print's argument, the last line): its operands
        are values or x.grad, compared element by element when the program has run."""

        def operand(n: ast.AST) -> ir.Expr:
            if isinstance(n, ast.Attribute) and n.attr == "grad":
                return fx.GradRead(self.expr(n.value), self.span(n))  # type: ignore[return-value]
            return self.expr(n)

        ops = []
        for op in node.ops:
            if type(op) not in COMPARISONS:
                raise self.error(
                    node, "only < > <= >= == != compare values here (not in, is, …)", "unsupported"
                )
            ops.append(COMPARISONS[type(op)])
        rights = tuple(operand(c) for c in node.comparators)
        return fx.Compare(operand(node.left), tuple(ops), rights, self.span(node))  # type: ignore[return-value]

    def backward(self, call: ast.Call, node: ast.Expr) -> fx.Backward:
        assert isinstance(call.func, ast.Attribute)
        gradient = None
        if len(call.args) > 1:
            raise self.error(call, "backward takes one seed: L.backward(gradient=v)", "arguments")
        if call.args:
            gradient = self.expr(call.args[0])
        for kw in call.keywords:
            if kw.arg not in BACKWARD_KEYWORDS:
                raise self.error(
                    kw, f"backward() has no keyword '{kw.arg}'; it takes gradient=v", "keyword"
                )
            if kw.arg == "gradient":
                if gradient is not None:
                    raise self.error(kw, "the seed is given twice", "arguments")
                gradient = self.expr(kw.value)
        return fx.Backward(self.expr(call.func.value), gradient, self.span(node))

    def grad_read_error(self, node: ast.Attribute) -> None:
        if node.attr == "grad":
            raise self.error(
                node,
                "x.grad can only be printed (print(x.grad)): the gradients are found after "
                "the program has run; to compute with one, use grad(L, x)",
                "unsupported",
            )
