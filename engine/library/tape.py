"""TensorFlow's spelling (issue 25, item 2): `tf.Variable`, `tf.constant`,
`with tf.GradientTape() as tape:` (`persistent=True`, `watch_accessed_variables`,
`tape.watch(x)`), `tape.gradient(y, x)` / `(y, [a, b])`, `tape.jacobian(y, x)`, and a
TensorFlow program's prints as TensorFlow prints them (`tf.Tensor(6.0, shape=(), dtype=float32)`,
the numbers float64's, as every value here).

A tape is a pass like `torch.autograd.grad`: the grads it returns are values, the leaves'
`.grad` left alone. As TensorFlow, a tape differentiates only what ran while it was open and
only with respect to Variables (unless `watch_accessed_variables=False`) and the tensors it
watches; any other source's gradient is None. A target computed partly outside the tape from
a source it also reaches inside is refused (TensorFlow would count only the inside path). A
non-persistent tape gives one set of gradients. A tape's gradient taken while another tape is
open is a graph, so the outer tape differentiates it again (second derivatives).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.autograd.value import Value
from engine.language.values import Function, Grad, Ints, Opaque, Pending
from engine.library.draws import special
from engine.library.objects import OBJECT_METHODS

if TYPE_CHECKING:
    from engine.language.interpreter import Interpreter


def now() -> int:
    """The creation number the next value will have (values are numbered as they are made)."""
    return Value(0.0).seq


def is_tensorflow(it: Interpreter) -> bool:
    return "tensorflow" in it.scan.libraries


# --- values ---------------------------------------------------------------------------------
@special("tf_variable", "initial_value", trainable=True, name=None, usage="tf.Variable(3.0)")
def variable(it: Interpreter, node: Any, initial_value: Any, trainable: Any, name: Any) -> Any:
    """A Variable: a leaf (trainable), or a constant when `trainable=False`."""
    data = np.array(it.tensor(initial_value, node).data, dtype=np.float64)
    v = it.leaf(data, node) if trainable is not False else it.constant(data, node)
    it.library_state.setdefault("variables", set()).add(v.seq)
    return v


@special("tf_constant", "value", name=None, shape=None, usage="tf.constant(3.0)")
def constant(it: Interpreter, node: Any, value: Any, name: Any, shape: Any) -> Any:
    if isinstance(value, Ints):
        return Ints(value.data.copy())
    from engine.library.constructors import _whole_numbers

    if _whole_numbers(value):  # tf.constant([1, 2]): int32 in TensorFlow, whole numbers here
        return Ints(np.asarray(value, dtype=np.int64))
    data = np.array(it.tensor(value, node).data, dtype=np.float64)
    return it.constant(data, node)


@special("tf_normal", "shape", mean=0.0, stddev=1.0, seed=None, name=None,
         usage="tf.random.normal((3, 2))")  # fmt: skip
def random_normal(it: Interpreter, node: Any, shape: Any, mean: Any, stddev: Any, seed: Any,
                  name: Any) -> Value:  # fmt: skip
    """tf.random.normal: drawn from the program's generator (seed(n), 0 by default), not
    TensorFlow's Philox, so the numbers are not TensorFlow's."""
    from engine.library.functions import number, sizes

    dims = sizes(it, (shape,), node)
    it.check_shape(dims, node)
    draw = it.rng.standard_normal(dims) * number(it, stddev, node) + number(it, mean, node)
    return it.constant(draw, node)


@special("tf_uniform", "shape", minval=0.0, maxval=1.0, seed=None, name=None,
         usage="tf.random.uniform((3, 2))")  # fmt: skip
def random_uniform(it: Interpreter, node: Any, shape: Any, minval: Any, maxval: Any, seed: Any,
                   name: Any) -> Value:  # fmt: skip
    from engine.library.functions import number, sizes

    dims = sizes(it, (shape,), node)
    it.check_shape(dims, node)
    lo, hi = number(it, minval, node), number(it, maxval, node)
    return it.constant(it.rng.random(dims) * (hi - lo) + lo, node)


# --- the tape -------------------------------------------------------------------------------
@special("gradient_tape", persistent=False, watch_accessed_variables=True,
         usage="tf.GradientTape(persistent=False)")  # fmt: skip
def gradient_tape(
    it: Interpreter, node: Any, persistent: Any, watch_accessed_variables: Any
) -> Opaque:
    """A tape: what it recorded (spans of creation numbers), what it watches, whether used."""
    state = {"persistent": bool(persistent), "variables": bool(watch_accessed_variables),
             "spans": [], "open": None, "used": False, "watched": set()}  # fmt: skip
    return Opaque("tape", state)


def enter(it: Interpreter, tape: Opaque, body: Callable[[], None]) -> None:
    """`with tape:` — what runs inside is what the tape records."""
    open_tapes: list[Opaque] = it.library_state.setdefault("tapes", [])
    tape.state["open"] = now()
    open_tapes.append(tape)
    try:
        body()
    finally:
        open_tapes.remove(tape)
        tape.state["spans"].append((tape.state["open"], now()))
        tape.state["open"] = None


def recorded(tape: Opaque, seq: int) -> bool:
    spans = list(tape.state["spans"])
    if tape.state["open"] is not None:
        spans.append((tape.state["open"], 1 << 62))
    return any(lo <= seq < hi for lo, hi in spans)


def watch(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> None:
    """tape.watch(x): x is a source of this tape (a constant becomes a leaf from here)."""
    tape, rest = args[0], args[1:]
    if len(rest) != 1 or kwargs:
        raise it.error("library_usage", node, "arguments", name="watch", usage="tape.watch(x)")
    items = rest[0] if isinstance(rest[0], list | tuple) else [rest[0]]
    for x in items:
        v = it.materialize(x) if isinstance(x, Pending) else x
        if not isinstance(v, Value):
            raise it.not_a_tensor(v, node)
        if not v.requires_grad:
            it.passes.make_leaf(v, node)
        tape.state["watched"].add(v.seq)


def sources_of(tape: Opaque, it: Interpreter, v: Value) -> bool:
    """Is v a source this tape differentiates with respect to (a watched tensor, a Variable,
    or a value the tape computed: `tape.gradient(z, y)` of an intermediate y)?"""
    variables = it.library_state.get("variables", set())
    if v.op is not None:
        return recorded(tape, v.seq)
    return v.seq in tape.state["watched"] or (tape.state["variables"] and v.seq in variables)


def reach(tape: Opaque, root: Value) -> tuple[set[int], set[int]]:
    """The sources' seqs reached from root through what the tape recorded, and those reached
    through a value computed outside it."""
    inside: set[int] = set()
    outside: set[int] = set()
    seen: set[int] = set()
    todo: list[tuple[Value, bool]] = [(root, root.op is None or recorded(tape, root.seq))]
    while todo:
        v, ok = todo.pop()
        if (v.seq, ok) in seen:
            continue
        seen.add((v.seq, ok))  # type: ignore[arg-type]
        (inside if ok else outside).add(v.seq)
        if v.op is None:
            continue
        for u in v.inputs:
            todo.append((u, ok and (u.op is None or recorded(tape, u.seq))))
    return inside, outside


def gradient(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    """tape.gradient(target, sources): ∂target/∂source for each, in the sources' structure;
    None for a source the tape did not see the target depend on."""
    from engine.language.calls import Signature

    sig = Signature("gradient", ("self", "target", "sources", "output_gradients?"),
                    (("unconnected_gradients", None),), "tape.gradient(y, x)")  # fmt: skip
    a = sig.bind(it, args, kwargs, node)
    tape: Opaque = a["self"]
    if tape.state["used"] and not tape.state["persistent"]:
        raise it.error("tape_used", node, "backward")
    tape.state["used"] = True
    sources = a["sources"]
    flat = list(sources.values()) if isinstance(sources, dict) else (
        list(sources) if isinstance(sources, list | tuple) else [sources])  # fmt: skip
    target = a["target"]
    targets = list(target.values()) if isinstance(target, dict) else (
        list(target) if isinstance(target, list | tuple) else [target])  # fmt: skip
    xs = [it.materialize(x) if isinstance(x, Pending) else x for x in flat]
    for x in xs:
        if not isinstance(x, Value):
            raise it.not_a_tensor(x, node)
    found: list[Any] = [None] * len(xs)
    for t in targets:  # several targets: the gradient of their sum, as TensorFlow's
        more = connected(it, tape, it.tensor(t, node), xs, a["output_gradients"], node)
        found = [g if f is None else f if g is None else add(it, f, g, node)
                 for f, g in zip(found, more, strict=True)]  # fmt: skip
    zeros = (
        a["unconnected_gradients"] is not None
        and "zero"
        in str(
            getattr(a["unconnected_gradients"], "state", {}).get("name", a["unconnected_gradients"])
        ).lower()
    )
    out = [g if g is not None or not zeros else it.constant(np.zeros(x.data.shape), node)
           for g, x in zip(found, xs, strict=True)]  # fmt: skip
    if isinstance(sources, dict):
        return dict(zip(sources, out, strict=True))
    if isinstance(sources, list | tuple):
        return type(sources)(out)
    return out[0]


def add(it: Interpreter, a: Value, b: Value, node: Any) -> Value:
    from engine.autograd import ops

    return it.op(ops.Add(), (a, b), node)


def connected(it: Interpreter, tape: Opaque, root: Value, xs: list[Value], seed: Any,
              node: Any) -> list[Any]:  # fmt: skip
    from engine.library.transforms import graph_gradients

    inside, outside = reach(tape, root)
    wanted = []
    for x in xs:
        if x.seq in inside and x.seq in outside:
            raise it.error("tape_outside", node, "backward", name=x.name or "a source")
        wanted.append(x.seq in inside and sources_of(tape, it, x) and root.requires_grad)
    if not any(wanted):
        return [None] * len(xs)
    live = [x for x, w in zip(xs, wanted, strict=True) if w]
    if seed is None and root.data.size != 1:  # TensorFlow's gradient of a tensor: of its sum
        seed = it.constant(np.ones(root.data.shape), node)
    elif seed is not None:
        seed = it.tensor(seed, node)
    found = it.passes.gradients(root, live, seed, True, node)
    if it.library_state.get("tapes") and seed is None:  # a tape is open: a graph, to
        found = graph_gradients(it, root, live, node)  # differentiate again
    else:
        found = [None if g is None else it.constant(np.array(g), node) for g in found]
    given = iter(found)
    return [next(given) if w else None for w in wanted]


def jacobian(it: Interpreter, args: list[Any], kwargs: dict[str, Any], node: Any) -> Any:
    """tape.jacobian(y, x): ∂y_i/∂x of every element of y, shaped y.shape + x.shape."""
    tape: Opaque = args[0]
    if len(args) != 3:
        raise it.error("library_usage", node, "arguments", name="jacobian",
                       usage="tape.jacobian(y, x)")  # fmt: skip
    if tape.state["used"] and not tape.state["persistent"]:
        raise it.error("tape_used", node, "backward")
    tape.state["used"] = True
    root, x = it.tensor(args[1], node), args[2]
    x = it.materialize(x) if isinstance(x, Pending) else x
    if not isinstance(x, Value):
        raise it.not_a_tensor(x, node)
    rows = []
    it.count("ops", node, root.data.size)
    for i in range(root.data.size):
        seed = np.zeros(root.data.size)
        seed[i] = 1.0
        g = connected(it, tape, root, [x], it.constant(seed.reshape(root.data.shape), node),
                      node)[0]  # fmt: skip
        if g is None:
            return None
        rows.append(np.asarray(g.data))
    return it.constant(np.stack(rows).reshape(root.data.shape + x.data.shape), node)


OBJECT_METHODS["tape"] = {
    "gradient": Function("gradient", gradient),
    "watch": Function("watch", watch),
    "jacobian": Function("jacobian", jacobian),
}


# --- printing -------------------------------------------------------------------------------
def shape_text(shape: tuple[int, ...]) -> str:
    return f"({', '.join(str(d) for d in shape)}{',' if len(shape) == 1 else ''})"


def printed(it: Interpreter, v: Any, numpy_text: Callable[[np.ndarray], str]) -> str | None:
    """A value as TensorFlow prints it, or None when it is not a tensor."""
    if isinstance(v, Pending):
        v = v.node
    if isinstance(v, Grad):
        return None
    if isinstance(v, Ints):
        data, dtype = v.data, "bool" if v.data.dtype == np.bool_ else "int32"
    elif isinstance(v, Value):
        data, dtype = np.asarray(v.data), "float32"
    else:
        return None
    text = numpy_text(data)
    shape = shape_text(tuple(data.shape))
    if isinstance(v, Value) and v.seq in it.library_state.get("variables", set()):
        shown = text if data.ndim == 0 else f"array({numpy_repr(data)}, dtype={dtype})"
        return f"<tf.Variable 'Variable:0' shape={shape} dtype={dtype}, numpy={shown}>"
    if "\n" in text:
        return f"tf.Tensor(\n{text}, shape={shape}, dtype={dtype})"
    return f"tf.Tensor({text}, shape={shape}, dtype={dtype})"


def numpy_repr(data: np.ndarray) -> str:
    """The inside of NumPy's repr of an array (`[1., 2.]`), as a Variable's numpy= shows it."""
    return np.array2string(data, separator=", ", prefix="array(")
