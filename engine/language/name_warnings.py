"""Did-you-mean warnings: a free name one edit away from a name the program assigns.

A program that writes `yy` where it assigned `y` still runs (`yy` is a free leaf, 1.0 unless a
value is given), but its answer says so at the first use: "'yy' is never assigned; did you mean
'y'?". One edit is Levenshtein 1 with transpositions (optimal string alignment): insert,
delete or change one character, or swap two neighbours.

What is not warned about, because it is what students mean on purpose:
- a one-letter name (`y = a*x + b`: x is an input, not a y; `x` beside `xn = x / 2`);
- an edit of a digit (`w1` beside `w2`, `x0` beside `x`): numbered names are a family;
- a name given a value in `values` (`shown`): a value given is a name meant;
- a name longer than MAX_NAME_CHARS (the neighbours of a name are as many as its characters).
At most MAX_WARNINGS are shown, the first in the source first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.autograd.value import Span

MAX_WARNINGS = 20  # warnings in one answer; the rest are left out (the first ones matter)
MAX_NAME_CHARS = 40  # a longer name is not checked: its one-edit neighbours grow with its length


@dataclass(frozen=True, slots=True)
class NameWarning:
    """A free name (`name`) one edit from an assigned one (`meant`), at its first use."""

    name: str
    meant: str
    span: Span

    @property
    def message(self) -> str:
        return self.worded("en")

    def worded(self, lang: str) -> str:
        from engine.words.messages import say

        return say("name_never_assigned", lang, {"name": self.name, "meant": self.meant})

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        """{"message", "line", "column", "end_line", "end_column", "name", "suggestion"}."""
        return {
            "message": self.worded(lang),
            **self.span.to_dict(),
            "name": self.name,
            "suggestion": self.meant,
        }


def one_edit(a: str, b: str) -> bool:
    """Are `a` and `b` exactly one insert, delete, change or neighbour swap apart?"""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        i = diff[0]
        return diff == [i, i + 1] and a[i] == b[i + 1] and a[i + 1] == b[i]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def edits_a_digit(a: str, b: str) -> bool:
    """Is the one edit between `a` and `b` made to a digit (`w1`/`w2`, `x`/`x0`)?"""
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    changed = a[i : i + 1] + b[i : i + 1]
    return any(c.isdigit() for c in changed)


def meant(name: str, index: dict[str, set[str]]) -> str | None:
    """The assigned name `name` is one edit from (the first in alphabetical order), or None.
    `index` maps every assigned name, and each of its one-deletion forms, to the names."""
    if not 1 < len(name) <= MAX_NAME_CHARS:
        return None
    found: set[str] = set()
    for key in deletions(name):
        found |= index.get(key, set())
    close = sorted(n for n in found if one_edit(name, n) and not edits_a_digit(name, n))
    return close[0] if close else None


def deletions(name: str) -> list[str]:
    """`name` and every string one deletion from it: two names one edit apart share one."""
    return [name] + [name[:i] + name[i + 1 :] for i in range(len(name))]


def name_warnings(
    loads: list[ast.Name], bound: set[str], free: Iterable[str], source: Any
) -> tuple[NameWarning, ...]:
    """A warning for each free name one edit from a bound name, at its first read (`loads`:
    every read of a name, in source order), in the order of first use (all of them: which are
    shown depends on the values given, `shown`)."""
    free = [n for n in free if n not in bound]
    if not free or not bound:
        return ()
    index: dict[str, set[str]] = {}
    for name in bound:
        if len(name) <= MAX_NAME_CHARS:
            for key in deletions(name):
                index.setdefault(key, set()).add(name)
    found = {n: m for n in free if (m := meant(n, index)) is not None}
    uses: dict[str, ast.Name] = {}
    for node in loads:
        if node.id in found and node.id not in uses:
            uses[node.id] = node
    out = [NameWarning(name, target, source.span(uses[name])) for name, target in found.items()
           if name in uses]  # fmt: skip
    out.sort(key=lambda w: (w.span.line, w.span.column))
    return tuple(out)


def shown(warnings: Iterable[Any], given: Iterable[str], lang: str = "en") -> list[dict[str, Any]]:
    """The warnings an answer carries, worded in `lang`: none for a name given a value, at
    most MAX_WARNINGS (a name's first; then those the run made, a setting that changes
    nothing, each `{"message", "line", …}` worded from its key)."""
    from engine.words.messages import say

    meant_on_purpose = set(given)
    kept = []
    for w in warnings:
        if isinstance(w, NameWarning):
            if w.name not in meant_on_purpose:
                kept.append(w.to_dict(lang))
            continue
        entry = {k: v for k, v in w.items() if k not in ("key", "params")}
        entry["message"] = say(w["key"], lang, w.get("params") or {})
        kept.append(entry)
    return kept[:MAX_WARNINGS]
