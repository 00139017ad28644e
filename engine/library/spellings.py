"""Other libraries' spellings of the same engine (issue 25, item 3):

- HIPS autograd: `import autograd.numpy as np` is NumPy's table; `from autograd import grad,
  elementwise_grad`: `grad(f)` is jax.grad's, `elementwise_grad(f)(x)` the gradient of
  sum(f(x)) (for a function applied elementwise, each element's own derivative).
- micrograd: `from micrograd.engine import Value`; `Value(2.0, label='a')` is a leaf (one per
  Value of a number); `.data` and `.grad` are numbers (`.grad` 0 before a pass, as
  micrograd's); `.relu()`, `.tanh()`, `.exp()`, `L.backward()`; `print(v)` shows micrograd's
  `Value(data=…, grad=…)`.
- tinygrad: `from tinygrad import Tensor`; `Tensor([...], requires_grad=True)`,
  `Tensor.eye(3)`, `Tensor.randn(2, 3)`, … where they mean what torch's do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd import ops
from engine.autograd.value import Value
from engine.language.calls import call_value
from engine.language.values import Closure, Function, Pending, describe, is_number
from engine.library.draws import special

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


# --- HIPS autograd --------------------------------------------------------------------------
@special("elementwise_grad", "fun", argnum=0, usage="elementwise_grad(f)")
def elementwise_grad(it: Interpreter, node: Any, fun: Any, argnum: Any) -> Function:
    from engine.library.transforms import transform

    if argnum != 0:
        raise it.error("grad_options", node, "keyword")
    if not isinstance(fun, Closure | Function):
        raise it.error("grad_needs_function", node, "arguments", v=describe(fun))

    def summed(it: Interpreter, args: list[Any], kwargs: dict[str, Any], call: Any) -> Any:
        y = it.tensor(call_value(it, fun, args, kwargs, call), call)
        return it.op(ops.Sum(None, False), (y,), call)

    return transform(it, Function(fun.name, summed), node, as_pass=True)


# --- micrograd ------------------------------------------------------------------------------
@special("micrograd_value", "data", "_children?", "_op?", label="", usage="Value(2.0)")
def micrograd_value(
    it: Interpreter, node: Any, data: Any, _children: Any, _op: Any, label: Any
) -> Value:
    """Value(x): a leaf of one number (micrograd's Value holds a number)."""
    v = it.tensor(data, node)
    if v.data.size != 1:
        raise it.error("micrograd_number", node, "arguments", v=describe(data))
    name = label if isinstance(label, str) and label else None
    return it.leaf(np.array(float(v.data.reshape(()))), node, name=name)


def is_micrograd(it: Interpreter) -> bool:
    return "micrograd" in it.scan.libraries and "torch" not in it.scan.libraries


def micrograd_attribute(it: Interpreter, owner: Any, attr: str, node: Any) -> Any:
    """`.data` and `.grad` of a micrograd Value: numbers; None when the attribute is another."""
    if attr not in ("data", "grad"):
        return None
    v = it.materialize(owner) if isinstance(owner, Pending) else owner
    if attr == "data":
        return float(np.asarray(v.data).reshape(()))
    return 0.0 if v.grad is None else float(np.asarray(v.grad).reshape(()))


def set_micrograd(it: Interpreter, owner: Any, attr: str, value: Any, node: Any) -> bool:
    """`v.label = 'e'` (the node's name in the graph), `p.data -= lr * p.grad` and
    `p.grad = 0` as micrograd means them: numbers set; False when it is no such assignment."""
    v = it.materialize(owner) if isinstance(owner, Pending) else owner
    if not isinstance(v, Value):
        return False
    if attr == "label" and isinstance(value, str):
        v.name = value[:40] or v.name
        return True
    if attr in ("data", "grad") and is_number(value):
        if attr == "data":
            it.passes.updated(v, np.array(float(value)))
        else:
            it.passes.set_grad(v, np.array(float(value)))
        return True
    return False


def micrograd_printed(v: Value) -> str:
    """micrograd's repr: `Value(data=2.0, grad=0)` (its grad an int 0 before a pass)."""
    grad = 0 if v.grad is None else float(np.asarray(v.grad).reshape(()))
    return f"Value(data={float(np.asarray(v.data).reshape(()))}, grad={grad})"


# --- the tables ---------------------------------------------------------------------------
HIPS = {"grad": "jax_grad", "elementwise_grad": "elementwise_grad"}
MICROGRAD = {"Value": "micrograd_value"}
TINYGRAD_TENSOR = {
    "()": "Tensor", "eye": "eye", "zeros": "zeros", "ones": "ones", "full": "full",
    "randn": "torch_randn", "rand": "torch_rand", "arange": "torch_arange",
    "stack": "stack", "cat": "cat",
}  # fmt: skip
