"""Graphviz layouts without a new process for each one.

`dot -Tsvg` costs about 12 ms a run on this kind of machine, and nearly all of it is start-up
(loading plugins and fonts): laying out a 40-node graph takes well under a millisecond. So a
helper process loads Graphviz's library (libgvc, through ctypes) once and then lays out graph
after graph, fed over a pipe. It keeps what a subprocess gave: a layout that hangs or crashes
takes down only the helper, which is killed and replaced (the next layout starts a new one).

`run_dot(dot, timeout)` answers like `subprocess.run(["dot", "-Tsvg"], ...)`: a
CompletedProcess, `subprocess.TimeoutExpired` past the timeout, `OSError` without Graphviz.
Where libgvc cannot be loaded (or with `GRADTRACE_LAYOUT=dot`), and for any graph the helper
refuses (so the error message is Graphviz's own), it runs `dot` itself.

Graphviz runs with two plugins only, its SVG renderer and the dot layout (`GVBINDIR` pointing
at a directory that holds just those): no Pango, so text is measured by Graphviz's built-in
font metrics. engine/draw.py gives every box and label its width, so nothing depends on how
Graphviz measures text, and a layout costs a third less (the MLP: 34 -> 24 ms). Where the
plugins cannot be found, or with `GRADTRACE_LAYOUT_PLUGINS=all`, Graphviz loads all of its own.

This file is also the helper (`python engine/layout.py`): standard library only, so it starts
without importing NumPy or the engine.
"""

from __future__ import annotations

import atexit
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
START_TIMEOUT = 10.0  # seconds for a new helper to load Graphviz and say it is ready
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
            ready = self._read(1, time.monotonic() + START_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired):
            ready = b""
        if ready != b"R":  # no libgvc here, or it would not load
            self.close()
            raise OSError("the Graphviz helper did not start")

    def layout(self, dot: bytes, timeout: float) -> bytes | None:
        """SVG bytes, None if Graphviz refused the graph; TimeoutExpired past the timeout."""
        deadline = time.monotonic() + timeout
        assert self.proc.stdin is not None
        self.used += 1
        try:
            self.proc.stdin.write(LENGTH.pack(len(dot)) + dot)
            status, size = HEADER.unpack(self._read(HEADER.size, deadline))
            payload = self._read(size, deadline)
        except (OSError, ValueError, struct.error):
            self.close()
            raise OSError("the Graphviz helper stopped") from None
        return payload if status == 0 else None

    def _read(self, n: int, deadline: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        parts: list[bytes] = []
        while n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close()
                raise subprocess.TimeoutExpired("dot", 0)
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
        if helper.alive():
            _idle.append(helper)
            return
    helper.close()


def _dot(dot: bytes, timeout: float) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["dot", "-Tsvg"],
        input=dot,
        capture_output=True,
        timeout=timeout,
        check=False,
        env=graphviz_env(),
    )


def run_dot(dot: bytes, timeout: float) -> subprocess.CompletedProcess[bytes]:
    """`dot -Tsvg` on `dot`, in a warm helper when there is one (see the module's docstring)."""
    start = time.monotonic()
    helper = _take()
    if helper is None:
        return _dot(dot, timeout)
    try:
        svg = helper.layout(dot, timeout)
    except OSError:
        return _dot(dot, max(timeout - (time.monotonic() - start), 0.001))
    except subprocess.TimeoutExpired:
        raise subprocess.TimeoutExpired("dot", timeout) from None
    _give_back(helper)
    if svg is None:  # refused: let `dot` say why, in its own words
        return _dot(dot, max(timeout - (time.monotonic() - start), 0.001))
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
