"""The lessons the course notes teach, each a view over the same program (docs/lessons.md).

Each lesson is a pure function `lesson(source, values=None, **options) -> dict` (JSON-ready,
ids as in the trace). `run_lessons` runs the ones asked for; POST /api/trace returns them under
`"lessons"` when its request names them:

    from engine import lessons
    lessons.compare_assign("x*y + x", {"x": 2, "y": 3})["wrong"]        # ['x']
    lessons.run_lessons("x*y + x", {"x": 2, "y": 3}, ["orders"])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.errors import ProgramError
from engine.lessons.code import code
from engine.lessons.compare import compare_assign
from engine.lessons.forward import forward_mode
from engine.lessons.gradcheck import gradcheck
from engine.lessons.higher_order import higher
from engine.lessons.memory import memory
from engine.lessons.mistakes import mistakes
from engine.lessons.orders import orders
from engine.lessons.shapes import shapes
from engine.limits import DEFAULT_LIMITS, Limits
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
}


# The options a lesson takes through the API, and what each must be.
OPTIONS: dict[str, dict[str, Callable[[Any], bool]]] = {
    "orders": {"call_limit": lambda v: isinstance(v, int) and not isinstance(v, bool)},
    "gradcheck": {"max_elements": lambda v: isinstance(v, int) and not isinstance(v, bool)},
    "mistakes": {
        "drop": lambda v: v is None or isinstance(v, str),
        "upstream": lambda v: v is None or isinstance(v, int | float | list),
    },
}


def checked_options(name: str, given: Any) -> dict[str, Any]:
    """The options for one lesson, refused (400) unless each is one it takes, of its kind."""
    if given is None:
        return {}
    allowed = OPTIONS.get(name, {})
    if not isinstance(given, dict):
        raise ProgramError(f"the options for {name} must be an object", code="bad_option")
    for key, value in given.items():
        check = allowed.get(key)
        if check is None:
            takes = ", ".join(allowed) or "none"
            raise ProgramError(
                f"{name} has no option {str(key)[:40]!r} (it takes: {takes})", code="bad_option"
            )
        if not check(value):
            raise ProgramError(
                f"{name}'s option {key} has the wrong kind of value", code="bad_option"
            )
    return dict(given)


def run_lessons(
    source: str,
    values: dict[str, Any] | None,
    names: Sequence[str],
    *,
    accumulate: str = "add",
    order: str = "dfs",
    options: dict[str, Any] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    budget: AnswerBudget | None = None,
) -> dict[str, Any]:
    """{name: lesson data} for each name asked for. Raises ProgramError for an unknown name or
    a program that cannot run, and (413) once the lessons take the answer past
    `max_answer_numbers`: `budget` is what the answer has spent already (its trace)."""
    budget = budget if budget is not None else AnswerBudget(limits)
    out: dict[str, Any] = {}
    for name in dict.fromkeys(names):
        lesson = LESSONS.get(name)
        if lesson is None:
            raise ProgramError(
                f"unknown lesson {name[:40]!r}; the lessons are {', '.join(LESSONS)}",
                code="bad_option",
            )
        given = checked_options(name, (options or {}).get(name))
        out[name] = lesson(
            source, values, accumulate=accumulate, order=order, limits=limits, **given
        )
        budget.charge(f"the lesson {name}", out[name])
    return out


__all__ = [
    "LESSONS",
    "code",
    "compare_assign",
    "forward_mode",
    "gradcheck",
    "higher",
    "memory",
    "mistakes",
    "orders",
    "run_lessons",
    "shapes",
]
