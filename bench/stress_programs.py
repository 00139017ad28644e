"""The hostile programs `python -m bench.stress` sends (issue 11's reproducers and variants).

Each is deterministic text, so two runs send the same work; where a case needs programs that no
cache has seen, a generator takes a number that changes the text and not the cost.
"""

from __future__ import annotations

# --- memory bombs: small text, large derived work (the trace records, JSON, gzip) ---------------

# Issue 11's reproducer, 66 characters: four 16,384-number arrays recorded per step.
SUM_LOOP = "X = zeros(128, 128)\nL = 0\nfor i in range(999):\n    L = L + sum(X)"
# Two such arrays meeting in a fused op: the issue saw 8 GB and a 44 s frozen event loop.
MSE_LOOP = (
    "X = zeros(128, 128)\nY = ones(128, 128)\nL = 0\nfor i in range(999):\n    L = L + mse(X, Y)"
)
# A fused op whose output is smaller than its work: (16384, 1) - (1, 16384) broadcasts to 268 M.
MSE_BROADCAST = "L = mse(zeros(16384, 1), zeros(1, 16384))"


def tensor_loop(steps: int = 999, leaf: str = "randn(128, 128)", term: str = "X.sum()") -> str:
    """The sum loop with another leaf, reduction spelling or length (a different program for
    every `steps`, so the routes' caches cannot share one answer)."""
    return f"X = {leaf}\nL = 0\nfor i in range({steps}):\n    L = L + {term}"


# Lessons that re-run the program (compare_assign, orders, gradcheck) or weigh it (memory, code).
HEAVY_LESSONS = ["compare_assign", "orders", "gradcheck", "memory", "code"]


# --- view-cache growth: heavy but (after the fixes) allowed pages, each a new program -----------


def heavy_view(k: int) -> str:
    """Two 128×128 matrices multiplied, about as heavy as the limits let a program be (a 7 MB
    trace): `seed(k)` makes it new (new numbers, the same cost)."""
    return f"seed({k})\nW = randn(128, 128)\nV = randn(128, 128)\nL = tanh(W @ V).sum()"


# --- layout bombs -------------------------------------------------------------------------------


def skip_dag(n: int = 90, skips: tuple[int, ...] = (1, 10, 30, 50), pad: bool = False) -> str:
    """`h_i = h_{i-1} + h_{i-10} + h_{i-30} + h_{i-50}` (the terms whose index is ≥ 0): long
    skip edges that cost Graphviz seconds. With `pad`, a lone term also adds x, so that no h is
    a copy of another (more nodes: n=70 took `dot` 50 s here). Each n is a new graph shape."""
    lines = ["x = 1.0", "h0 = x"]
    for i in range(1, n):
        terms = [f"h{i - s}" for s in skips if i - s >= 0]
        lines.append(f"h{i} = " + " + ".join(terms + (["x"] if pad and len(terms) == 1 else [])))
    return "\n".join(lines)


def small_picture(k: int) -> str:
    """A new 4-node program (x, y, x*y, +): its names change with `k`, so neither the answer
    caches nor the layout cache (keyed by the DOT text) have seen it."""
    x, y = f"p{k}", f"q{k}"
    return f"{x} = 2.0\n{y} = 3.0\nL = {x}*{y} + {x}"


# --- crash reproducers: each should be a 4xx ---------------------------------------------------

ONES_65 = ", ".join(["1"] * 65)
CRASHES: dict[str, list[tuple[str, str]]] = {
    # name: [(route, program)]; route is "trace" (POST /api/trace) or "svg" (GET /api/svg)
    "65 dimensions": [
        ("trace", f"X = zeros({ONES_65})\nL = X.sum()"),
        ("svg", f"X = randn({ONES_65})\nL = X.sum()"),
        ("trace", f"x = zeros(2)\nL = reshape(x, (2, {', '.join(['1'] * 64)})).sum()"),
    ],
    "softmax over an empty axis": [
        ("trace", "L = softmax(zeros(0)).sum()"),
        ("trace", "L = log_softmax(zeros(0)).sum()"),
        ("svg", "Z = zeros(3, 0)\nL = log_softmax(Z, axis=1).sum()"),
    ],
    "zero-length axis drawn": [
        ("svg", "A = zeros(2, 0, 3)\nL = A.sum()"),
        ("svg", "A = ones(0, 4)\nB = ones(4, 2)\nL = (A @ B).sum()"),
        ("trace", "A = zeros(2, 0, 3)\nL = A.sum()"),
    ],
    "huge range": [
        ("trace", "x = 1.0\nfor i in range(-2**62, 2**62):\n    x = x + 1\nL = x"),
        ("trace", "x = 1.0\nfor i in range(2**63):\n    x = x * 1\nL = x"),
        ("svg", "x = 1.0\nfor i in range(0, 2**62, 2**60):\n    x = x + i\nL = x"),
    ],
}


