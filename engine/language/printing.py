"""What `print(…)` and `x.grad` show, written as the program's library would print it: a
PyTorch program's tensors as PyTorch does (`tensor(4.)`, `tensor([0.5000, 2.0000],
grad_fn=<MulBackward0>)`), the others as NumPy does (`4.0`, `[1. 2.]`).

A print runs while the program is built, but a grad is known only after backward: a printed
line is kept as parts (text, or a grad to read later) and written out by `lines`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.autograd.value import Value
from engine.language.run_flow import COMPARE
from engine.language.runtime import ListValue, describe, is_number

CUT = "…"  # the part of a printed line past max_print_chars: the rest is not kept
SUMMARY = 1000  # more elements than this are summarised with "...", as both libraries do
EDGE = 3
LINE = 80  # PyTorch's linewidth: a row with more elements than fit is wrapped


@dataclass(frozen=True, slots=True)
class GradPart:
    """`x.grad` in a print: `node`'s grad once backward has run (`after`), else None."""

    node: Value
    after: bool
    how: str | None  # item, tolist, numpy, data, or None


@dataclass(frozen=True, slots=True)
class ComparePart:
    """A comparison in a print (`9*a**2 == a.grad`): its operands' values, a grad among them
    read once backward has run; shown as a tensor of True and False."""

    operands: tuple[np.ndarray | GradPart, ...]
    ops: tuple[str, ...]  # < > <= >= == !=, one between each two operands


@dataclass(frozen=True, slots=True)
class Printed:
    line: int
    parts: tuple[str | GradPart | ComparePart, ...]


# The line that ends printed output past max_print_chars begins so (the app translates it).
CUT_NOTE = "… (the printed output is cut"


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


