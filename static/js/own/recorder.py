"""Record a student's own autograd engine as it runs: its nodes, every local backward call with
the grads it changed (before and after), and each op's local slopes by central differences.

This file runs inside Pyodide, in the student's browser (static/js/own/worker.js); the tests
also import it in CPython. It never runs on the server. `record(source)` returns a dict in the
shape POST /api/own takes (docs/own.md): the server validates and draws it and names the bugs.

How the student's nodes are found, without asking them to change a line: a class is a node
class when an instance, once made, holds a number under one of DATA_NAMES, a grad under one of
GRAD_NAMES, and either children (CHILD_NAMES) with a local backward closure (BACKWARD_NAMES),
micrograd's form, or a `history` whose `last_fn` is a ScalarFunction, MiniTorch's. A profile
hook (sys.setprofile) sees each `__init__` return; the frame that called it is the operation
that made the node (its `maker`), re-run later on perturbed copies of its inputs.

A backward pass is a call of a function whose name says backward or backprop, with a node as
its first argument, not inside another pass. While it runs, each local backward call opens a
step (a micrograd closure is wrapped for the pass; a ScalarFunction's `backward(ctx, d)` is seen
by the hook), and a step lasts until the next one opens: MiniTorch accumulates what `backward`
returned after it returns, and that belongs to the step too.
"""

from __future__ import annotations

import contextlib
import copy
import math
import sys
import time
import traceback

DATA_NAMES = ("data", "value", "val")
GRAD_NAMES = ("grad", "derivative", "gradient")
CHILD_NAMES = ("_prev", "_children", "children", "_parents", "parents", "prev", "_inputs", "inputs")
BACKWARD_NAMES = ("_backward", "_backward_fn", "backward_fn", "_grad_fn", "grad_fn")
HISTORY_NAMES = ("history", "_history")
PASS_WORDS = ("backward", "backprop")
FILENAME = "<your code>"

MAX_NODES = 2_000  # nodes recorded (engine/own/limits.py: max_own_nodes)
MAX_STEPS = 5_000  # local backward calls recorded (max_own_steps)
MAX_PASSES = 8  # backward passes recorded (max_own_passes)
MAX_LABEL = 40  # characters of a label
MAX_PRINTED = 200  # lines of the student's print() kept for the page
MAX_PRINTED_CHARS = 1_000  # characters of one of them


class Stop(Exception):
    """A limit of the recording was reached: the message says which."""


def _number(v):
    """`v` as a float when it is a plain number (a bool is not one), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            import numbers

            if isinstance(v, numbers.Real) and not isinstance(v, bool):
                return float(v)
        except Exception:
            return None
        return None
    return float(v)


class Shape:
    """Which attributes of a node class hold its value, grad, children and backward."""

    def __init__(self, data, grad, children=None, backward=None, history=None):
        self.data, self.grad = data, grad
        self.children, self.backward, self.history = children, backward, history

    def inputs(self, node):
        if self.history is not None:
            h = getattr(node, self.history, None)
            if h is None or getattr(h, "last_fn", None) is None:
                return []
            return [x for x in (getattr(h, "inputs", None) or ())]
        kids = getattr(node, self.children, None)
        try:
            return list(kids or ())
        except TypeError:
            return []


def shape_of(obj):
    """The Shape of `obj`'s class if `obj` looks like a node, else None."""
    names = set(dir(obj))
    data = next(
        (n for n in DATA_NAMES if n in names and _number(getattr(obj, n, None)) is not None), None
    )
    if data is None:
        return None
    grad = next((n for n in GRAD_NAMES if n in names and not callable(getattr(obj, n, None))), None)
    if grad is None:
        return None
    g = getattr(obj, grad, None)
    if g is not None and _number(g) is None:
        return None
    for h in HISTORY_NAMES:
        hist = getattr(obj, h, None) if h in names else None
        if hist is not None and hasattr(hist, "inputs") and hasattr(hist, "last_fn"):
            return Shape(data, grad, history=h)
    children = next((n for n in CHILD_NAMES if n in names), None)
    backward = next(
        (n for n in BACKWARD_NAMES if n in names and callable(getattr(obj, n, None))), None
    )
    if children is None or backward is None:
        return None
    return Shape(data, grad, children=children, backward=backward)


