"""The values given for a program's free names (`values={"x": 2}`): checked against the
program and the limits, and listed for the trace. A free name with no value given is 1.0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.autograd import ops
from engine.errors import ProgramError
from engine.language import ir
from engine.language.positions import did_you_mean
from engine.limits import Limits


def free_names(program: ir.Program, values: dict[str, Any], limits: Limits) -> list[dict[str, Any]]:
    """Check that `values` names only free names; list each free name with its value."""
    free = program.free
    for key in values:
        if key not in free:
            known = ", ".join(free) if free else "none"
            # the key is user input: quote a bounded, encodable piece of it, never all of it
            shown = key[:40].encode("utf-8", "replace").decode("utf-8")
            shown += "…" if len(key) > 40 else ""
            raise ProgramError(
                f"a value is given for '{shown}', but the program has no free name "
                f"'{shown}' (free names: {known}){did_you_mean(key[:100], free)}",
                code="unknown_value",
            )
    out = []
    for name in free:
        given = name in values
        if name in program.label_names:
            out.append({"name": name, "value": values.get(name, 0), "given": given, "labels": True})
            continue
        value = given_value(name, values, limits) if given else np.float64(1.0)
        out.append({"name": name, "value": to_plain(value), "given": given})
    return out


def given_value(name: str, values: dict[str, Any], limits: Limits) -> np.ndarray:
    """The value given for `name` as an array, if it is a finite one within the limits."""
    raw = values[name]
    try:
        array = np.asarray(raw, dtype=np.float64)
    except (ValueError, TypeError):
        raise ProgramError(
            f"the value for '{name}' must be a number or a nested list of "
            "numbers with rows of equal length",
            code="bad_value",
        ) from None
    if array.ndim > ops.MAX_RANK:
        raise ProgramError(
            f"the value for '{name}': {ops.rank_message(array.shape)}", code="bad_value"
        )
    if ops.footprint(array.shape) > limits.max_tensor_elements:
        raise ProgramError(
            f"the value for '{name}' has {ops.footprint(array.shape):,} numbers; the limit "
            f"is {limits.max_tensor_elements:,} (max_tensor_elements)",
            code="too_large",
            limit="max_tensor_elements",
        )
    if not np.isfinite(array).all():
        raise ProgramError(f"the value for '{name}' is not a finite number", code="bad_value")
    return array


def given_labels(name: str, values: dict[str, Any]) -> int | tuple[int, ...]:
    """Class labels given in `values` (JSON numbers arrive as floats): whole numbers only."""
    raw = values.get(name, 0)

    def whole(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int | float) or not float(v).is_integer():
            raise ProgramError(
                f"the value for '{name}' is class labels for cross_entropy: "
                "a whole number or a list of whole numbers",
                code="labels",
            )
        return int(v)

    if isinstance(raw, list | tuple):
        if not raw:
            raise ProgramError(f"the value for '{name}' is an empty list of labels", code="labels")
        return tuple(whole(v) for v in raw)
    return whole(raw)


def to_plain(value: Any) -> Any:
    """A number or nested lists, as JSON has them."""
    array = np.asarray(value, dtype=np.float64)
    return float(array) if array.ndim == 0 else array.tolist()