def torch_text(data: np.ndarray, suffix: str = "") -> str:
    """`tensor(…)` as PyTorch prints it (precision 4, its fixed/scientific choice; True and
    False padded to one width)."""
    booleans = np.asarray(data).dtype == np.bool_
    data = np.asarray(data, dtype=np.bool_ if booleans else np.float64)
    shown = summarized(data) if data.size > SUMMARY else data  # PyTorch's format reads these
    fmt, width = ("{}", 4 if shown.all() else 5) if booleans else torch_number(shown)

    def one(v: float) -> str:
        if booleans:
            return str(bool(v)).rjust(width)
        return (fmt.format(v) if np.isfinite(v) else str(float(v))).rjust(width)

    def rows(a: np.ndarray, indent: int) -> str:
        if a.ndim == 0:
            return one(float(a))
        summarise = data.size > SUMMARY and a.shape[0] > 2 * EDGE
        idx = (
            list(range(EDGE)) + [-1] + list(range(a.shape[0] - EDGE, a.shape[0]))
            if summarise
            else range(a.shape[0])
        )
        if a.ndim == 1:  # wrapped at LINE characters, as PyTorch does
            items = [" ..." if i == -1 else one(float(a[i])) for i in idx]
            per_line = max(1, (LINE - indent) // (width + 2))
            lines = [", ".join(items[k : k + per_line]) for k in range(0, len(items), per_line)]
            return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
        gap = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
        return "[" + gap.join("..." if i == -1 else rows(a[i], indent + 1) for i in idx) + "]"

    text = "tensor(" + rows(data, len("tensor("))
    if suffix:  # `, grad_fn=<…>` on a line of its own past LINE, as PyTorch's _add_suffixes
        last = len(text) - text.rfind("\n") + 1
        bare = suffix.removeprefix(", ")
        text += f",\n{' ' * len('tensor(')}{bare}" if last + len(bare) + 2 > LINE else suffix
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
    booleans = np.asarray(data).dtype == np.bool_
    data = np.asarray(data, dtype=np.bool_ if booleans else np.float64)
    return str(data[()]) if data.ndim == 0 else str(data)


def value_text(v: Any, torch_mode: bool, how: str | None = None) -> str:
    """A printed value: a node, a number, a list of them."""
    if isinstance(v, ListValue):
        inner = ", ".join(value_text(i, torch_mode, how) for i in v.items)
        return f"({inner}{',' if len(v.items) == 1 else ''})" if v.is_tuple else f"[{inner}]"
    if isinstance(v, bool) or v is None:
        return str(v)
    if is_number(v):
        return str(v)
    if not isinstance(v, Value):
        return describe(v)
    return array_text(v.data, torch_mode, how, suffix=suffix_of(v) if torch_mode else "")


def array_text(data: np.ndarray, torch_mode: bool, how: str | None, suffix: str = "") -> str:
    if how == "item":
        return (
            str(float(np.asarray(data).reshape(-1)[0]))
            if np.size(data) == 1
            else "(item() needs one element)"
        )
    if how == "tolist":
        return str(np.asarray(data, dtype=np.float64).tolist())
    if how == "numpy" or not torch_mode:
        return numpy_text(data)
    return torch_text(data, "" if how == "data" else suffix)


def suffix_of(v: Value) -> str:
    if not v.requires_grad:
        return ""
    if v.op is None:
        return ", requires_grad=True"
    # the op's own name for its node (engine/autograd/ops); its own name if PyTorch has none
    name = v.op.grad_fn(v.inputs) or f"{type(v.op).__name__}Backward0"
    return f", grad_fn=<{name}>"


def grad_text(part: GradPart, grad: np.ndarray | None, torch_mode: bool) -> str:
    """x.grad as printed: None in PyTorch before backward, and for a node that is not a leaf
    (PyTorch keeps only the leaves' grads)."""
    node = part.node
    if torch_mode and (not part.after or node.kind != "leaf"):
        return "None"
    if grad is None:
        if torch_mode:
            return "None"
        grad = np.zeros(node.data.shape)
    return array_text(np.asarray(grad, dtype=np.float64), torch_mode, part.how)


def compare_text(part: ComparePart, grad_of: Any, torch_mode: bool) -> str:
    """A comparison's result as the library prints it: `tensor([True, True])`, `[ True
    False]`. In PyTorch a grad that is None (before backward, or of a node that is not a
    leaf) compares as False."""
    arrays = []
    for o in part.operands:
        if isinstance(o, GradPart):
            grad = grad_of(o.node)
            if torch_mode and (not o.after or o.node.kind != "leaf" or grad is None):
                return "False"
            o = np.zeros(o.node.data.shape) if grad is None else np.asarray(grad)
        arrays.append(np.asarray(o, dtype=np.float64))
    result = np.ones(np.broadcast_shapes(*(a.shape for a in arrays)), dtype=np.bool_)
    for op, a, b in zip(part.ops, arrays, arrays[1:], strict=False):
        result &= COMPARE[op](a, b)
    return torch_text(result) if torch_mode else numpy_text(result)


def part_text(part: str | GradPart | ComparePart, grad_of: Any, torch_mode: bool) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, ComparePart):
        return compare_text(part, grad_of, torch_mode)
    return grad_text(part, grad_of(part.node), torch_mode)


def lines(
    printed: list[Printed], grad_of: Any, torch_mode: bool, max_chars: int
) -> list[dict[str, Any]]:
    """Each printed line `{line, text}`, the grads read now; cut after max_chars in all, with
    a last line that says so (max_print_chars)."""
    out: list[dict[str, Any]] = []
    total = 0
    for p in printed:
        if p.parts == (CUT,):
            total = max_chars + 1
        text = (
            ""
            if total > max_chars
            else " ".join(part_text(part, grad_of, torch_mode) for part in p.parts)
        )
        total += len(text) + 1
        if total > max_chars:
            out.append(
                {
                    "line": p.line,
                    "text": f"{CUT_NOTE} at {max_chars:,} characters, max_print_chars)",
                }
            )
            break
        out.append({"line": p.line, "text": text})
    return out
