"""A question put to the class: what students see of it (`public`), what only the instructor
and the reveal see (the answer, and `hidden`: which wrong answers a misconception explains),
and how an answer is counted (its key)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from app.rooms.wire import ProtocolError, dumps, is_number

KINDS = ("value", "choice")
ID_PATTERN = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
MAX_QUESTION_CHARS = 500
MAX_CHOICES = 20
MAX_CHOICE_CHARS = 120


def number_key(x: float) -> str:
    """`x` rounded to 4 significant digits, as text Number() reads back: 4 → "4"."""
    rounded = float(f"{x:.4g}")
    if rounded == 0:
        return "0"
    if rounded.is_integer() and abs(rounded) < 1e15:
        return str(int(rounded))
    return repr(rounded)


def question_id(msg: dict[str, Any]) -> str:
    qid = msg.get("id")
    if not isinstance(qid, str) or not ID_PATTERN.fullmatch(qid):
        raise ProtocolError("malformed", '"id" is 1–64 letters, digits or _.:-')
    return qid


@dataclass(frozen=True)
class Question:
    """An open question: what students see (`public`) and the answer kept from them."""

    id: str
    question: str
    kind: str
    choices: tuple[str, ...] | None
    answer: Any  # as the instructor gave it, or None
    extra: dict[str, Any] = field(default_factory=dict)
    hidden: dict[str, Any] | None = None  # for instructors and the reveal only

    def key_of(self, value: Any) -> str:
        """The counted form of an answer (module docstring), or ProtocolError."""
        if self.kind == "choice":
            if isinstance(value, str) and self.choices and value in self.choices:
                return value
            raise ProtocolError("malformed", "the answer is one of the question's choices")
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise ProtocolError("malformed", "the answer is a number") from None
        if not is_number(value):
            raise ProtocolError("malformed", "the answer is a finite number")
        return number_key(float(value))

    @property
    def answer_key(self) -> str | None:
        return None if self.answer is None else self.key_of(self.answer)

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.extra, "type": "ask", "id": self.id,
                               "question": self.question, "kind": self.kind}  # fmt: skip
        if self.choices is not None:
            out["choices"] = list(self.choices)
        return out

    def full(self) -> dict[str, Any]:
        out = {**self.public(), "answer": self.answer, "answer_key": self.answer_key}
        if self.hidden is not None:
            out["hidden"] = self.hidden
        return out

    def reveal(self, counts: dict[str, int]) -> dict[str, Any]:
        return {**self.full(), "type": "reveal", "counts": counts, "total": sum(counts.values())}

    def to_json(self) -> str:
        return dumps(self.full())

    @classmethod
    def from_json(cls, text: str) -> Question:
        return parse_ask(json.loads(text))


def parse_ask(msg: dict[str, Any]) -> Question:
    qid = question_id(msg)
    text = msg.get("question")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_QUESTION_CHARS:
        raise ProtocolError("malformed", f'"question" is text of 1–{MAX_QUESTION_CHARS} chars')
    kind = msg.get("kind")
    if kind not in KINDS:
        raise ProtocolError("malformed", '"kind" is "value" or "choice"')
    choices = msg.get("choices")
    if kind == "choice":
        if (
            not isinstance(choices, list)
            or not 2 <= len(choices) <= MAX_CHOICES
            or not all(isinstance(c, str) and 0 < len(c) <= MAX_CHOICE_CHARS for c in choices)
            or len(set(choices)) != len(choices)
        ):
            raise ProtocolError(
                "malformed", f'"choices" is 2–{MAX_CHOICES} different texts for kind "choice"'
            )
        choices = tuple(choices)
    elif choices is not None:
        raise ProtocolError("malformed", '"choices" goes with kind "choice" only')
    reserved = {"type", "id", "question", "kind", "choices", "answer", "answer_key",
                "counts", "total", "hidden"}  # fmt: skip
    extra = {k: v for k, v in msg.items() if k not in reserved}
    hidden = msg.get("hidden")
    if hidden is not None and not isinstance(hidden, dict):
        raise ProtocolError("malformed", '"hidden" is an object (what students see at the reveal)')
    q = Question(qid, text, kind, choices, msg.get("answer"), extra, hidden)
    if q.answer is not None:
        q.key_of(q.answer)  # a correct answer that no student could give is refused
    return q
