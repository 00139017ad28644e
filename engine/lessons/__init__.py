"""The lessons the course notes teach, each a view over the same run program (docs/lessons.md).

Each lesson is a pure function `lesson(run, **options) -> dict` (JSON-ready, ids as in the
trace) of an `engine.program.Run`: the one parse, build and backward pass that the page's trace
comes from too. A lesson that needs another backward pass runs it on that graph, and leaves
the run as it found it. `run_lessons` runs the ones asked for; POST /api/trace returns them
under `"lessons"` when its request names them:

    from engine import lessons
    from engine.program import run_program
    run = run_program("x*y + x", {"x": 2, "y": 3})
    lessons.compare_assign(run)["wrong"]                                # ['x']
    lessons.run_lessons(run, ["orders"], options={"orders": {"call_limit": 10}})
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from engine.errors import Msg, fail
from engine.lessons.code import code
from engine.lessons.compare import compare_assign
from engine.lessons.forward import forward_mode
from engine.lessons.gradcheck import GradcheckOptions, gradcheck
from engine.lessons.higher_order import higher
from engine.lessons.memory import memory
from engine.lessons.mistakes import MistakesOptions, mistakes
from engine.lessons.on_pass import kept_pass, pass_run
from engine.lessons.orders import OrdersOptions, orders
from engine.lessons.shapes import shapes
from engine.lessons.training import TrainingOptions, training
from engine.limits import check_deadline
from engine.program import Run
from engine.tracing.cost import AnswerBudget

Lesson = Callable[..., dict[str, Any]]


LESSONS: dict[str, Lesson] = {
    "compare_assign": compare_assign,
    "orders": orders,
    "gradcheck": gradcheck,
    "higher": higher,
    "forward": forward_mode,
    "shapes": shapes,
    "memory": memory,
    "code": code,
    "mistakes": mistakes,
    "training": training,
}

# The lessons that look at one backward pass: of a program of several, the pass on show
# (`run_lessons(..., on_pass=k)`, engine/lessons/on_pass.py: the lesson on that pass's
# graph, steps and leaf values). A lesson not named here reads the
# whole run (`code` writes the whole program out; a lesson over every pass, as training).
ON_PASS: frozenset[str] = frozenset(
    {"compare_assign", "orders", "gradcheck", "higher", "forward", "shapes", "memory", "mistakes"}
)

# The options a lesson takes through the API: a TypedDict per lesson, its `**options`' type.
# A lesson not named here takes none.
OPTIONS: dict[str, type] = {
    "orders": OrdersOptions,
    "gradcheck": GradcheckOptions,
    "mistakes": MistakesOptions,
    "training": TrainingOptions,
}


def accepts(kind: Any, value: Any) -> bool:
    """Is `value`, as JSON decoded it, of this option kind? An `int` is a whole number and never
    a bool; a `float` is any number (and a bool, which Python counts as a number, as before); a
    `list` is any list (the lesson looks at its items)."""
    if kind is None or kind is type(None):
        return value is None
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return any(accepts(arm, value) for arm in typing.get_args(kind))
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float)
    if kind is str:
        return isinstance(value, str)
    if kind is list or typing.get_origin(kind) is list:
        return isinstance(value, list)
    raise TypeError(f"an option of kind {kind!r} has no JSON check")


def checked_options(name: str, given: Any) -> dict[str, Any]:
    """The options for one lesson, refused (400) unless each is one it takes, of its kind."""
    if given is None:
        return {}
    kinds = typing.get_type_hints(OPTIONS[name]) if name in OPTIONS else {}
    if not isinstance(given, dict):
        raise fail("options_not_object", code="bad_option", name=name)
    for key, value in given.items():
        if key not in kinds:
            if kinds:
                raise fail("no_such_option", code="bad_option", name=name,
                           option=repr(str(key)[:40]), takes=", ".join(kinds))  # fmt: skip
            raise fail("takes_no_options", code="bad_option", name=name, option=repr(str(key)[:40]))
        if not accepts(kinds[key], value):
            raise fail("option_kind", code="bad_option", name=name, option=key)
    return dict(given)


def run_lessons(
    run: Run,
    names: Sequence[str],
    *,
    options: dict[str, Any] | None = None,
    budget: AnswerBudget | None = None,
    on_pass: int | None = None,
) -> dict[str, Any]:
    """{name: lesson data} for each name asked for, from the one run: `run_lessons(run, names,
    options={name: {option: value}}, budget=..., on_pass=k)`. A lesson of ON_PASS looks at
    the pass `on_pass` (an index into the run's passes, clamped; a summarised pass is seen as
    the nearest kept one) of a program of several passes, every other lesson (and every lesson
    when `on_pass` is None) at the whole run. Raises ProgramError for an unknown name or
    option, and (413) once the lessons take the answer past `max_answer_numbers`: `budget` is
    what the answer has spent already (its trace). The request's deadline is checked before
    each lesson, and by each as it goes."""
    budget = budget if budget is not None else AnswerBudget(run.limits)
    out: dict[str, Any] = {}
    for name in dict.fromkeys(names):
        lesson = LESSONS.get(name)
        if lesson is None:
            raise fail("unknown_lesson", code="bad_option", name=repr(name[:40]),
                       lessons=", ".join(LESSONS))  # fmt: skip
        given = checked_options(name, (options or {}).get(name))
        check_deadline()
        with pass_run(run, on_pass if name in ON_PASS else None) as seen:
            out[name] = lesson(seen, **given)
        budget.charge(Msg("what_lesson", {"name": name}), out[name])
    return out


def lesson_passes(run: Run, names: Sequence[str], on_pass: int | None) -> dict[str, int | None]:
    """The pass each lesson asked for looked at (`run_lessons(..., on_pass=k)`): its index in
    the run's passes, or None for a lesson of the whole run (and for a program of one pass)."""
    passes = run.trace.passes
    if len(passes) <= 1 or on_pass is None:
        return {name: None for name in dict.fromkeys(names)}
    k = kept_pass(passes, on_pass)
    return {name: k if name in ON_PASS else None for name in dict.fromkeys(names)}


__all__ = [
    "LESSONS",
    "ON_PASS",
    "code",
    "compare_assign",
    "forward_mode",
    "gradcheck",
    "higher",
    "lesson_passes",
    "memory",
    "mistakes",
    "orders",
    "run_lessons",
    "shapes",
    "training",
]
