"""The names a trace shows: each node's label, and each chain-rule term written with them.

A node is labelled by its name (x, x_2 for a rebinding), its source text, or for a constant its
value, with a subscript (`sin(h)₂`) where several nodes would read the same; a term's rule is
the op's template (`ū · {1}`) filled with its inputs' labels.
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


# The drawing cuts a label to this many characters (engine/drawing/style.py LABEL_CHARS, which
# tracing may not import: the arrow runs the other way; tests/test_labels.py holds them equal).
LABEL_CHARS = 24
SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉"
_SUBSCRIPT = str.maketrans("0123456789", SUBSCRIPTS)


def subscript(n: int) -> str:
    """`12` as `₁₂`: which one of several nodes that read the same."""
    return str(n).translate(_SUBSCRIPT)


def assign_labels(nodes: list[Value]) -> None:
    """Give every node a label no other node of the trace has, the one the graph, the order
    strips and the grad table all show (they read it from the trace, never re-derive it).

    - A named node is its name; a name bound again is `x_2`, `x_3`, … (a name the student could
      write, numbered as the rebindings happen).
    - Any other node is its source text (`sin(h)`, `x*y`), a constant its value (`2`), a node
      the Python API made its op (`mul`). When several nodes read the same — `sin(h)` made once
      per iteration of a loop, `x*y` written twice on one line — each gets a subscript in the
      order the program made them: `sin(h)₁`, `sin(h)₂`, …. A count, not the loop's variable:
      it works the same for a repeat outside any loop and for nested loops, runs in the order
      of the graph's ids, and (unlike `_2`) is never a name the program could bind. In the
      diamond chain `sin(h)ₖ`, `cos(h)ₖ` and the k-th `h` are made in the same iteration.
    - Labels are compared as the drawing shows them, cut to LABEL_CHARS: two long texts that
      differ only after the cut are numbered too, their text cut to leave room for the
      subscript, so the subscript is always seen.
    """
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
    anonymous = [node for node in nodes if node.name is None]
    bases = [anonymous_base(node) for node in anonymous]
    seen: dict[str, int] = {}
    for base in bases:
        seen[shown(base)] = seen.get(shown(base), 0) + 1
    numbered: dict[str, int] = {}
    wrapped: dict[str, str] = {}  # bracketed(base), once per text a loop repeats
    for node, base in zip(anonymous, bases, strict=True):
        key = shown(base)
        if seen[key] == 1 and base not in taken:
            node.label = base
        else:
            n = numbered.get(key, 0)
            while True:  # past a label some name took already (rare: a name such as `t₂`)
                n += 1
                sub = subscript(n)
                if base not in wrapped:
                    wrapped[base] = bracketed(base)
                candidate = shown(wrapped[base], LABEL_CHARS - len(sub)) + sub
                if candidate not in taken:
                    break
            numbered[key] = n
            node.label = candidate
        taken.add(node.label)


def anonymous_base(node: Value) -> str:
    """What an unnamed node reads before any subscript: its source text, or a constant's
    value, or (made through the Python API) its op."""
    if node.kind == "const" and (node.text is None or is_number_or_name(node.text)):
        return number_text(node.data)  # 2, or a loop variable's value
    if node.text is not None:
        return node.text
    return node.op.name if node.op else node.kind


def bracketed(text: str) -> str:
    """`text` ready for a subscript: `sin(h)`, `xs[t]`, `2` as they are, `(x*y)` bracketed,
    so that `(x*y)₂` is the second `x*y` and never reads as `x` times `y₂`."""
    depth, outside = 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            outside.append(c)
    return text if depth == 0 and ATOM.match("".join(outside)) else f"({text})"


ATOM = re.compile(r"^[\w.]*$")  # outside its brackets, a name or number and `.method`s


def shown(text: str, limit: int = LABEL_CHARS) -> str:
    """`text` as the drawing shows it (engine/drawing/text.py shorten): cut to `limit`."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def rule_text(node: Value, arg: int) -> str:
    """The chain-rule term for one input, written with the inputs' labels."""
    return rule(node, arg, rule_names(node))


def rule_names(node: Value) -> dict[str, str]:
    """{"0": label of input 0, ..., "out": the node's label}, bracketed unless a plain name."""

    def label(v: Value) -> str:
        text = v.label or "?"
        # A subscripted label (`(x*y)₂`) is bracketed already where it needs to be.
        return text if IDENTIFIER.match(text) or text[-1] in SUBSCRIPTS else f"({text})"

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


def tangent_name(label: str) -> str:
    """A tangent as a student reads it: the dot over a one-letter name (ẋ, ẋ₁), `d name` for
    a longer one (d out), `d(…)` around an expression."""
    if label[:1].isalpha() and all("₀" <= c <= "₉" for c in label[1:]):
        # combining dot above: over the letter (ẋ, ẋ₁), one character wide
        return label[0] + "\u0307" + label[1:]
    if label.replace("_", "").isalnum():
        return "d " + label
    return f"d({label})"


def jvp_text(node: Value) -> str:
    """The JVP rule of `node`'s op, with its inputs' names and their tangents'."""
    assert node.op is not None

    def label(v: Value) -> str:
        text = v.label or "?"
        return text if text.replace("_", "").isalnum() else f"({text})"

    names = {str(i): label(x) for i, x in enumerate(node.inputs)}
    names.update({f"d{i}": tangent_name(x.label or "?") for i, x in enumerate(node.inputs)})
    names["out"] = label(node)
    names["all"] = ", ".join(tangent_name(x.label or "?") for x in node.inputs)
    names.update(node.op.rule_values())
    text = node.op.jvp_rule
    for key, value in names.items():
        text = text.replace("{" + key + "}", value)
    return text
