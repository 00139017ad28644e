"""Graphviz layouts without a new process for each one.

`dot -Tsvg` costs about 12 ms a run on this kind of machine, and nearly all of it is start-up
(loading plugins and fonts): laying out a 40-node graph takes well under a millisecond. So a
helper process loads Graphviz's library (libgvc, through ctypes) once and then lays out graph
after graph, fed over a pipe. It keeps what a subprocess gave: a layout that hangs or crashes
takes down only the helper, which is killed and replaced (the next layout starts a new one).

Each caller has a helper of its own for the whole layout (an idle one, or a new one: ~40 ms),
never a pipe shared with another layout: so engine/drawing/draw.py's small-picture lane never waits on a
large layout, and a layout past its time is stopped by killing its helper, which frees the CPU
at once (Graphviz cannot be interrupted inside the library).

`run_dot(dot, timeout)` answers like `subprocess.run(["dot", "-Tsvg"], ...)`: a
CompletedProcess, `subprocess.TimeoutExpired` past the timeout, `OSError` without Graphviz.
The timeout is CPU time, what the layout itself costs (a `Budget`): on a busy machine a layout
takes longer in wall-clock time but no more CPU, so whether a graph is "too slow" does not
depend on the load. A wall-clock ceiling (`wall_ceiling`) still bounds it, so nothing hangs;
the two are told apart (CpuTimeExpired, WallTimeExpired).
Where libgvc cannot be loaded (or with `GRADTRACE_LAYOUT=dot`), and for any graph the helper
refuses (so the error message is Graphviz's own), it runs `dot` itself.

Graphviz runs with two plugins only, its SVG renderer and the dot layout (`GVBINDIR` pointing
at a directory that holds just those): no Pango, so text is measured by Graphviz's built-in
font metrics. engine/drawing/draw.py gives every box and label its width, so nothing depends on how
Graphviz measures text, and a layout costs a third less (the MLP: 34 -> 24 ms). Where the
plugins cannot be found, or with `GRADTRACE_LAYOUT_PLUGINS=all`, Graphviz loads all of its own.

This file is also the helper (`python engine/drawing/layout.py`): standard library only, so it starts
without importing NumPy or the engine.
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
import time
from collections.abc import Callable

HEADER = struct.Struct("!BI")  # status (0 = SVG, 1 = refused), payload length
LENGTH = struct.Struct("!I")
RECYCLE_AFTER = 2_000  # layouts per helper: whatever Graphviz leaks stays bounded
MAX_IDLE = 4  # idle helpers kept warm (engine/drawing/draw.py runs at most 2 + 2 layouts at once)
START_TIMEOUT = 10.0  # seconds for a new helper to load Graphviz and say it is ready
# Once a layout could have used its CPU budget (as much wall time has passed), its CPU time is
# looked at every POLL seconds: it is stopped at most this much CPU time past its budget.
POLL = 0.02
# The wall-clock ceiling of a layout with a CPU budget of b seconds: 4 b + 0.25 s. Past it the
# machine is too busy (the layout got under a quarter of a CPU); the fixed part covers waking a
# process, which costs no CPU time of its own but can take a while on a loaded machine.
WALL_CEILING_BUDGETS = 4.0
WALL_CEILING_SLACK = 0.25
LIBRARIES = ("libgvc.so.6", "libgvc.so", "libgvc.dylib")
CGRAPH = ("libcgraph.so.6", "libcgraph.so", "libcgraph.dylib")
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


# --- what a layout costs --------------------------------------------------------------------


class CpuTimeExpired(subprocess.TimeoutExpired):
    """The layout used up its CPU budget: its own cost, the same however busy the machine."""


class WallTimeExpired(subprocess.TimeoutExpired):
    """The wall-clock bound passed before the CPU budget did: the layout was held up (a busy
    machine, or the request's deadline), which says nothing of the graph."""


def wall_ceiling(cpu_seconds: float) -> float:
    """The wall-clock seconds a layout with this CPU budget may take at most (see
    WALL_CEILING_BUDGETS)."""
    return WALL_CEILING_BUDGETS * cpu_seconds + WALL_CEILING_SLACK


def _clock_ticks() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (AttributeError, ValueError, OSError):
        return 100


_CLK_TCK = _clock_ticks()


def proc_cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) process `pid` has used, in seconds; None where /proc cannot
    tell. The scheduler's count in nanoseconds (/proc/<pid>/schedstat) where there is one, else
    utime + stime in clock ticks (/proc/<pid>/stat, 10 ms). schedstat counts the main thread
    only: the helper and `dot` have no other. A zombie still answers, until it is reaped."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            ns = int(f.read().split()[0])
        if ns > 0:  # a kernel without the count writes "0 0 0": every process has run a little
            return ns / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # the name, in brackets, may hold spaces
        return (int(fields[11]) + int(fields[12])) / _CLK_TCK  # fields 14 and 15: utime, stime
    except (OSError, ValueError, IndexError):
        return None


# How a layout's CPU time is read: a hook, so that tests can give a clock of their own.
cpu_seconds: Callable[[int], float | None] = proc_cpu_seconds


