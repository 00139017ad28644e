"""What `print(…)`, a notebook's display and a format string show, written as the program's
library would: a PyTorch program's tensors as PyTorch prints them (`tensor(4.)`,
`tensor([0.5000, 2.0000], grad_fn=<MulBackward0>)`, with PyTorch's default float64 spelling:
no dtype), the others as NumPy does (`4.0`, `[1. 2.]`); Python's numbers, lists, tuples and
None as Python does. Every piece is charged against max_print_chars as it is made, so a
printed list of a thousand tensors stops at the limit, not after it.
"""

from __future__ import annotations

import re
import string
from typing import Any

import numpy as np

from engine.autograd.value import Value
from engine.language.values import (
    Array,
    Closure,
    Function,
    Grad,
    Ints,
    Module,
    Opaque,
    Pending,
    Size,
)

SUMMARY = 1000  # more elements than this are summarised with "...", as both libraries do
EDGE = 3
LINE = 80  # PyTorch's linewidth: a row with more elements than fit is wrapped
MAX_NESTING = 64  # lists inside lists a print follows
MAX_FIELD = 100  # a format's width or precision ("%.100000f" is refused)


def is_extremes(v: Any) -> bool:
    from engine.library.extremes import Extremes

    return isinstance(v, Extremes)


def library_text(it: Any, v: Any, node: Any, depth: int) -> str | None:
    """What the other spellings print (issue 25): a dict as Python prints it, torch's
    return_types.max, micrograd's Value(data=…, grad=…), TensorFlow's tf.Tensor(…); None for
    the rest."""
    from engine.library.extremes import Extremes, torch_printed

    if isinstance(v, dict):  # {'x': <tf.Tensor …>}
        inner = ", ".join(f"{k!r}: {print_text(it, x, node, depth + 1, quoted=True)}"
                          for k, x in v.items())  # fmt: skip
        it.check_chars(len(inner), node)
        return "{" + inner + "}"
    if isinstance(v, Extremes):
        if it.torch:
            return torch_printed(v, lambda x: print_text(it, x, node, depth + 1))
        return print_text(it, tuple(v), node, depth)
    libraries = it.scan.libraries
    micrograd = "micrograd" in libraries and not {"torch", "tensorflow"} & libraries
    if isinstance(v, Value) and micrograd:
        from engine.library.spellings import micrograd_printed

        return micrograd_printed(v)
    if "tensorflow" in libraries:
        from engine.library.tape import printed

        return printed(it, v, lambda data: array_text(data, False, ""))
    return None


def print_text(it: Any, v: Any, node: Any, depth: int = 0, quoted: bool = False) -> str:
    """`str(v)` as the program's library gives it (`repr` inside lists, as Python does)."""
    if depth > MAX_NESTING:
        raise it.error("print_too_deep", node, "too_deep", max=MAX_NESTING)
    if isinstance(v, str):
        return repr(v) if quoted else v
    if isinstance(v, Size) and it.torch and "tensorflow" not in it.scan.libraries:
        return f"torch.Size([{', '.join(str(d) for d in v)}])"
    if isinstance(v, list | tuple) and not is_extremes(v):
        parts = []
        for x in v:
            parts.append(print_text(it, x, node, depth + 1, quoted=True))
            it.check_chars(len(parts[-1]) + 2, node)
        inner = ", ".join(parts)
        if isinstance(v, tuple):
            return f"({inner}{',' if len(v) == 1 else ''})"
        return f"[{inner}]"
    if isinstance(v, range):
        return repr(v)
    if isinstance(v, Pending):
        v = v.node
    shown = library_text(it, v, node, depth)
    if shown is not None:
        return shown
    if isinstance(v, Value):
        return array_text(v.data, it.torch, suffix(v) if it.torch else "")
    if isinstance(v, Grad):
        return grad_text(it, v)
    if isinstance(v, Ints):
        return ints_text(v.data, it.torch)
    if isinstance(v, Array):
        return numpy_text(v.data)
    if isinstance(v, np.generic):
        return str(v.item()) if not isinstance(v, np.bool_) else str(bool(v))
    if isinstance(v, Closure | Function):
        return f"<function {v.name}>"
    if isinstance(v, Module):
        return f"<module '{v.path}'>"
    if isinstance(v, Opaque):
        return v.state.get("shown") or f"<{v.kind}>"  # a jax.random key: its two words
    return str(v)


def display_text(it: Any, v: Any, node: Any, plain: bool = False) -> str:
    """What a notebook shows for a bare expression: `repr` for Python's values (a string in
    quotes), the print form for tensors."""
    if isinstance(v, str) and not plain:
        it.check_chars(len(v) + 2, node)
        return repr(v)
    return print_text(it, v, node)