class Node:
    """What the recorder knows of one student node."""

    __slots__ = ("obj", "id", "shape", "maker", "op", "line", "inputs", "value", "slopes")

    def __init__(self, obj, nid, shape):
        self.obj, self.id, self.shape = obj, nid, shape
        self.maker = None  # (function, positional args, keyword args) that made it
        self.op = None
        self.line = None
        self.inputs = []  # the nodes it was made from, in the order of the op's arguments
        self.value = _number(getattr(obj, shape.data, None))  # as made (an update comes later)
        self.slopes = []


def _call_args(frame):
    """The positional and keyword arguments a frame's function holds now (micrograd rebinds
    `other` to a Value: the node passed on is what the op used)."""
    code = frame.f_code
    names = code.co_varnames
    loc = frame.f_locals
    n = code.co_argcount
    pos = [loc.get(x) for x in names[:n]]
    i = n + code.co_kwonlyargcount
    kw = {x: loc.get(x) for x in names[n:i]}
    if code.co_flags & 0x04:  # *args
        pos.extend(loc.get(names[i], ()) or ())
        i += 1
    if code.co_flags & 0x08:  # **kwargs
        kw.update(loc.get(names[i], {}) or {})
    return pos, kw


def _function_of(frame, pos):
    """The function object running in `frame`: found on the class of its first argument (a
    method, classmethod or staticmethod), or among the globals (a plain function)."""
    code = frame.f_code
    first = pos[0] if pos else None
    classes = []
    if isinstance(first, type):
        classes = list(first.__mro__)
    elif first is not None:
        classes = list(type(first).__mro__)
    for k in classes:
        f = vars(k).get(code.co_name)
        raw = getattr(f, "__func__", f)
        if getattr(raw, "__code__", None) is code:
            return raw
    f = frame.f_globals.get(code.co_name)
    if getattr(f, "__code__", None) is code:
        return f
    return None


