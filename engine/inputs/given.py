"""The values given for a program's free names (`values={"x": 2}`): checked against the
program and the limits, and listed for the trace. A free name with no value given is 1.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.autograd import ops
from engine.errors import Msg, fail
from engine.language.source import close_match
from engine.limits import Limits


def shown_key(key: str) -> str:
    """The key is user input: quote a bounded, encodable piece of it, never all of it."""
    shown = key[:40].encode("utf-8", "replace").decode("utf-8")
    return shown + ("…" if len(key) > 40 else "")


def free_names(
    free: Sequence[str], labels: set[str], values: dict[str, Any], limits: Limits
) -> list[dict[str, Any]]:
    """Check that `values` names only free names; list each free name with its value."""
    for key in values:
        if key not in free:
            hint = close_match(key[:100], free)
            raise fail(
                "unknown_value_hint" if hint else "unknown_value", code="unknown_value",
                name=shown_key(key), known=", ".join(free) if free else "none", hint=hint,
            )  # fmt: skip
    out = []
    for name in free:
        given = name in values
        if name in labels:
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
        raise fail("value_not_numbers", code="bad_value", name=name) from None
    if array.ndim > ops.MAX_RANK:
        raise fail("value_rank", code="bad_value", name=name, max=ops.MAX_RANK)
    if ops.footprint(array.shape) > limits.max_tensor_elements:
        raise fail(
            "limit_max_tensor_elements", code="too_large", limit="max_tensor_elements",
            what=Msg("what_value_for", {"name": name}), n=ops.footprint(array.shape),
            max=limits.max_tensor_elements,
        )  # fmt: skip
    if not np.isfinite(array).all():
        raise fail("value_not_finite", code="bad_value", name=name)
    return array


def given_labels(name: str, values: dict[str, Any], limits: Limits) -> int | tuple[int, ...]:
    """Class labels given in `values` (JSON numbers arrive as floats): whole numbers only, no
    more of them than one value may hold."""
    raw = values.get(name, 0)

    def whole(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int | float) or not float(v).is_integer():
            raise fail("value_labels", code="labels", name=name)
        if abs(v) > 2**62:
            raise fail("value_labels", code="labels", name=name)
        return int(v)

    if isinstance(raw, list | tuple):
        if not raw:
            raise fail("value_labels_empty", code="labels", name=name)
        if len(raw) > limits.max_tensor_elements:
            raise fail(
                "limit_max_tensor_elements", code="too_large", limit="max_tensor_elements",
                what=Msg("what_value_for", {"name": name}), n=len(raw),
                max=limits.max_tensor_elements,
            )  # fmt: skip
        return tuple(whole(v) for v in raw)
    return whole(raw)


def to_plain(value: Any) -> Any:
    """A number or nested lists, as JSON has them."""
    array = np.asarray(value, dtype=np.float64)
    return float(array) if array.ndim == 0 else array.tolist()