def grad_text(it: Any, g: Grad) -> str:
    """`x.grad` as printed: None before its first pass in PyTorch (and for a node that is not
    a leaf, whose grad PyTorch does not keep); zeros in a program without torch."""
    owner, grad = g.owner, g.owner.grad
    if it.torch and (owner.kind != "leaf" and not it.passes.retains(owner)):
        return "None"
    if grad is None:
        if it.torch:
            return "None"
        grad = np.zeros(owner.data.shape)
    return array_text(np.asarray(grad, dtype=np.float64), it.torch)


def array_text(data: np.ndarray, torch: bool, tail: str = "") -> str:
    return torch_text(data, tail) if torch else numpy_text(data)


def suffix(v: Value) -> str:
    """`, grad_fn=<MulBackward0>` or `, requires_grad=True` for a tensor that needs a grad."""
    if not v.requires_grad:
        return ""
    if v.op is None:
        return ", requires_grad=True"
    return f", grad_fn=<{grad_fn_name(v)}>"


def grad_fn_name(v: Value) -> str:
    op: Any = v.op
    namer = getattr(op, "grad_fn", None)
    if callable(namer):
        name = namer(v.inputs)
        if name:
            return str(name)
    return op.name.capitalize() + "Backward0"


def torch_number(values: np.ndarray) -> tuple[str, int]:
    """PyTorch's format for a tensor's elements and the width it pads them to (measured, as
    PyTorch does, over the nonzero finite elements only)."""
    finite = values[np.isfinite(values) & (values != 0)]
    if finite.size == 0:
        return "{:.0f}.", 1
    low, high = float(np.abs(finite).min()), float(np.abs(finite).max())
    whole = bool(np.all(finite == np.ceil(finite)))
    wide = high / low > 1000.0 or high > 1.0e8
    if whole:
        fmt = "{:.4e}" if wide else "{:.0f}."
    else:
        fmt = "{:.4e}" if wide or low < 1.0e-4 else "{:.4f}"
    return fmt, max(1, *(len(fmt.format(v)) for v in finite.ravel()))


def torch_text(data: np.ndarray, tail: str = "") -> str:
    """`tensor(…)` as PyTorch prints it (precision 4, its fixed/scientific choice; True and
    False padded to one width; whole numbers of an int tensor padded to the widest)."""
    data = np.asarray(data)
    if data.size == 0:  # `tensor([])`, `tensor([], size=(2, 0, 3))`
        size = "" if data.ndim == 1 else f", size={tuple(int(d) for d in data.shape)}"
        return f"tensor([]{size}{tail})"
    kind = "bool" if data.dtype == np.bool_ else "int" if data.dtype.kind in "iu" else "float"
    if kind == "float":
        data = data.astype(np.float64)
    shown = summarized(data) if data.size > SUMMARY else data
    if kind == "bool":
        fmt, width = "{}", 4 if shown.all() else 5
    elif kind == "int":
        fmt, width = "{}", max(1, *(len(str(int(v))) for v in shown.ravel())) if shown.size else 1
    else:
        fmt, width = torch_number(shown)

    def one(v: Any) -> str:
        if kind == "bool":
            return str(bool(v)).rjust(width)
        if kind == "int":
            return str(int(v)).rjust(width)
        return (fmt.format(v) if np.isfinite(v) else str(float(v))).rjust(width)

    def rows(a: np.ndarray, indent: int) -> str:
        if a.ndim == 0:
            return one(a[()])
        summarise = data.size > SUMMARY and a.shape[0] > 2 * EDGE
        idx = (
            list(range(EDGE)) + [-1] + list(range(a.shape[0] - EDGE, a.shape[0]))
            if summarise
            else range(a.shape[0])
        )
        if a.ndim == 1:  # wrapped at LINE characters, as PyTorch does
            items = [" ..." if i == -1 else one(a[i]) for i in idx]
            per_line = max(1, (LINE - indent) // (width + 2))
            lines = [", ".join(items[k : k + per_line]) for k in range(0, len(items), per_line)]
            return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
        gap = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
        return "[" + gap.join("..." if i == -1 else rows(a[i], indent + 1) for i in idx) + "]"

    text = "tensor(" + rows(data, len("tensor("))
    if tail:  # `, grad_fn=<…>` on a line of its own past LINE, as PyTorch's _add_suffixes
        last = len(text) - text.rfind("\n") + 1
        bare = tail.removeprefix(", ")
        text += f",\n{' ' * len('tensor(')}{bare}" if last + len(bare) + 2 > LINE else tail
    return text + ")"


def summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarised tensor shows, the first and last EDGE along each axis: PyTorch
    chooses its format (fixed or scientific, the width) from these only."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * EDGE:
        a = np.concatenate([a[:EDGE], a[-EDGE:]])
    return a if a.ndim == 1 else np.stack([summarized(r) for r in a])


def numpy_text(data: np.ndarray) -> str:
    data = np.asarray(data)
    if data.dtype.kind not in "biu":
        data = data.astype(np.float64)
    return str(data[()]) if data.ndim == 0 else str(data)


def ints_text(data: np.ndarray, torch: bool) -> str:
    return torch_text(data) if torch else numpy_text(data)


# --- format strings ---------------------------------------------------------------------
SPEC = re.compile(r"^(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[_,]?(?:\.(\d+))?[bcdeEfFgGnosxX%]?$")


def check_spec(it: Any, spec: str, node: Any) -> None:
    """A format spec whose width or precision would make more than MAX_FIELD characters (or
    one Python does not know) is refused before it is applied."""
    m = SPEC.match(spec)
    if m is None:
        raise it.error("format_spec", node, "invalid", spec=spec[:20])
    for part in m.groups():
        if part and int(part) > MAX_FIELD:
            raise it.error("format_field", node, "too_large", max=MAX_FIELD)


def format_value(it: Any, v: Any, spec: str, conversion: int, node: Any) -> str:
    """`f"{v:spec}"`: a number formatted as Python does; a one-number tensor as its number
    (PyTorch's Tensor.__format__ for a 0-d tensor); anything else only without a spec."""
    if conversion == ord("r"):
        v = display_text(it, v, node)
    elif conversion in (ord("s"), ord("a")):
        v = print_text(it, v, node)
    number = as_number(v) if it.torch and not isinstance(v, str) else None
    if number is not None and not isinstance(v, bool | int | float):  # Tensor.__format__:
        v = number  # a 0-d tensor is formatted as its number, f"{loss}" as f"{loss.item()}"
    if spec:
        check_spec(it, spec, node)
        number = as_number(v)
        if number is None:
            raise it.error("format_tensor", node, "invalid", spec=spec[:20])
        try:
            return format(number, spec)
        except (ValueError, TypeError):
            raise it.error("format_spec", node, "invalid", spec=spec[:20]) from None
    return v if isinstance(v, str) else print_text(it, v, node)


def as_number(v: Any) -> Any:
    """The number a format applies to: a number, or a 0-d tensor's."""
    if isinstance(v, bool | int | float):
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, Pending):
        v = v.node
    if isinstance(v, Value | Ints) and v.data.ndim == 0:
        return v.data[()].item()
    if isinstance(v, Grad) and v.owner.grad is not None and np.ndim(v.owner.grad) == 0:
        return float(v.owner.grad)
    return None