class Recorder:
    def __init__(self, max_nodes=MAX_NODES, max_steps=MAX_STEPS, max_passes=MAX_PASSES):
        self.max_nodes, self.max_steps, self.max_passes = max_nodes, max_steps, max_passes
        self.nodes = []
        self.by_obj = {}  # id(obj) -> Node (the objects are kept alive in self.nodes)
        self.shapes = {}  # class -> Shape
        self.ctx = {}  # id(ctx) -> Node: a ScalarFunction's context names its node
        self.passes = []
        self.steps = []
        self.pass_frame = None
        self.open = None  # (node, snapshot) of the step being recorded
        self.wrapped = []
        self.checking = False
        self.last = []
        self.stopped = None

    # --- nodes ------------------------------------------------------------------------------
    def node_of(self, obj):
        return self.by_obj.get(id(obj))

    def register(self, obj, init_frame):
        if id(obj) in self.by_obj:
            return
        shape = self.shapes.get(type(obj))
        if shape is None:
            shape = shape_of(obj)
            if shape is None:
                return
            self.shapes[type(obj)] = shape
        if len(self.nodes) >= self.max_nodes:
            self.stop(f"your code made more than {self.max_nodes} nodes (max_own_nodes)")
        node = Node(obj, f"n{len(self.nodes)}", shape)
        if node.value is not None and not math.isfinite(node.value):
            self.stop(
                f"a node's value became {node.value} (made in {init_frame.f_back.f_code.co_name})"
            )
        self.nodes.append(node)
        self.by_obj[id(obj)] = node
        if shape.history is not None:
            ctx = getattr(getattr(obj, shape.history, None), "ctx", None)
            if ctx is not None:
                self.ctx[id(ctx)] = node
        maker = init_frame.f_back
        if maker is not None:
            pos, kw = _call_args(maker)
            fn = _function_of(maker, pos)
            if fn is not None:
                node.maker = (fn, pos, kw)
                node.op = maker.f_code.co_name
        node.line = self._user_line(init_frame)
        node.inputs = _order_inputs(self, node)
        if node.inputs:
            # Now, while the op's inputs hold the values it used: a training loop changes a
            # parameter's data after backward, and the op would then be measured elsewhere.
            self.checking = True
            try:
                node.slopes = local_slopes(node, self)
            finally:
                self.checking = False

    def stop(self, message):
        """A limit reached: remembered (the student's code might catch the exception) and
        raised."""
        self.stopped = self.stopped or message
        raise Stop(message)

    def _user_line(self, frame):
        """The line of the student's code outside their node classes that made the node."""
        f, line = frame, None
        while f is not None:
            if f.f_code.co_filename == FILENAME:
                line = f.f_lineno
                if f.f_code.co_name == "<module>":
                    return line
            f = f.f_back
        return line

    # --- the hook ---------------------------------------------------------------------------
    def hook(self, frame, event, arg):
        if self.checking:
            return
        code = frame.f_code
        if event == "return":
            if code.co_name == "__init__" and code.co_argcount:
                obj = frame.f_locals.get(code.co_varnames[0])
                if obj is not None and not isinstance(obj, type):
                    self.register(obj, frame)
            elif frame is self.pass_frame:
                self.end_pass()
            return
        if event != "call":
            return
        if self.pass_frame is None:
            name = code.co_name.lower()
            if code.co_argcount and any(w in name for w in PASS_WORDS):
                first = frame.f_locals.get(code.co_varnames[0])
                if self.node_of(first) is not None:
                    self.begin_pass(frame, first)
            return
        # Inside a pass: a ScalarFunction's backward(ctx, d_output) opens its node's step.
        if code.co_name in ("backward", "_backward") and code.co_argcount >= 2:
            loc = frame.f_locals
            for name in code.co_varnames[: code.co_argcount]:
                node = self.ctx.get(id(loc.get(name)))
                if node is not None:
                    self.begin_step(node)
                    return

    # --- passes and steps -------------------------------------------------------------------
    def grads(self):
        """Every node's grad now (None, MiniTorch's grad before any, is 0)."""
        out = []
        for n in self.nodes:
            g = getattr(n.obj, n.shape.grad, None)
            x = _number(g) if g is not None else 0.0
            if x is None:
                self.stop(f"the grad of {n.id} is not a number: {type(g).__name__}")
            out.append(x)
        return out

    def begin_pass(self, frame, output):
        if len(self.passes) >= self.max_passes:
            self.stop(f"your code ran backward more than {self.max_passes} times (max_own_passes)")
        self.pass_frame = frame
        out = self.node_of(output)
        self.passes.append(
            {
                "output": out.id,
                "first_step": len(self.steps),
                "grads_before": self.grads(),
                # The values the forward pass used: what this pass's end-to-end check replays.
                "values": [_number(getattr(n.obj, n.shape.data, None)) for n in self.nodes],
            }
        )
        self.open = (out, "seed", self.passes[-1]["grads_before"])
        for n in self.nodes:
            if n.shape.backward is None:
                continue
            original = getattr(n.obj, n.shape.backward, None)
            if not callable(original):
                continue
            try:
                setattr(n.obj, n.shape.backward, self._wrapper(n, original))
                self.wrapped.append((n, original))
            except Exception:
                pass

    def _wrapper(self, node, original):
        recorder = self

        def local_backward(*args, **kwargs):
            recorder.begin_step(node)
            return original(*args, **kwargs)

        local_backward.__wrapped__ = original
        return local_backward

    def close_step(self):
        """Record the open step: every grad that differs from its value when the step opened."""
        if self.open is None:
            return
        node, kind, before = self.open
        self.open = None
        after = self.grads()
        self.last = after
        changed = {i: (b, a) for i, (b, a) in enumerate(zip(before, after, strict=False)) if a != b}
        for i, (b, a) in changed.items():
            if not (math.isfinite(a) and math.isfinite(b)):
                self.stop(
                    f"the grad of {self.nodes[i].id} became {a} in a backward step of {node.id}"
                )
        if kind == "backward" and not node.inputs and not changed:
            return  # a leaf's backward (micrograd calls it too) that did nothing: not a step
        if len(self.steps) >= self.max_steps:
            self.stop(f"your backward made more than {self.max_steps} steps (max_own_steps)")
        self.steps.append(
            {
                "node": node.id,
                "kind": kind,
                "pass": len(self.passes) - 1,
                "upstream": before[int(node.id[1:])],
                "changed": {self.nodes[i].id: [b, a] for i, (b, a) in changed.items()},
            }
        )

    def begin_step(self, node):
        """A local backward call opens `node`'s step (and closes the one before it)."""
        if self.open is not None:
            self.close_step()
            before = self.last
        else:
            before = self.grads()
        self.open = (node, "backward", before)

    def end_pass(self):
        self.close_step()
        for n, original in self.wrapped:
            with contextlib.suppress(Exception):
                setattr(n.obj, n.shape.backward, original)
        self.wrapped = []
        p = self.passes[-1]
        p["last_step"] = len(self.steps) - 1
        self.pass_frame = None


