"""What a layout may cost: a budget of CPU time, read from /proc for the processes Graphviz
runs in, and a wall-clock ceiling, so that whether a graph is "too slow" does not depend on the
load, and nothing hangs (CpuTimeExpired and WallTimeExpired tell the two apart)."""

from __future__ import annotations

import math
import os
import select
import subprocess
import time
from collections.abc import Callable

# Once a layout could have used its CPU budget (as much wall time has passed), its CPU time is
# looked at every POLL seconds: it is stopped at most this much CPU time past its budget.
POLL = 0.02
# The wall-clock ceiling of a layout with a CPU budget of b seconds: 4 b + 0.25 s. Past it the
# machine is too busy (the layout got under a quarter of a CPU); the fixed part covers waking a
# process, which costs no CPU time of its own but can take a while on a loaded machine.
WALL_CEILING_BUDGETS = 4.0
WALL_CEILING_SLACK = 0.25


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


def wait_readable(fd: int, budget: Budget) -> None:
    """Until `fd` has something to read; raises as Budget.check when the layout is past it.
    poll(), not select(): a busy server's descriptors can be past select's 1,024."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while not poller.poll(poll_ms(budget.check())):
        pass


def poll_ms(seconds: float) -> int:
    """poll()'s timeout: whole milliseconds, rounded up, at most an hour (then checked again:
    a budget without bounds waits as long as it takes)."""
    return math.ceil(min(seconds, 3_600.0) * 1_000)
