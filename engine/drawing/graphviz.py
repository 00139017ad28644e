"""The one place Graphviz runs: layouts in warm helper processes, or `dot` itself.

`dot -Tsvg` costs about 12 ms a run on this kind of machine, and nearly all of it is start-up
(loading plugins and fonts): laying out a 40-node graph takes well under a millisecond. So a
helper process (graphviz_helper.py) loads Graphviz's library once and then lays out graph
after graph, fed over a pipe. It keeps what a subprocess gave: a layout that hangs or crashes
takes down only the helper, which is killed and replaced (the next layout starts a new one).

Each caller has a helper of its own for the whole layout (an idle one, or a new one: ~40 ms),
never a pipe shared with another layout: so render.py's small-picture lane never waits on a
large layout, and a layout past its time is stopped by killing its helper, which frees the CPU
at once (Graphviz cannot be interrupted inside the library).

`run_dot(dot, timeout)` answers like `subprocess.run(["dot", "-Tsvg"], ...)`: a
CompletedProcess, `subprocess.TimeoutExpired` past the timeout, `OSError` without Graphviz.
The timeout is CPU time, what the layout itself costs (budget.py). Where libgvc cannot be
loaded (or with `GRADTRACE_LAYOUT=dot`), and for any graph the helper refuses (so the error
message is Graphviz's own), it runs `dot` itself.

Graphviz runs with two plugins only, its SVG renderer and the dot layout (`GVBINDIR` pointing
at a directory that holds just those): no Pango, so text is measured by Graphviz's built-in
font metrics. cells.py gives every box and label its width, so nothing depends on how
Graphviz measures text, and a layout costs a third less (the MLP: 34 -> 24 ms). Where the
plugins cannot be found, or with `GRADTRACE_LAYOUT_PLUGINS=all`, Graphviz loads all of its own.
"""

from __future__ import annotations

import atexit
import math
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading

from engine.drawing import graphviz_helper
from engine.drawing.budget import Budget, poll_ms, wait_readable, wall_ceiling
from engine.drawing.graphviz_helper import HEADER, LENGTH

RECYCLE_AFTER = 2_000  # layouts per helper: whatever Graphviz leaks stays bounded
MAX_IDLE = 4  # idle helpers kept warm (render.py runs at most 2 + 2 layouts at once)
START_TIMEOUT = 10.0  # seconds for a new helper to load Graphviz and say it is ready
PLUGINS = ("libgvplugin_core", "libgvplugin_dot_layout")  # SVG out, dot layout: all we use
PLUGIN_DIRS = (
    "/usr/lib/x86_64-linux-gnu/graphviz",
    "/usr/lib/aarch64-linux-gnu/graphviz",
    "/usr/lib64/graphviz",
    "/usr/lib/graphviz",
    "/usr/local/lib/graphviz",
    "/opt/homebrew/lib/graphviz",
)


def _find_plugins(directory: str) -> list[str]:
    """The two plugins' files in `directory` (one each), or [] if either is missing."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    for plugin in PLUGINS:
        # `dot -c` lists a plugin by the name Graphviz versions it with (`….so.6`): the
        # shortest of the names it goes by.
        matches = [n for n in names if n.startswith(plugin + ".so") or n == plugin + ".dylib"]
        if not matches:
            return []
        found.append(os.path.join(directory, min(matches, key=len)))
    return found


_plugin_env: dict[str, str] | None = None
_plugin_lock = threading.Lock()


def graphviz_env() -> dict[str, str]:
    """The environment Graphviz runs in: `GVBINDIR` set to a directory of our own with only
    the SVG renderer and the dot layout (made once per process: symlinks and `dot -c`'s
    plugin list). The inherited environment, unchanged, when that cannot be done."""
    global _plugin_env
    with _plugin_lock:
        if _plugin_env is not None:
            return _plugin_env
        env = dict(os.environ)
        _plugin_env = env
        if os.environ.get("GRADTRACE_LAYOUT_PLUGINS", "") == "all" or shutil.which("dot") is None:
            return env
        files = next((f for d in PLUGIN_DIRS if (f := _find_plugins(d))), [])
        if not files:
            return env
        try:
            directory = tempfile.mkdtemp(prefix="gradtrace-graphviz-")
            atexit.register(shutil.rmtree, directory, True)
            for file in files:
                os.symlink(file, os.path.join(directory, os.path.basename(file)))
            lite = {**env, "GVBINDIR": directory}
            subprocess.run(["dot", "-c"], env=lite, capture_output=True, timeout=30, check=True)
            probe = subprocess.run(
                ["dot", "-Tsvg"],
                input=b"digraph { a -> b }",
                env=lite,
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return env
        if probe.returncode == 0 and b"<svg" in probe.stdout:
            _plugin_env = lite
        return _plugin_env


# --- the parent's side ------------------------------------------------------------------------


class _Helper:
    """One helper process; used by one thread at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(graphviz_helper.__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # Graphviz's warnings; a refused graph is rerun by `dot`
            bufsize=0,
            env=graphviz_env(),
        )
        self.used = 0
        try:
            ready = self._read(1, Budget(math.inf, START_TIMEOUT))
        except (OSError, subprocess.TimeoutExpired):
            ready = b""
        if ready != b"R":  # no libgvc here, or it would not load
            self.close()
            raise OSError("the Graphviz helper did not start")

    def layout(self, dot: bytes, budget: Budget) -> bytes | None:
        """SVG bytes, None if Graphviz refused the graph. Past the budget (Budget.check) the
        helper is killed and the exception raised; a layout that finished but cost more than
        its CPU budget raises CpuTimeExpired too, the helper kept."""
        assert self.proc.stdin is not None
        self.used += 1
        budget.watch(self.proc.pid)  # idle, the helper uses no CPU: all from here is this layout
        try:
            self.proc.stdin.write(LENGTH.pack(len(dot)) + dot)
            status, size = HEADER.unpack(self._read(HEADER.size, budget))
            payload = self._read(size, budget)
        except (OSError, ValueError, struct.error):
            budget.spent()  # what it used, read while /proc has it: `dot` gets only the rest
            self.close()
            raise OSError("the Graphviz helper stopped") from None
        budget.finish()
        return payload if status == 0 else None

    def _read(self, n: int, budget: Budget) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        parts: list[bytes] = []
        while n:
            try:
                wait_readable(fd, budget)
            except subprocess.TimeoutExpired:
                self.close()  # Graphviz cannot be interrupted: killing its process frees the CPU
                raise
            chunk = os.read(fd, min(n, 1 << 20))
            if not chunk:
                raise OSError("the Graphviz helper stopped")
            parts.append(chunk)
            n -= len(chunk)
        return b"".join(parts)

    def alive(self) -> bool:
        return self.proc.poll() is None and self.used < RECYCLE_AFTER

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