# --- running the student's code -------------------------------------------------------------


def run_code(source, recorder, namespace):
    code = compile(source, FILENAME, "exec")
    sys.setprofile(recorder.hook)
    try:
        exec(code, namespace)
    finally:
        sys.setprofile(None)
        if recorder.pass_frame is not None:  # an exception inside backward
            recorder.end_pass()


def user_error(exc):
    """The student's exception as a message with the line of their code it came from."""
    tb = traceback.extract_tb(exc.__traceback__)
    line = None
    for fr in tb:
        if fr.filename == FILENAME:
            line = fr.lineno
    return {"message": f"{type(exc).__name__}: {exc}", "line": line}


# --- the checks: central differences of each op, and of the output against each leaf --------


def _copy_with(node, value):
    c = copy.copy(node.obj)
    setattr(c, node.shape.data, value)
    return c


def _step(x):
    return 1e-6 * max(1.0, abs(x))


def _value_of(out, shape):
    v = getattr(out, shape.data, None)
    return _number(v)


def _call(maker, swap):
    fn, pos, kw = maker
    sub = lambda a: swap.get(id(a), a)  # noqa: E731
    return fn(*[sub(a) for a in pos], **{k: sub(v) for k, v in kw.items()})


def local_slopes(node, rec):
    """∂(node)/∂(each input), by central differences of the op that made it, re-run on copies of
    its inputs with one moved by ±h. None for an input that is not an argument of that op (a
    number it wrapped itself). A kink (the one-sided slopes differ) gives both sides."""
    out = []
    if node.maker is None:
        return [None for _ in node.inputs]
    fn, pos, kw = node.maker
    args = {id(a) for a in list(pos) + list(kw.values())}
    for child in node.inputs:
        if id(child.obj) not in args:
            out.append(None)
            continue
        x = _number(getattr(child.obj, child.shape.data))
        h = _step(x)
        try:
            f = {}
            for k, dx in (("p", h), ("m", -h), ("0", 0.0)):
                res = _call(node.maker, {id(child.obj): _copy_with(child, x + dx)})
                f[k] = _value_of(res, node.shape)
            if None in f.values():
                out.append(None)
                continue
            central = (f["p"] - f["m"]) / (2 * h)
            right = (f["p"] - f["0"]) / h
            left = (f["0"] - f["m"]) / h
            entry = {"slope": central}
            if abs(right - left) > 1e-3 * max(1.0, abs(right), abs(left)):
                entry["left"], entry["right"] = left, right
            out.append(entry if all(math.isfinite(v) for v in entry.values()) else None)
        except Exception:
            out.append(None)
    return out


def replay(nodes, output, leaf, dx, values):
    """The output's value with `leaf` moved by dx: every op re-run in creation order on the
    replayed values of its inputs, the leaves at `values` (id -> value, as the pass began)."""
    made = {}
    for n in nodes:
        if not n.inputs:
            x = values.get(n.id, n.value)
            made[id(n.obj)] = _copy_with(n, x + (dx if n is leaf else 0.0))
            continue
        if n.maker is None:
            return None
        res = _call(n.maker, {id(c.obj): made[id(c.obj)] for c in n.inputs if id(c.obj) in made})
        made[id(n.obj)] = res
        if n is output:
            break
    return _value_of(made.get(id(output.obj)), output.shape)


def end_to_end(rec, sub, output, deadline, values):
    """d output / d leaf for every leaf the output depends on, by central differences of a
    replay of the whole graph."""
    out = []
    for n in sub:
        if n.inputs or time.monotonic() > deadline:
            continue
        x = values.get(n.id, n.value)
        h = _step(x)
        try:
            p = replay(sub, output, n, h, values)
            m = replay(sub, output, n, -h, values)
        except Exception:
            p = m = None
        if p is None or m is None:
            continue
        slope = (p - m) / (2 * h)
        if math.isfinite(slope):
            out.append({"leaf": n.id, "slope": slope})
    return out


# --- the trace ------------------------------------------------------------------------------


