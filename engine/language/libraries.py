"""What the interpreter asks of the library a program runs against (engine/library builds the
one every run uses): the names beyond the program's own, the modules it may import, the
attributes of values, the blocks of `with` and how a value is printed. The interpreter runs
Python; the library says what `torch.exp`, `x.grad` and `print(x)` mean.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Library:
    # the functions a program calls by a bare name (`print`, `exp`, `grad`), by that name
    functions: Mapping[str, Any]
    # a module's usual short name and the line that imports it (`np`: `import numpy as np`)
    standard: Mapping[str, str]
    # every module path a program may import
    modules: Mapping[str, Any]
    # those modules, in words, for the message that refuses another
    named: str
    # module_attribute(it, "torch.exp", node): what a module's attribute holds
    module_attribute: Callable[..., Any]
    # imported(it, node): the names an import binds, and what each holds
    imported: Callable[..., list[tuple[str, Any]]]
    # attribute(it, owner, "grad", node) and set_attribute(it, owner, "grad", value, node)
    attribute: Callable[..., Any]
    set_attribute: Callable[..., None]
    # enter(it, manager, node, body, name): `with manager as name:` around body()
    enter: Callable[..., None]
    # display(it, value, node, plain): a notebook's display of a value (an assert's message)
    display: Callable[..., str]
    # format_value(it, value, spec, conversion, node): f"{v:.3f}";  percent(it, fmt, args, node)
    format_value: Callable[..., str]
    percent: Callable[..., str]
    # is_effect(call): a call made for what it does, whose value a notebook line does not show
    is_effect: Callable[[ast.expr], bool]
    # the libraries (import roots) whose leaves are only those asked for, as PyTorch's
    explicit: frozenset[str] = frozenset({"torch"})
