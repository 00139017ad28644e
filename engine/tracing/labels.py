"""The names a trace shows: each node's label, and each chain-rule term written with them.

A node is labelled by its name (x, x_2 for a rebinding), its source text, or for a constant its
value; a term's rule is the op's template (`ū · {1}`) filled with its inputs' labels.
"""

from __future__ import annotations

import re

import numpy as np

from engine.autograd.value import Value


def number_text(a: np.ndarray) -> str:
    """A constant's value as its label: `2`, `0.5`, `[1, 2, 3, 4, …]`."""
    if a.ndim:
        return "[" + ", ".join(number_text(x) for x in a[:4]) + (", …]" if len(a) > 4 else "]")
    v = float(a)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.4g}"


IDENTIFIER = re.compile(r"^\w+$")


def is_number_or_name(text: str) -> bool:
    """Source text that says no more than the value would (`2`, a loop variable `t`)."""
    return bool(IDENTIFIER.match(text)) or bool(re.match(r"^-?[\d.eE+-]+$", text))


def assign_labels(nodes: list[Value]) -> None:
    """Give every node a unique, human label: its name (x, x_2 for a rebinding), its source text,
    or for a constant its value."""
    taken: set[str] = set()
    counts: dict[str, int] = {}

    def unique(base: str) -> str:
        n = counts.get(base, 0)
        while True:
            n += 1
            candidate = base if n == 1 else f"{base}_{n}"
            if candidate not in taken:
                counts[base] = n
                taken.add(candidate)
                return candidate

    # Names first, so that `x` keeps its own name even if an anonymous node reads "x".
    for node in nodes:
        if node.name is not None:
            node.label = unique(node.name)
    for node in nodes:
        if node.name is None:
            if node.kind == "const" and (node.text is None or is_number_or_name(node.text)):
                node.label = number_text(node.data)  # 2, or a loop variable's value
            elif node.text is not None:
                node.label = node.text
            else:
                node.label = unique(node.op.name if node.op else node.kind)


def rule_text(node: Value, arg: int) -> str:
    """The chain-rule term for one input, written with the inputs' labels."""
    return rule(node, arg, rule_names(node))


def rule_names(node: Value) -> dict[str, str]:
    """{"0": label of input 0, ..., "out": the node's label}, bracketed unless a plain name."""

    def label(v: Value) -> str:
        text = v.label or "?"
        return text if IDENTIFIER.match(text) else f"({text})"

    names = {str(i): label(x) for i, x in enumerate(node.inputs)}
    names["out"] = label(node)
    return names


def rule(node: Value, arg: int, names: dict[str, str]) -> str:
    """The op's rule for input `arg` filled with `names` (rule_names, made once per step)."""
    assert node.op is not None
    rules = node.op.rules
    template = rules[arg] if arg < len(rules) else "ū"
    if "{" not in template:
        return template
    return _FIELD.sub(lambda m: names.get(m.group(1), m.group(0)), template)


_FIELD = re.compile(r"\{(\w+)\}")
