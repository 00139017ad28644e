"""gradtrace's engine: a reverse-mode autograd on NumPy, a small language, and the trace.

    from engine import run
    run("x*y + x", values={"x": 2, "y": 3}).to_dict()["grads"]   # {'x': 4.0, 'y': 2.0}

or build graphs directly: `x = leaf(2.0, "x"); L = x*x + x; L.backward(); x.grad`.
"""

from engine.autograd.backward import backward
from engine.autograd.graph import dfs_order, kahn_order, topological_order
from engine.autograd.ops import OpError
from engine.autograd.value import Value, constant, leaf
from engine.errors import ProgramError
from engine.limits import DEFAULT_LIMITS, Limits
from engine.program import Run, parse, run, run_program, run_with_contrast
from engine.tracing.record import Trace, trace

__all__ = [
    "DEFAULT_LIMITS",
    "Limits",
    "OpError",
    "ProgramError",
    "Run",
    "Trace",
    "Value",
    "backward",
    "constant",
    "dfs_order",
    "kahn_order",
    "leaf",
    "parse",
    "run",
    "run_program",
    "run_with_contrast",
    "topological_order",
    "trace",
]
