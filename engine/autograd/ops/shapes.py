"""Shapes as the ops see them: how many dimensions a value may have, NumPy's broadcast worked
out in Python, what a value is charged against max_tensor_elements, and the error an op raises
when its inputs' shapes or values will not do."""

from __future__ import annotations

import math
from typing import Any

from engine.errors import Msg


class OpError(ValueError):
    """An operation cannot run on these inputs; the language front end adds the position.

    Its message is keyed as every message is (engine/errors.py): `OpError("index_past_axis",
    "index", i=5, n=3)` is the template msg_index_past_axis of engine/words, `.msg` that key and
    its params (worded in any language), `.message` its English. `limit` names the setting
    that stopped it, if one did."""

    def __init__(
        self, key: str, code: str = "op", *, limit: str | None = None, **params: Any
    ) -> None:
        self.msg = Msg(key, params)
        self.message = str(self.msg)
        super().__init__(self.message)
        self.code, self.limit = code, limit


# The most dimensions a value may have. NumPy's arrays stop at 64, and its broadcasting
# (np.broadcast, under np.broadcast_shapes) at 32: past that it raises RuntimeError, not a
# shape error. No lesson comes near it; the language refuses more with a message that says so.
MAX_RANK = 32


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast of `shapes`, worked out in Python: np.broadcast_shapes raises
    RuntimeError past 32 dimensions."""
    if len(shapes) == 2 and shapes[0] == shapes[1]:  # the usual case: nothing to broadcast
        return tuple(shapes[0])
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != out[i]:
                if out[i] != 1 and n != 1:
                    *first, last = (str(tuple(s)) for s in shapes)
                    raise OpError("broadcast", "shape", a=", ".join(first), b=last)
                if out[i] == 1:
                    out[i] = n
    return tuple(out)


def footprint(shape: tuple[int, ...]) -> int:
    """The elements a value of `shape` is charged against max_tensor_elements: its size, with
    a zero-length axis counted as 1. An empty (0, n, n) holds nothing, but reducing away its
    empty axis (`sum(x, axis=0)`) makes n² zeros, and NumPy refuses even to make an empty array
    whose other axes multiply past its index range; so an empty value is charged as if full."""
    size = math.prod(shape)
    return size if size else math.prod(n if n > 0 else 1 for n in shape)


def shape_text(shape: tuple[int, ...]) -> str:
    return "scalar" if shape == () else str(tuple(shape))
