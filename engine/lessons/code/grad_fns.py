"""The `grad_fn` names PyTorch gives each result (AddBackward0, MulBackward0, …): each op's
own `grad_fn` (engine/autograd/ops), for the expressions of the program that made a node;
what the code lesson says the PyTorch code prints.
"""

from __future__ import annotations

from typing import Any

from engine.autograd.value import Value
from engine.language import ir


def predict_grad_fn(node: Value, e: Any) -> str | None:
    """The grad_fn name PyTorch 2.13 gives the result of expression `e`, as its op says from
    the node's inputs (None: none, or not predicted)."""
    if node.op is None or not node.requires_grad:
        return None
    if isinstance(e, ir.Call) and e.func == "grad":
        return None  # torch.autograd.grad's own graph: not the op's node
    return node.op.grad_fn(node.inputs)


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
