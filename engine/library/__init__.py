"""The library a program runs against: what torch, NumPy, JAX, math and Python's builtins mean
on the interpreter's values (engine/language runs the Python; this says what its names do).

names        the modules a program may import, their spellings (from the op registry), and
             the attributes of values
functions    the ops as functions and the tensors a program makes
builtins     print, range, len, zip, … as Python means them
methods      a tensor's methods and attributes, a grad's, a list's, a string's
transforms   backward(), torch.autograd.grad, jax.grad, grad(L, x), no_grad, requires_grad
objects      the optimizers (SGD, Adam) and NumPy's generator: objects with state
printing     what print(…) shows, as PyTorch or NumPy prints it; format strings
"""

from __future__ import annotations

from engine.language.libraries import Library
from engine.library import names, printing

LIBRARY = Library(
    functions=names.GLOBALS,
    standard=names.STANDARD,
    modules=names.MODULES,
    named=names.NAMED,
    module_attribute=names.module_attribute,
    imported=names.imported,
    attribute=names.attribute,
    set_attribute=names.set_attribute,
    enter=names.enter,
    display=printing.display_text,
    format_value=printing.format_value,
    percent=printing.percent_format,
    is_effect=names.is_effect,
    explicit=names.EXPLICIT,
)

__all__ = ["LIBRARY"]
