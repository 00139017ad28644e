"""One program, three spellings: gradtrace's own, NumPy's (`import numpy as np`, np.concatenate,
np.clip, x.shape[0]) and PyTorch's (`import torch`, torch.tensor(…, requires_grad=True),
torch.cat, dim=). A hypothesis strategy draws the program once, as a small tree over the
newer names (cat, stack, clamp, maximum, index lists and ranges, lengths, constant tensors,
arange with fractions, linspace), and writes it each way. The PyTorch spelling is real PyTorch
code: run as it is, it must give gradtrace's grads (tests/test_lessons_code.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

NUMBERS = [-1.5, -0.5, 0.25, 0.5, 1.0, 2.0]
# Every expression is a vector of 3 values; the leaves: x (3,), W (2, 3), t and s (3,).
ATOMS = ["x", "W[0]", "W[1]", "t", "s"]
LEAVES = ("x", "W", "t", "s")
Node = tuple[Any, ...]


@st.composite
def vector(draw: st.DrawFn, depth: int = 0) -> Node:
    kinds = ["atom"] if depth >= 3 else ["atom"] * 2 + [
        "mul", "add", "tanh", "clamp", "max", "gather", "rows", "cat", "stack", "len", "const",
    ]  # fmt: skip
    kind = draw(st.sampled_from(kinds))
    sub = vector(depth + 1)
    if kind == "atom":
        return ("atom", draw(st.sampled_from(ATOMS)))
    if kind in ("mul", "add", "cat", "stack"):
        return (kind, draw(sub), draw(sub))
    if kind in ("tanh", "len", "const"):
        return (kind, draw(sub))
    if kind == "clamp":
        lo = draw(st.sampled_from([None, -0.5, 0.0, 0.25]))
        hi = draw(st.sampled_from([None, 0.5, 1.0, 1.5] if lo is not None else [0.5, 1.0]))
        return (kind, draw(sub), lo, hi)
    if kind == "max":
        return (kind, draw(sub), draw(st.sampled_from([0.0, 0.5])))
    if kind == "gather":  # x[[i, j, k]], repeats allowed
        return (kind, tuple(draw(st.integers(-3, 2)) for _ in range(3)))
    rows = tuple(draw(st.integers(0, 1)) for _ in range(3))
    return ("rows", rows, tuple(draw(st.integers(0, 2)) for _ in range(3)), draw(st.booleans()))


def write(node: Node, how: str) -> str:
    """The expression in one spelling: "plain", "numpy" or "torch"."""
    kind = node[0]
    if kind == "atom":
        return str(node[1])
    if kind in ("mul", "add"):
        return f"({write(node[1], how)} {'*' if kind == 'mul' else '+'} {write(node[2], how)})"
    if kind == "tanh":
        return {"plain": "tanh({})", "numpy": "np.tanh({})", "torch": "torch.tanh({})"}[how].format(
            write(node[1], how)
        )
    if kind == "clamp":
        x, lo, hi = write(node[1], how), node[2], node[3]
        if how == "torch":
            bounds = ", ".join(f"{k}={v}" for k, v in (("min", lo), ("max", hi)) if v is not None)
            return f"torch.clamp({x}, {bounds})"
        return f"{'np.clip' if how == 'numpy' else 'clamp'}({x}, {lo}, {hi})"
    if kind == "max":
        x, c = write(node[1], how), node[2]
        if how == "torch":
            return f"torch.maximum({x}, torch.tensor({c}))"
        return f"{'np.maximum' if how == 'numpy' else 'max'}({x}, {c})"
    if kind == "gather":
        return f"x[[{', '.join(map(str, node[1]))}]]"
    if kind == "rows":  # W[[0, 1, 1], [2, 0, 2]], or one row's elements through a range
        if node[3]:
            return f"W[[{', '.join(map(str, node[1]))}], [{', '.join(map(str, node[2]))}]]"
        return f"W[{node[1][0]}, range(2, -1, -1)]"
    if kind == "cat":
        a, b = write(node[1], how), write(node[2], how)
        fn = {"plain": "cat", "numpy": "np.concatenate", "torch": "torch.cat"}[how]
        return f"{fn}([{a}[:1], {b}[1:]])"
    if kind == "stack":
        a, b = write(node[1], how), write(node[2], how)
        if how == "torch":
            return f"torch.stack([{a}, {b}], dim=1).sum(dim=1)"
        fn = "np.stack" if how == "numpy" else "stack"
        return f"{fn}([{a}, {b}], axis=1).sum(axis=1)"
    if kind == "len":
        return f"({write(node[1], how)} * {'len(x)' if how == 'plain' else 'x.shape[0]'})"
    made = {"plain": "{}", "numpy": "np.array({})", "torch": "torch.tensor({})"}[how]
    return f"({write(node[1], how)} * {made.format('[0.5, -1.0, 2.0]')})"


HEADS = {
    "plain": ["x = {x}", "W = {W}", "t = arange(0, 1.5, 0.5)", "s = linspace(-1, 1, 3)"],
    "numpy": [
        "import numpy as np", "x = np.array({x})", "W = np.array({W})",
        "t = np.arange(0, 1.5, 0.5)", "s = np.linspace(-1, 1, 3)",
    ],
    "torch": [
        "import torch", "x = torch.tensor({x}, requires_grad=True)",
        "W = torch.tensor({W}, requires_grad=True)",
        "t = torch.arange(0, 1.5, 0.5, requires_grad=True)",
        "s = torch.linspace(-1, 1, 3, requires_grad=True)",
    ],
}  # fmt: skip


@st.composite
def spelled_program(draw: st.DrawFn) -> dict[str, str]:
    """{"plain": source, "numpy": source, "torch": source}: one program, L its scalar output."""
    x = [draw(st.sampled_from(NUMBERS)) for _ in range(3)]
    W = [[draw(st.sampled_from(NUMBERS)) for _ in range(3)] for _ in range(2)]
    terms = draw(st.lists(vector(), min_size=1, max_size=3))
    out = {}
    for how, head in HEADS.items():
        lines = [line.format(x=x, W=W) for line in head]
        if how == "torch":
            total = " + ".join(f"{write(t, how)}.sum()" for t in terms)
            lines += [f"L = {total}", "L.backward()"]
        else:
            fn = "np.sum" if how == "numpy" else "sum"
            lines.append("L = " + " + ".join(f"{fn}({write(t, how)})" for t in terms))
        out[how] = "\n".join(lines)
    return out