class Budget:
    """One layout's bounds: `cpu` seconds of CPU time in the processes it runs in (`watch`
    each: a helper, then maybe `dot`), and `wall` seconds of wall-clock time from now.

    A process cannot use CPU time faster than wall time passes (the helper and `dot` have one
    thread), so the CPU time is only read once as much wall time as is left of the budget has
    passed: a small layout is done long before, and costs no read at all. Where /proc cannot
    tell, wall time since `watch` stands in for the CPU time (a busy machine then counts)."""

    def __init__(
        self,
        cpu: float,
        wall: float,
        reader: Callable[[int], float | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cpu = cpu
        self.wall = wall
        self._reader = reader
        self._clock = clock
        self.start = clock()
        self._before = 0.0  # CPU time used in the processes watched before this one
        self._pid: int | None = None
        self._watched_at = self.start
        self._base: float | None = None  # the process's CPU time when watched
        self._last: float | None = None  # ... and when last read

    def _read(self, pid: int) -> float | None:
        return (self._reader or cpu_seconds)(pid)

    def watch(self, pid: int) -> None:
        """Count the CPU time of process `pid` from now on (what earlier ones used stays)."""
        self._before = self.spent()
        self._pid = pid
        self._watched_at = self._clock()
        self._base = self._last = self._read(pid)

    def spent(self) -> float:
        """The CPU time used so far, in seconds."""
        if self._pid is None:
            return self._before
        if self._base is None:  # no /proc here
            return self._before + self._clock() - self._watched_at
        now = self._read(self._pid)
        if now is not None:  # None: the process is gone, and what it had used was read last
            self._last = now
        assert self._last is not None
        return self._before + max(self._last - self._base, 0.0)

    def check(self) -> float:
        """How long to wait for the answer before the next check, in seconds. Raises
        CpuTimeExpired past the CPU budget, WallTimeExpired past the wall-clock bound."""
        now = self._clock()
        most = self._before + (now - self._watched_at)  # the CPU time it can have used
        if most > self.cpu:
            most = self.spent()
            if most > self.cpu:
                raise CpuTimeExpired("dot", self.cpu)
        wall_left = self.wall - (now - self.start)
        if wall_left <= 0:
            raise WallTimeExpired("dot", self.wall)
        # The budget cannot run out sooner than its CPU time left; checked at least every POLL.
        return min(max(self.cpu - most, POLL), wall_left)

    def finish(self) -> None:
        """The answer has come: CpuTimeExpired all the same if it cost more than the budget, so
        that the verdict is the layout's cost, not the moment a check happened to run."""
        could = self._before + (self._clock() - self._watched_at) > self.cpu
        if could and self.spent() > self.cpu:
            raise CpuTimeExpired("dot", self.cpu)


def _wait_readable(fd: int, budget: Budget) -> None:
    """Until `fd` has something to read; raises as Budget.check when the layout is past it.
    poll(), not select(): a busy server's descriptors can be past select's 1,024."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while not poller.poll(_ms(budget.check())):
        pass


def _ms(seconds: float) -> int:
    """poll()'s timeout: whole milliseconds, rounded up, at most an hour (then checked again:
    a budget without bounds waits as long as it takes)."""
    return math.ceil(min(seconds, 3_600.0) * 1_000)


# --- the parent's side ------------------------------------------------------------------------


class _Helper:
    """One helper process; used by one thread at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__)],
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
                _wait_readable(fd, budget)
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
        for fd, _ in poller.poll(_ms(budget.check())):
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


# --- the helper's side ------------------------------------------------------------------------


def _load(names: tuple[str, ...]) -> object:
    import ctypes

    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise OSError(f"none of {names} could be loaded")


def _serve() -> None:
    """Read length-prefixed DOT from stdin, answer status + length-prefixed SVG on stdout."""
    import ctypes

    gvc: ctypes.CDLL = _load(LIBRARIES)  # type: ignore[assignment]
    cgraph: ctypes.CDLL = _load(CGRAPH)  # type: ignore[assignment]
    vp, cp = ctypes.c_void_p, ctypes.c_char_p
    gvc.gvContext.restype = vp
    cgraph.agmemread.restype = vp
    cgraph.agmemread.argtypes = [cp]
    cgraph.agclose.argtypes = [vp]
    gvc.gvLayout.argtypes = [vp, vp, cp]
    gvc.gvFreeLayout.argtypes = [vp, vp]
    gvc.gvRenderData.argtypes = [vp, vp, cp, ctypes.POINTER(cp), ctypes.POINTER(ctypes.c_uint)]
    gvc.gvFreeRenderData.argtypes = [cp]
    context = gvc.gvContext()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(b"R")
    stdout.flush()

    def read(n: int) -> bytes:
        data = stdin.read(n)
        if len(data) < n:
            raise EOFError
        return data

    def layout(dot: bytes) -> bytes | None:
        graph = cgraph.agmemread(dot)
        if not graph:
            return None
        try:
            if gvc.gvLayout(context, graph, b"dot") != 0:
                return None
            try:
                buf, size = cp(), ctypes.c_uint()
                if gvc.gvRenderData(context, graph, b"svg", ctypes.byref(buf), ctypes.byref(size)):
                    return None
                svg = ctypes.string_at(buf, size.value)
                gvc.gvFreeRenderData(buf)
                return svg
            finally:
                gvc.gvFreeLayout(context, graph)
        finally:
            cgraph.agclose(graph)

    answer: Callable[[bytes | None], bytes] = lambda svg: (  # noqa: E731
        HEADER.pack(1, 0) if svg is None else HEADER.pack(0, len(svg)) + svg
    )
    while True:
        try:
            (size,) = LENGTH.unpack(read(LENGTH.size))
            dot = read(size)
        except EOFError:
            return  # the parent has gone
        stdout.write(answer(layout(dot)))
        stdout.flush()


if __name__ == "__main__":
    _serve()
