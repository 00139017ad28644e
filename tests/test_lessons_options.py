"""The lessons' options are typed (a TypedDict per lesson): the API refuses an unknown one, or
one of the wrong kind, by name (400, bad_option)."""

from __future__ import annotations

import contextlib
import typing
from typing import Any

import pytest

from engine.errors import ProgramError
from engine.lessons import LESSONS, OPTIONS, checked_options, run_lessons
from engine.program import run_program


def refusal(lesson: str, given: Any) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        checked_options(lesson, given)
    assert info.value.code == "bad_option" and info.value.status == 400
    return info.value


@pytest.mark.parametrize(
    ("lesson", "given", "message"),
    [
        ("orders", 3, "the options for orders must be an object"),
        ("orders", [], "the options for orders must be an object"),
        ("orders", {"x": 1}, "orders has no option 'x' (it takes: call_limit)"),
        ("orders", {1: 2}, "orders has no option '1' (it takes: call_limit)"),
        ("code", {"a": 1}, "code has no option 'a' (it takes none)"),
        ("mistakes", {"z" * 50: 1},
         f"mistakes has no option {'z' * 40!r} (it takes: drop, upstream)"),
        ("gradcheck", {"accumulate": "assign"},
         "gradcheck has no option 'accumulate' (it takes: max_elements)"),
    ],
)  # fmt: skip
def test_an_unknown_option_is_refused_with_what_the_lesson_takes(lesson, given, message):
    assert str(refusal(lesson, given)) == message


@pytest.mark.parametrize(
    ("lesson", "key", "value"),
    [
        ("orders", "call_limit", True),
        ("orders", "call_limit", 3.0),
        ("gradcheck", "max_elements", "3"),
        ("mistakes", "drop", 3),
        ("mistakes", "upstream", "a"),
        ("mistakes", "upstream", {"a": 1}),
    ],
)
def test_an_option_of_the_wrong_kind_is_refused_by_name(lesson: str, key: str, value: Any):
    message = f"{lesson}'s option {key} has the wrong kind of value"
    assert str(refusal(lesson, {key: value})) == message


@pytest.mark.parametrize(
    ("lesson", "given"),
    [
        ("orders", None),
        ("orders", {"call_limit": 3}),
        ("code", {}),
        ("gradcheck", {"max_elements": 5}),
        ("mistakes", {"drop": None, "upstream": None}),
        ("mistakes", {"drop": "n2", "upstream": 1.5}),
        ("mistakes", {"upstream": 2}),
        ("mistakes", {"upstream": True}),  # a bool is a number in Python, as it always was here
        ("mistakes", {"upstream": [1, [2]]}),  # the items are the lesson's to look at
    ],
)
def test_an_option_of_its_kind_is_taken_as_given(lesson: str, given: Any):
    assert checked_options(lesson, given) == (given or {})


def test_every_option_kind_has_a_json_check():
    for name, options in OPTIONS.items():
        assert name in LESSONS
        for key in typing.get_type_hints(options):
            # Taken or refused as the wrong kind, never a TypeError for a kind with no check.
            with contextlib.suppress(ProgramError):
                checked_options(name, {key: None})


def test_run_lessons_refuses_an_unknown_lesson_by_name():
    with pytest.raises(ProgramError) as info:
        run_lessons(run_program("x*y", {"x": 1, "y": 2}), ["nope"])
    assert str(info.value).startswith("unknown lesson 'nope'; the lessons are compare_assign")