def _order_inputs(rec, node):
    """A node's inputs in the order of the op's arguments (a set's order would change from run
    to run), then any others in creation order."""
    kids = []
    for k in node.shape.inputs(node.obj):
        n = rec.node_of(k)
        if n is not None and n not in kids:
            kids.append(n)
    if node.maker is not None:
        _, pos, kw = node.maker
        rank = {}
        for i, a in enumerate(list(pos) + list(kw.values())):
            rank.setdefault(id(a), i)
        kids.sort(key=lambda n: (rank.get(id(n.obj), 10**6), int(n.id[1:])))
    return kids


def _labels(rec, namespace):
    """A name for each node the student named: the variable bound to it when their code ended,
    else its own `label` or `name` (the lecture's Value(2.0, label="a"))."""
    names = {}
    for k, v in namespace.items():
        n = rec.node_of(v) if not k.startswith("_") else None
        if n is not None and len(k) <= MAX_LABEL:
            names.setdefault(n.id, k)
    for n in rec.nodes:
        if n.id not in names:
            for attr in ("label", "name"):
                own = getattr(n.obj, attr, None)
                if isinstance(own, str) and own.strip():
                    names[n.id] = clean(own)
                    break
    return names


def clean(text):
    """A label the server takes: printable, at most MAX_LABEL characters."""
    out = "".join(ch if ch.isprintable() else "?" for ch in str(text))
    return out[:MAX_LABEL] or "?"


def _op_text(node, rec):
    op = None
    prev = getattr(node.obj, "_op", None)
    if isinstance(prev, str) and prev:
        op = prev
    elif node.shape.history is not None:
        fn = getattr(getattr(node.obj, node.shape.history, None), "last_fn", None)
        op = getattr(fn, "__name__", None)
    return clean(op or node.op or "op")


def build_trace(rec, namespace, deadline):
    if not rec.passes:
        return None
    # The nodes the passes' outputs depend on, in creation order (a topological order).
    keep = set()
    todo = [rec.nodes[int(p["output"][1:])] for p in rec.passes]
    while todo:
        n = todo.pop()
        if n.id in keep:
            continue
        keep.add(n.id)
        todo.extend(n.inputs)
    for st in rec.steps:  # a node whose backward ran is shown, reachable or not
        keep.add(st["node"])
    sub = [n for n in rec.nodes if n.id in keep]
    names = _labels(rec, namespace)
    final = rec.grads()
    nodes = []
    labels = {}
    values = rec.passes[-1]["values"]
    for n in sub:
        # An op's value as it was made; a leaf's as the last backward pass began (a training
        # loop changes it after backward).
        i = int(n.id[1:])
        value = n.value if n.inputs or i >= len(values) or values[i] is None else values[i]
        op = _op_text(n, rec) if n.inputs else None
        label = names.get(n.id) or _compose(op, [labels.get(c.id, "?") for c in n.inputs], value)
        labels[n.id] = label
        entry = {
            "id": n.id,
            "name": names.get(n.id),
            "label": label,
            "kind": "op" if n.inputs else "leaf",
            "op": _op_text(n, rec) if n.inputs else None,
            "inputs": [c.id for c in n.inputs if c.id in keep],
            "value": value,
            "grad": final[int(n.id[1:])],
            "line": n.line,
        }
        if n.inputs:
            entry["maker"] = n.op
            entry["args"] = _maker_args(rec, n, keep)
        nodes.append(entry)
    return {"nodes": nodes, "sub": sub}


def _maker_args(rec, node, keep):
    """The op's positional arguments as the server can read them: a node's id, a number, or
    None for anything else (a class, a string…): gradtrace's engine re-runs the same method on
    its own values when it has one of that name (engine/own/reference.py)."""
    if node.maker is None:
        return []
    out = []
    for a in node.maker[1][:8]:
        n = rec.node_of(a)
        out.append((n.id if n.id in keep else None) if n is not None else _number(a))
    return out


def fmt_number(v):
    return f"{v:.4g}" if v is not None else "?"