# --- grad() under concurrency -----------------------------------------------------------------

_GRAD_SHAPES = (
    # Issue 11's: a 24-step tanh chain, then grad of grad (written two ways).
    "x = {x0}\ny = x\nfor i in range(24):\n    y = tanh(y)\ng = grad(y, x)\nh = grad(g, x)\nh",
    "x = {x0}\ny = x\nfor i in range(24):\n    y = tanh(y)\nh = grad(grad(y, x), x)\nh",
    "x = {x0}\nw = 0.7\nL = tanh(w*x)\ng = grad(L, w)\nP = g**2 + L\nP",
    "x = {x0}\ny = x**3\ng = grad(y, x)\nh = grad(g*g, x)\nh",
    "seed(3)\nW = randn(3, 3)\nx = {x0} * randn(3)\nL = tanh(W @ x).sum()\ng = grad(L, W)\n"
    "S = (g*g).sum()\nS",
)


def grad_programs() -> list[str]:
    """Programs that call grad(), several numbers each (15 in all)."""
    return [shape.format(x0=x0) for shape in _GRAD_SHAPES for x0 in (0.5, 0.3, -0.8)]


def salted(source: str, salt: str) -> str:
    """The same program under a new cache key: a comment after the last line changes no node,
    no position and so no byte of the answer."""
    return f"{source}\n# {salt}"


# --- a run's every step metered (issue 20): what once ran past its deadline, or crashed -------

RUN_ATTACKS: dict[str, tuple[str, dict[str, object]]] = {
    # name: (program, extra body fields)
    "a printed list doubled 19 times": (
        "import torch\na = [torch.tensor(1.0)]\nfor i in range(19):\n    a = a + a\nprint(a)\n"
        "L = x * 2",
        {},
    ),
    "a def returning a comprehension whose if is never true": (
        "def f(n):\n    return [i for i in range(n) if i < 0]\nfor k in range(1000):\n"
        "    y = f(9999)\nL = x * 2",
        {},
    ),
    "len() of a list of tensors": (
        "import torch\nxs = [torch.tensor(1.0), torch.tensor(2.0)]\nL = x * len(xs)",
        {},
    ),
    "a list nested 995 deep, printed": (
        "import torch\na = [1.0]\nfor i in range(995):\n    a = [a]\nprint(a)\nL = x * 2",
        {},
    ),
    "indexing with 250k zeros given in values": (
        "L = p[y].sum()",
        {"values": {"p": [1.0, 2.0], "y": [0] * 250_000}},
    ),
    "a string doubled 40 times": ("s = 'a'\nfor i in range(40):\n    s = s + s\nL = x * 2", {}),
    "warnings by the hundred": (
        "\n".join(f"yy{i} = x * 2" for i in range(200))
        + "\n"
        + "\n".join(f"z{i} = y{i} + 1" for i in range(200)),
        {},
    ),
    # loops of passes: refused by their cost before they run long, or summarised
    "backward 1,000 times through a 1,000-node graph": (
        "x = 0.5\nh = x\nfor i in range(999):\n    h = h * 1.0001\n"
        "for i in range(1000):\n    h.backward(retain_graph=True)",
        {},
    ),
    "a 1,000-epoch training loop": (
        "import torch\nX = torch.linspace(0, 1, 20)\ny = 3 * X + 2\n"
        "w = torch.tensor(0.0, requires_grad=True)\nb = torch.tensor(0.0, requires_grad=True)\n"
        "for epoch in range(1000):\n    loss = ((w * X + b - y) ** 2).mean()\n"
        "    loss.backward()\n    with torch.no_grad():\n        w -= 0.5 * w.grad\n"
        "        b -= 0.5 * b.grad\n    w.grad.zero_()\n    b.grad.zero_()",
        {},
    ),
}
