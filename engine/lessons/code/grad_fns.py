"""The `grad_fn` names PyTorch gives each result (AddBackward0, MulBackward0, …), predicted
from the op and the expression that made it: what the code lesson says the PyTorch code prints.
"""

from __future__ import annotations

from typing import Any

from engine.autograd.value import Value
from engine.language import ir
from engine.language.vocabulary import UNARY

# The ops whose grad_fn does not follow from the op's name alone (an elementwise function of
# one value is `Exp` → ExpBackward0; the rest depend on the operands, see predict_grad_fn).
BACKWARD = {
    "add": "AddBackward0",
    "mul": "MulBackward0",
    "max": "MaximumBackward0",
    "min": "MinimumBackward0",
    "neg": "NegBackward0",
    "softmax": "SoftmaxBackward0",
    "log_softmax": "LogSoftmaxBackward0",
    "cross_entropy": "NllLossBackward0",
    "mse": "MseLossBackward0",  # written as F.mse_loss
    "transpose": "PermuteBackward0",
    "cat": "CatBackward0",
    "stack": "StackBackward0",
    "clamp": "ClampBackward1",  # clamp(x, min=…, max=…) with numbers, either or both given
    "gather": "IndexBackward0",  # indexing with lists or ranges (advanced indexing)
}


def is_number(e: Any) -> bool:
    """Written as a Python number in the code: a literal, or a length such as x.shape[0]."""
    return isinstance(e, ir.Num | ir.IntOf)


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
        return "RsubBackward1" if isinstance(e, ir.BinOp) and is_number(e.left) else "SubBackward0"
    if op == "div":
        return "MulBackward0" if isinstance(e, ir.BinOp) and is_number(e.left) else "DivBackward0"
    if op == "pow":
        if isinstance(e, ir.BinOp) and is_number(e.right):
            return "PowBackward0"
        if isinstance(e, ir.BinOp) and is_number(e.left):
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
        elif isinstance(e, ir.Items):
            todo += list(e.items)
    return found
