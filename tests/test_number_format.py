"""The one number format (engine/drawing/numbers.py `fmt`) passes every case of
tests/cases/number_format.json, the file the page's JavaScript formats are held to as well."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from engine.drawing.numbers import fmt

CASES = json.loads((Path(__file__).parent / "cases" / "number_format.json").read_text("utf-8"))
NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}  # JSON has no such numbers


def number(value: Any) -> float | int | None:
    """A case's input as fmt gets it: non-finite numbers are written as strings."""
    return NON_FINITE[value] if isinstance(value, str) else value


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda case: repr(case["in"]))
def test_fmt_passes_every_shared_case(case: dict[str, Any]) -> None:
    assert fmt(number(case["in"])) == case["out"]


def test_the_shared_cases_cover_ties_subnormals_negative_zero_and_missing_numbers() -> None:
    inputs = [number(case["in"]) for case in CASES["cases"]]
    assert any(isinstance(x, float) and x == 0 and math.copysign(1, x) < 0 for x in inputs)
    assert any(isinstance(x, float) and 0 < abs(x) < 2.2250738585072014e-308 for x in inputs)
    assert 1.0625 in inputs and 9999.5 in inputs  # exact binary ties: away from zero
    assert None in inputs and any(isinstance(x, float) and math.isnan(x) for x in inputs)
