"""A student's own autograd engine, recorded in their browser and checked here.

The browser runs the student's engine on Pyodide with static/js/own/recorder.py, which records
every local backward call and measures each op's local slopes by central differences. What it
sends is a *recording* (docs/own.md). This package never runs the student's code: it validates
a recording strictly (schema.py, within limits.py), turns it into a gradtrace trace the page
already knows how to step and draw (trace.py), names the bugs it shows (findings.py), runs the
same graph through gradtrace's own backward (reference.py), and words all of it (words.py).
"""

from engine.own.errors import OwnError
from engine.own.limits import OwnLimits, own_limits
from engine.own.report import report
from engine.own.schema import Recording, validate

__all__ = ["OwnError", "OwnLimits", "Recording", "own_limits", "report", "validate"]