_idle: list[_Helper] = []
_lock = threading.Lock()
_broken = os.environ.get("GRADTRACE_LAYOUT", "") == "dot"  # no helpers: `dot` every time


def _take() -> _Helper | None:
    global _broken
    with _lock:
        while _idle:
            helper = _idle.pop()
            if helper.alive():
                return helper
            helper.close()
        if _broken:
            return None
    try:
        return _Helper()
    except OSError:
        _broken = True  # no libgvc here: stop trying
        return None


def _give_back(helper: _Helper) -> None:
    with _lock:
        if helper.alive() and len(_idle) < MAX_IDLE:
            _idle.append(helper)
            return
    helper.close()


def _dot(dot: bytes, budget: Budget) -> subprocess.CompletedProcess[bytes]:
    """`dot -Tsvg` itself, within what is left of `budget` (its start-up, ~12 ms, counts)."""
    budget.check()  # nothing left: no process to start
    proc = subprocess.Popen(
        ["dot", "-Tsvg"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=graphviz_env(),
    )
    try:
        budget.watch(proc.pid)
        out, err = _pump(proc, dot, budget)
        budget.finish()  # before it is reaped: until then /proc still has its CPU time
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    return subprocess.CompletedProcess(["dot", "-Tsvg"], proc.returncode, out, err)


def _pump(proc: subprocess.Popen[bytes], data: bytes, budget: Budget) -> tuple[bytes, bytes]:
    """What communicate() does, checking the budget as it waits: `data` to stdin, stdout and
    stderr read to their end."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stdin = proc.stdin.fileno()
    got: dict[int, list[bytes]] = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
    poller = select.poll()
    for fd in got:
        poller.register(fd, select.POLLIN)
    open_fds = len(got)
    sent = 0
    view = memoryview(data)
    if data:
        poller.register(stdin, select.POLLOUT)
    else:
        proc.stdin.close()
    while open_fds:
        for fd, _ in poller.poll(poll_ms(budget.check())):
            if fd == stdin:
                try:  # at most PIPE_BUF bytes: a pipe that polls writable takes them at once
                    sent += os.write(stdin, view[sent : sent + select.PIPE_BUF])
                except BrokenPipeError:  # `dot` stopped reading (a syntax error): say why
                    sent = len(data)
                if sent >= len(data):
                    poller.unregister(stdin)
                    proc.stdin.close()
                continue
            chunk = os.read(fd, 1 << 16)
            if chunk:
                got[fd].append(chunk)
            else:
                poller.unregister(fd)
                open_fds -= 1
    out, err = (b"".join(parts) for parts in got.values())
    return out, err


def run_dot(
    dot: bytes, timeout: float, wall: float | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`dot -Tsvg` on `dot`, in a warm helper when there is one (see the module's docstring).

    `timeout` is the layout's budget of CPU time, in seconds: past it CpuTimeExpired. `wall`
    bounds its wall-clock time (None: wall_ceiling(timeout)): past it, with the CPU budget not
    used up, WallTimeExpired. Both are subprocess.TimeoutExpired."""
    budget = Budget(timeout, wall_ceiling(timeout) if wall is None else wall)
    helper = _take()
    if helper is None:
        return _dot(dot, budget)
    try:
        svg = helper.layout(dot, budget)
    except OSError:  # the helper died (and is closed): `dot` gets what is left of the budget
        return _dot(dot, budget)
    finally:
        _give_back(helper)  # alive: warm for the next layout; killed or dead: closed for good
    if svg is None:  # refused: let `dot` say why, in its own words
        return _dot(dot, budget)
    return subprocess.CompletedProcess(["dot", "-Tsvg"], 0, svg, b"")


def close_all() -> None:
    """Stop the idle helpers (tests, and a worker that shuts down)."""
    with _lock:
        helpers = list(_idle)
        _idle.clear()
    for helper in helpers:
        helper.close()
