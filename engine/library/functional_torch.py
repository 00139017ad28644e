"""torch.autograd.functional: `jacobian`, `hessian`, `vjp`, `jvp`, `hvp`, `vhp`, each given
the function and its inputs in one call (tuples in, tuples out, as torch returns them), and
built on the transforms of functional.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.language.calls import call_value
from engine.language.values import numbers_list
from engine.library.functional import cotangent, hessian_of, jacobian_function, pullback, push
from engine.library.transform_inputs import function_of, inputs, output, regroup, run_inside, shown
from engine.library.transforms import special

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


# --- torch.autograd.functional: f and its inputs in one call ---------------------------------
def af_inputs(it: Interpreter, inputs: Any) -> tuple[list[Any], Any]:
    """The inputs as arguments, and the argnums that gives PyTorch's shape of the answer."""
    if isinstance(inputs, tuple | list) and not numbers_list(inputs):
        return list(inputs), tuple(range(len(inputs)))
    return [inputs], 0


@special("af_jacobian", "func", "inputs", create_graph=False, strict=False, vectorize=False,
         strategy="reverse-mode", usage="jacobian(func, inputs)")  # fmt: skip
def af_jacobian(it: Interpreter, node: Any, func: Any, inputs: Any, create_graph: Any,
                strict: Any, vectorize: Any, strategy: Any) -> Any:  # fmt: skip
    args, nums = af_inputs(it, inputs)
    how = "jacfwd" if strategy == "forward-mode" else "jacrev"
    return call_value(it, jacobian_function(function_of(it, func, node), nums, False, how),
                      args, {}, node)  # fmt: skip


@special("af_hessian", "func", "inputs", create_graph=False, strict=False, vectorize=False,
         outer_jacobian_strategy="reverse-mode", usage="hessian(func, inputs)")  # fmt: skip
def af_hessian(it: Interpreter, node: Any, func: Any, inputs: Any, create_graph: Any,
               strict: Any, vectorize: Any, outer_jacobian_strategy: Any) -> Any:  # fmt: skip
    args, nums = af_inputs(it, inputs)
    return hessian_of(it, function_of(it, func, node), args, nums, node)[1]


@special("af_vjp", "func", "inputs", "v?", create_graph=False, strict=False,
         usage="vjp(func, inputs, v)")  # fmt: skip
def af_vjp(it: Interpreter, node: Any, func: Any, inputs: Any, v: Any, create_graph: Any,
           strict: Any) -> Any:  # fmt: skip
    """torch.autograd.functional.vjp → (func(inputs), vᵀJ) (v may be left out for a scalar)."""
    f = function_of(it, func, node)
    graph = it.passes.transforming > 0
    args, nums = af_inputs(it, inputs)
    args, xs, shape = inputs_of(it, f, args, nums, node)
    y = output(it, run_inside(it, f, args, {}, node), f, node)
    seed = None if v is None else cotangent(it, v, y, node)
    if seed is None and y.data.size != 1:
        raise it.error("backward_not_scalar", node, "backward", name="func(inputs)",
                       shape=str(tuple(y.data.shape)))  # fmt: skip
    return shown(it, y, node, graph), regroup(pullback(it, y, xs, seed, node, graph), shape, nums)


inputs_of = inputs


@special("af_jvp", "func", "inputs", "v?", create_graph=False, strict=False,
         usage="jvp(func, inputs, v)")  # fmt: skip
def af_jvp(it: Interpreter, node: Any, func: Any, inputs: Any, v: Any, create_graph: Any,
           strict: Any) -> Any:  # fmt: skip
    """torch.autograd.functional.jvp → (func(inputs), J·v)."""
    f = function_of(it, func, node)
    graph = it.passes.transforming > 0
    args, nums = af_inputs(it, inputs)
    args, xs, _ = inputs_of(it, f, args, nums, node)
    y = output(it, run_inside(it, f, args, {}, node), f, node)
    if v is None:
        if not all(x.data.size == 1 for x in xs):
            raise it.error("transform_tangents", node, "arguments", n=len(xs), m=0)
        ones = tuple(np.ones(x.data.shape) for x in xs)
        v = ones if isinstance(nums, tuple) else ones[0]
    ts = list(v) if isinstance(nums, tuple) else [v]
    ts = [it.constant(t, node) if isinstance(t, np.ndarray) else t for t in ts]
    (tout,) = push(it, [y], xs, ts, node, graph)
    return shown(it, y, node, graph), tout


def hessian_vector(name: str) -> None:
    @special(name, "func", "inputs", "v?", create_graph=False, strict=False,
             usage=f"{name[3:]}(func, inputs, v)")  # fmt: skip
    def run(it: Interpreter, node: Any, func: Any, inputs: Any, v: Any, create_graph: Any,
            strict: Any) -> Any:  # fmt: skip
        """hvp → (func(inputs), H·v); vhp → (func(inputs), vᵀH): the same numbers, H being
        symmetric; each is the Jacobian of the gradient applied to v."""
        f = function_of(it, func, node)
        args, nums = af_inputs(it, inputs)
        y, H = hessian_of(it, f, args, nums, node)
        vs = list(v) if isinstance(nums, tuple) else [v]
        Hs = H if isinstance(nums, tuple) else ((H,),)
        xs_shape = [np.asarray(it.tensor(a, node).data).shape for a in args]
        out = []
        for i in range(len(Hs)):
            total = np.zeros(xs_shape[i])
            for j in range(len(Hs)):
                vj = np.array(it.tensor(vs[j], node).data, dtype=np.float64)
                h = np.array(Hs[i][j].data).reshape(total.size, vj.size)
                total = total + (h @ vj.reshape(-1)).reshape(total.shape)
            out.append(it.constant(total, node))
        result = tuple(out) if isinstance(nums, tuple) else out[0]
        return it.constant(np.array(y.data), node), result


hessian_vector("af_hvp")
hessian_vector("af_vhp")


# Module spellings (names.py adds them to MODULES).
AUTOGRAD_FUNCTIONAL = {
    "jacobian": "af_jacobian", "hessian": "af_hessian", "vjp": "af_vjp", "jvp": "af_jvp",
    "hvp": "af_hvp", "vhp": "af_vhp",
}  # fmt: skip
