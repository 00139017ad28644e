"""The version stamp every exported figure carries: gradtrace's version and Graphviz's.

    stamp()          # 'gradtrace 0.1.0, graphviz 2.43.0'

A figure's bytes depend on both (Graphviz lays the graph out), so both are recorded in it and
both go into a figure's content-addressed file name (gradtrace/figure.py). Graphviz's version
is read once per process, from `dot -V`.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _distribution_version

try:
    __version__ = _distribution_version("gradtrace")
except PackageNotFoundError:  # a checkout on sys.path that was never installed
    __version__ = "0.1.0+source"


@cache
def graphviz_version() -> str:
    """`2.43.0`, from `dot -V` (run once); `unknown` where Graphviz is missing."""
    try:
        done = subprocess.run(["dot", "-V"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    found = re.search(rb"version\s+([0-9][\w.~+-]*)", done.stderr + done.stdout)
    return found.group(1).decode("ascii") if found else "unknown"


def stamp() -> str:
    """What a figure records about what made it: `gradtrace X.Y.Z, graphviz A.B.C`."""
    return f"gradtrace {__version__}, graphviz {graphviz_version()}"