PERCENT = re.compile(
    r"%(?:\((\w+)\))?([#0\- +]*)(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])"
)


def percent_format(it: Any, fmt: str, args: Any, node: Any) -> str:
    """`"%.4f" % loss`: Python's %-formatting, a tensor of one number read as its number
    (float(t)), `%s` as its print form."""
    values = list(args) if isinstance(args, tuple) else [args]
    converted = []
    for m in PERCENT.finditer(fmt):
        kind = m.group(5)
        if kind == "%":
            continue
        for part in (m.group(3), m.group(4)):
            if part and part != "*" and int(part) > MAX_FIELD:
                raise it.error("format_field", node, "too_large", max=MAX_FIELD)
        if not values:
            raise it.error("format_args", node, "invalid")
        v = values.pop(0)
        if kind in "rsa":
            converted.append(print_text(it, v, node) if kind == "s" else display_text(it, v, node))
        else:
            number = as_number(v)
            if number is None and isinstance(v, Value | Pending | Grad):
                number = one_value(v)
            if number is None:
                raise it.error("format_tensor", node, "invalid", spec=kind)
            converted.append(number)
    if values:
        raise it.error("format_args", node, "invalid")
    try:
        text = fmt % tuple(converted)
    except (TypeError, ValueError):
        raise it.error("format_spec", node, "invalid", spec=fmt[:20]) from None
    it.check_chars(len(text), node)
    return text


def one_value(v: Any) -> Any:
    data = v.owner.grad if isinstance(v, Grad) else (v.node if isinstance(v, Pending) else v).data
    return None if data is None or np.size(data) != 1 else float(np.asarray(data).reshape(()))


def format_method(it: Any, fmt: str, args: list[Any], kwargs: dict[str, Any], node: Any) -> str:
    """`"{:.4f} {}".format(a, b)`: Python's str.format, each field formatted as an f-string's."""
    out: list[str] = []
    auto = 0
    for literal, field, spec, conversion in string.Formatter().parse(fmt):
        out.append(literal)
        if field is None:
            continue
        if field == "":
            key: Any = auto
            auto += 1
        else:
            key = int(field) if field.isdigit() else field
        if isinstance(key, int):
            if key >= len(args):
                raise it.error("format_args", node, "invalid")
            v = args[key]
        elif key in kwargs:
            v = kwargs[key]
        else:
            raise it.error("format_args", node, "invalid")
        conv = {"r": ord("r"), "s": ord("s"), "a": ord("a")}.get(conversion or "", -1)
        out.append(format_value(it, v, spec or "", conv, node))
        it.check_chars(len(out[-1]), node)
    return "".join(out)
