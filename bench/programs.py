"""The programs the bench runs: sized random DAGs, a scalar MLP, distinct small programs.

Every generator is deterministic (its own `random.Random`), so two runs measure the same work.
"""

from __future__ import annotations

import random

FUNCS = ("tanh", "sin", "cos", "sigmoid")


def sized_program(n: int, salt: int = 0) -> str:
    """A scalar program of about `n` graph nodes (up to ~1,000 within max_source_chars):
    leaves, then statements that each feed the next (so every node reaches the output) and
    reuse earlier values (fan-out, as in real programs). `salt` changes the numbers, not the
    shape: a new program of the same size."""
    rng = random.Random(n * 7919 + 13)
    k = min(max(2, n // 8), 40)
    lines = [f"a{i} = {rng.uniform(-1, 1) + salt * 1e-3:.4f}" for i in range(k)]
    names = [f"a{i}" for i in range(k)]
    count = k
    j = 0
    prev = names[0]
    while count < n:
        left = n - count
        # Each leaf is used once early on; later inputs come from the last dozen values, as
        # in a program written by hand (uses far from their definition make layouts slow).
        a = names[j] if j < k else rng.choice(names[-12:])
        b = rng.choice(names[-12:])
        if left >= 3:
            line = f"t{j} = {rng.choice(FUNCS)}({prev}*{a} + {b})"
            count += 3
        else:
            line = f"t{j} = {prev}*{a}" if left == 1 else f"t{j} = {prev}*{a} + {b}"
            count += left
        lines.append(line)
        prev = f"t{j}"
        names.append(prev)
        j += 1
    return "\n".join(lines)


def loop_program(n: int, salt: int = 0) -> str:
    """About `n` nodes from an unrolled loop (an RNN cell on a scalar): what a large graph
    looks like in practice, since max_source_chars keeps hand-written ones small."""
    steps = max(1, (n - 4) // 3)
    return (
        f"w = 0.9\nb = {0.1 + salt * 1e-6:.7f}\nh = 0.5\n"
        f"for i in range({steps}):\n    h = tanh(h*w + b)\nL = h"
    )


def mlp_program(nin: int = 3, sizes: tuple[int, ...] = (4, 4, 1), seed: int = 1) -> str:
    """MLP(3, [4, 4, 1]) written out as scalars, micrograd's lecture network: each neuron is
    tanh(b + Σ wᵢ·xᵢ) (the sum starts at b, as micrograd's `sum(..., self.b)`), the inputs are
    numbers written in the expressions (constants, as micrograd wraps floats)."""
    rng = random.Random(seed)
    lines: list[str] = []
    xs = [f"{v:.1f}" for v in (2.0, 3.0, -1.0)[:nin]]
    dims = (nin, *sizes)
    for layer, (fan_in, fan_out) in enumerate(zip(dims, dims[1:], strict=False), start=1):
        outs = []
        for j in range(fan_out):
            terms = []
            for i in range(fan_in):
                w = f"w{layer}_{j}_{i}"
                lines.append(f"{w} = {rng.uniform(-1, 1):.4f}")
                terms.append(f"{w}*{xs[i]}" if layer == 1 else f"{w}*{xs[i]}")
            b = f"b{layer}_{j}"
            lines.append(f"{b} = {rng.uniform(-1, 1):.4f}")
            h = f"h{layer}_{j}"
            lines.append(f"{h} = tanh({b} + " + " + ".join(terms) + ")")
            outs.append(h)
        xs = outs
    return "\n".join(lines)


def small_program(i: int) -> str:
    """The i-th of an endless supply of distinct small programs (a tanh neuron, ~15 nodes),
    what a class of students types: new numbers every time, so no cache can answer."""
    rng = random.Random(i)
    w1, w2, b = (round(rng.uniform(-3, 3), 4) for _ in range(3))
    return (
        f"x1 = 2.0\nx2 = {i % 7}.0\nw1 = {w1}\nw2 = {w2}\nb = {b}\n"
        "n = x1*w1 + x2*w2 + b\no = tanh(n)"
    )


# Programs of several passes, shared by the bench's pass row and the tests of the page's
# passes (tests/test_browser_passes.py, tests/test_passes_page.py).
# Three backward() calls on one leaf: its grad accumulates 4, 8, 12 (PyTorch's numbers).
LOOP = (
    "import torch\n"
    "w = torch.tensor(1.0, requires_grad=True)\n"
    "for i in range(3):\n"
    "    loss = (w*2 - 1)**2\n"
    "    loss.backward()\n"
    "    print(w.grad)"
)
# A 100-epoch linear regression by hand (100 passes, 599 steps): SGD, grads zeroed each epoch.
REGRESSION = (
    "import torch\n"
    "xs = torch.linspace(-1, 1, 20)\n"
    "ys = 3*xs + 0.5\n"
    "w = torch.tensor(0.0, requires_grad=True)\n"
    "b = torch.tensor(0.0, requires_grad=True)\n"
    "for epoch in range(100):\n"
    "    loss = ((w*xs + b - ys)**2).mean()\n"
    "    loss.backward()\n"
    "    with torch.no_grad():\n"
    "        w -= 0.1 * w.grad\n"
    "        b -= 0.1 * b.grad\n"
    "        w.grad.zero_()\n"
    "        b.grad.zero_()\n"
)
