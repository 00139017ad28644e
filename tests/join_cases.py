"""Rows of the op table (tests/strategies.py's OpCase) for the ops of code as students already
write it: cat, stack, clamp and gather (integer-array indexing). tests/test_ops_torch.py checks
them against PyTorch, tests/test_gradcheck.py against central differences, like every other
row. Repeated indices are in the gather rows on purpose: their gradients must add up."""

from __future__ import annotations

from typing import Any

import engine.autograd.ops as O
from tests.strategies import OpCase


def _torch() -> Any:
    import torch

    return torch


def _long(values: Any) -> Any:
    torch = _torch()
    return torch.tensor(values, dtype=torch.long)


def join_cases() -> list[OpCase]:
    return [
        OpCase(
            "cat-vectors",
            "cat",
            lambda a, b: O.cat([a, b]),
            lambda a, b: _torch().cat([a, b]),
            ((3,), (2,)),
        ),
        OpCase(
            "cat-axis-1-three",
            "cat",
            lambda a, b, c: O.cat([a, b, c], axis=1),
            lambda a, b, c: _torch().cat([a, b, c], dim=1),
            ((2, 1), (2, 3), (2, 2)),
        ),
        OpCase(
            "cat-axis--1",
            "cat",
            lambda a, b: O.cat([a, b], axis=-1),
            lambda a, b: _torch().cat([a, b], dim=-1),
            ((2, 2, 1), (2, 2, 3)),
        ),
        OpCase(
            "cat-same-input-twice",
            "cat",
            lambda a: O.cat([a, a]),
            lambda a: _torch().cat([a, a]),
            ((3,),),
        ),
        OpCase(
            "stack-scalars",
            "stack",
            lambda a, b, c: O.stack([a, b, c]),
            lambda a, b, c: _torch().stack([a, b, c]),
            ((), (), ()),
        ),
        OpCase(
            "stack-axis-1",
            "stack",
            lambda a, b: O.stack([a, b], axis=1),
            lambda a, b: _torch().stack([a, b], dim=1),
            ((2, 3), (2, 3)),
        ),
        OpCase(
            "stack-axis--1",
            "stack",
            lambda a, b: O.stack([a, b], axis=-1),
            lambda a, b: _torch().stack([a, b], dim=-1),
            ((3,), (3,)),
        ),
        OpCase(
            "clamp-both",
            "clamp",
            lambda x: O.clamp(x, -0.5, 1.0),
            lambda t: _torch().clamp(t, -0.5, 1.0),
            ((2, 4),),
        ),
        OpCase(
            "clamp-min-only",
            "clamp",
            lambda x: O.clamp(x, 0.0),
            lambda t: _torch().clamp(t, min=0.0),
            ((5,),),
        ),
        OpCase(
            "clamp-max-only",
            "clamp",
            lambda x: O.clamp(x, None, 0.25),
            lambda t: _torch().clamp(t, max=0.25),
            ((),),
        ),
        # On a bound the gradient passes (PyTorch's convention); with min > max every element is
        # max, with gradient 0. Kinks: no central differences there.
        OpCase(
            "clamp-on-the-bounds",
            "clamp",
            lambda x: O.clamp(x, 0.0, 1.0),
            lambda t: _torch().clamp(t, 0.0, 1.0),
            ((5,),),
            fixed=[[-1.0, 0.0, 0.5, 1.0, 2.0]],
            kink=True,
        ),
        OpCase(
            "clamp-min-above-max",
            "clamp",
            lambda x: O.clamp(x, 1.0, 0.0),
            lambda t: _torch().clamp(t, 1.0, 0.0),
            ((4,),),
            kink=True,
        ),
        OpCase(
            "gather-repeated",
            "gather",
            lambda x: O.gather(x, ((0, 2, 0, 0),)),
            lambda t: t[[0, 2, 0, 0]],
            ((3,),),
        ),
        OpCase(
            "gather-rows-and-labels",
            "gather",
            lambda p: O.gather(p, ((0, 1, 2), (2, 0, 2))),
            lambda t: t[_long([0, 1, 2]), _long([2, 0, 2])],
            ((3, 4),),
        ),
        OpCase(
            "gather-columns",
            "gather",
            lambda x: O.gather(x, (slice(None), (1, 1, 0))),
            lambda t: t[:, [1, 1, 0]],
            ((2, 3),),
        ),
        OpCase(
            "gather-negative-and-an-int",
            "gather",
            lambda x: O.gather(x, ((-1, 0), 1)),
            lambda t: t[[-1, 0], 1],
            ((3, 2),),
        ),
    ]