def _compose(op, inputs, value):
    """A label for an unnamed node: its number for a leaf; `a*b`, `b**3`, `ReLU(c)` for an op
    when short, else the op alone (the server numbers labels that repeat)."""
    if op is None:
        return fmt_number(value)
    wrap = lambda s: s if s.replace(".", "").replace("_", "").isalnum() else f"({s})"  # noqa: E731
    if op.startswith("**") and len(inputs) == 1:
        text = wrap(inputs[0]) + op
    elif not any(ch.isalpha() for ch in op) and len(inputs) == 2:
        text = wrap(inputs[0]) + op + wrap(inputs[1])
    elif len(inputs) == 1:
        text = f"{op}({inputs[0]})"
    else:
        text = op
    return text if len(text) <= 16 else op


def record(source, limits=None, budget_seconds=None):
    """Run `source` with the recorder on: {"trace": …} in POST /api/own's shape, or
    {"error": {"message", "line"}}. `limits`: max_own_nodes, max_own_steps, max_own_passes."""
    limits = limits or {}
    rec = Recorder(
        limits.get("max_own_nodes", MAX_NODES),
        limits.get("max_own_steps", MAX_STEPS),
        limits.get("max_own_passes", MAX_PASSES),
    )
    namespace = {"__name__": "__main__"}
    printed = []

    def student_print(*args, sep=" ", end="\n", **_):
        if len(printed) < MAX_PRINTED:  # what the page shows; the rest is not kept
            line = sep.join(str(a) for a in args) + ("" if end == "\n" else end)
            printed.append(line[:MAX_PRINTED_CHARS])

    namespace["print"] = student_print
    t0 = time.monotonic()
    try:
        run_code(source, rec, namespace)
    except Stop as stop:
        return {"error": {"message": str(stop), "line": None}, "printed": printed}
    except SyntaxError as err:
        return {"error": {"message": f"SyntaxError: {err.msg}", "line": err.lineno}}
    except BaseException as exc:  # the student's own error, whatever it is
        return {"error": user_error(exc), "printed": printed}
    ran = time.monotonic() - t0
    if rec.stopped:  # a limit, even if the student's code caught its exception
        return {"error": {"message": rec.stopped, "line": None}, "printed": printed}
    deadline = time.monotonic() + (budget_seconds or 10.0)
    try:
        built = build_trace(rec, namespace, deadline)
        if built is None:
            return {
                "error": {"message": "no backward", "code": "no_backward", "line": None},
                "printed": printed,
            }
        result = finish(rec, built, deadline)
    except Stop as stop:
        return {"error": {"message": str(stop), "line": None}, "printed": printed}
    result["printed"] = printed[:200]
    result["timing"] = {"run": ran, "check": time.monotonic() - t0 - ran}
    return result


def finish(rec, built, deadline):
    nodes, sub = built["nodes"], built["sub"]
    rec.checking = True
    sys.setprofile(None)
    index = {n.id: i for i, n in enumerate(rec.nodes)}
    kept = {n["id"] for n in nodes}
    checks = {}
    for n in sub:
        if n.inputs:
            checks[n.id] = [
                dict(s, input=c.id, arg=i)
                for i, (c, s) in enumerate(zip(n.inputs, n.slopes, strict=False))
                if s and c.id in kept
            ]
    last = rec.passes[-1]
    output = rec.nodes[int(last["output"][1:])]
    values = {n.id: last["values"][index[n.id]] for n in sub if index[n.id] < len(last["values"])}
    values = {k: v for k, v in values.items() if v is not None}
    live, todo = set(), [output]
    while todo:  # the last pass's graph: what its output depends on
        n = todo.pop()
        if n.id not in live:
            live.add(n.id)
            todo.extend(n.inputs)
    e2e = end_to_end(rec, [n for n in sub if n.id in live], output, deadline, values)
    steps = []
    for st in rec.steps:
        if st["node"] not in kept:
            continue
        steps.append(
            {
                "node": st["node"],
                "kind": st["kind"],
                "pass": st["pass"],
                "upstream": st["upstream"],
                "changed": {k: v for k, v in st["changed"].items() if k in kept},
            }
        )
    passes = [
        {
            "output": p["output"],
            "grads_before": {
                n.id: p["grads_before"][index[n.id]]
                for n in sub
                if index[n.id] < len(p["grads_before"])
            },
        }
        for p in rec.passes
    ]
    return {
        "trace": {
            "version": 1,
            "output": output.id,
            "nodes": nodes,
            "steps": steps,
            "passes": passes,
            "checks": {"local": checks, "end_to_end": e2e},
        }
    }
