"""`python -m bench.stress`: issue 11's hostile classes against a real server, a row per case.

    python -m bench.stress                 # every case (2½ minutes on 2 cores; 4 against a
                                           # server that fails slowly: its failures are waited for)
    python -m bench.stress --quick         # one case per class, shorter waits (≤ 40 s)
    python -m bench.stress --only memory,layout

A uvicorn of app.main:app (bench.load.server: one worker, so the uvicorn process is the worker)
on a free 127.0.0.1 port, a fresh one per class and again whenever a case kills it or leaves it
unable to answer. For each case: the statuses, the slowest answer, the worker's RSS (baseline
once warmed, peak sampled every 10 ms while the case runs, settled a moment after), and a normal
request's latency meanwhile (POST /api/trace every 100 ms). Each row is marked against issue
11's targets; the exit code is 0 whatever they say (this is a report), the last line counts them.

Bounded: every socket operation has a timeout, every loop a count, and a worker that grows past
RSS_CAP_MB above its baseline is killed (the machine is shared; the target is far below).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import re
import select
import signal
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import httpx

from bench import load
from bench import stress_programs as hostile
from bench.load import HOST
from bench.measure import median, ms
from bench.programs import small_program

# The targets (issue 11, "What must be shown").
ANSWER_SECONDS = 6.0  # every hostile request answered (no 5xx, no dropped connection) by then
PEAK_MB = 400.0  # RSS above the worker's baseline while a case runs
SETTLED_MB = 250.0  # RSS above the baseline once the case is over
STALLED_NORMAL_SECONDS = 2.0  # a normal request's answer while 20 uploads stall
SMALL_PICTURE_SECONDS = 1.5  # a new small picture while two layout bombs run

NORMAL = {"source": "x*y + x", "values": {"x": 2, "y": 3}}  # the student meanwhile
NORMAL_EVERY = 0.1  # seconds between the starts of two normal requests
NORMAL_TIMEOUT = 5.0  # a normal request not answered by then counts as failed
SAMPLE_EVERY = 0.01  # seconds between two reads of the worker's VmRSS
RSS_CAP_MB = 1000.0  # a worker this far above its baseline is killed (2.5× the target: a miss)
STALLED = 20  # sockets of the idle-socket cases
BUSY_AFTER = 0.5  # a worker using more CPU than this share during the settle is still at work
CONNECT_SECONDS = 3.0  # connecting to loopback: refused at once, or never


@dataclass(frozen=True)
class Config:
    quick: bool
    timeout: float  # seconds a hostile request may take before it counts as unanswered
    settle: float  # seconds after a case before the settled RSS is read
    hold: float  # seconds the stalled sockets stay open
    cap: float  # RSS_CAP_MB, or the --rss-cap given


def make_config(quick: bool, cap: float = RSS_CAP_MB) -> Config:
    # Past ANSWER_SECONDS an answer has missed its target; waiting longer only tells how late
    # it is (the full run waits twice as long as the quick one to tell "late" from "never").
    if quick:
        return Config(quick, timeout=7.0, settle=1.0, hold=2.5, cap=cap)
    return Config(quick, timeout=12.0, settle=2.0, hold=3.0, cap=cap)


# --- the server under test ----------------------------------------------------------------------


def rss(pid: int) -> float:
    """The process's VmRSS in MB, NaN when it is gone (a zombie has none either)."""
    try:
        return load.rss_mb(pid)
    except OSError:
        return float("nan")


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name: state, ppid, …; [] when the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _state(pid: int) -> str:
    return (_stat(pid) or ["X"])[0]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _children(pid: int) -> dict[int, bytes]:
    """The direct children (the Graphviz helpers) and their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _stat(int(entry.name))[1:2] == [str(pid)]:
            found[int(entry.name)] = _cmdline(int(entry.name))
    return found


def cpu_seconds(pid: int) -> float:
    """CPU time used so far by the process and its children (its layouts run in a helper)."""
    ticks = 0
    for p in (pid, *_children(pid)):
        fields = _stat(p)
        if len(fields) > 12:
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, sig)


class Server:
    """The uvicorn under test (bench.load.server), stopped and started again as cases need."""

    def __init__(self) -> None:
        self._stack: contextlib.ExitStack | None = None
        self.port = 0
        self.pid = 0
        self.base = float("nan")  # MB once warmed: what every row of this server is held to

    def start(self) -> None:
        stack = contextlib.ExitStack()
        self.port, self.pid = stack.enter_context(load.server(1))
        self._stack = stack
        load.warm(self.port, small_program, 8)  # imports, the Graphviz helper
        self.base = rss(self.pid)

    @property
    def running(self) -> bool:
        return self._stack is not None

    def alive(self) -> bool:
        return self.running and _state(self.pid) not in ("Z", "X")

    def healthy(self, timeout: float = 2.0) -> bool:
        try:
            url = f"http://{HOST}:{self.port}/healthz"
            answer = httpx.get(url, timeout=timeout, trust_env=False)  # loopback, no proxy
        except httpx.HTTPError:
            return False
        return answer.status_code == 200

    def kill(self) -> None:
        _signal(self.pid, signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 3 s (a worker stuck in C code never runs its handler),
        and the Graphviz helpers with it, so that no layout runs on into the next case."""
        if self._stack is None:
            return
        helpers = _children(self.pid)
        _signal(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 3.0
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.kill()
        for pid, cmdline in helpers.items():
            if _cmdline(pid) == cmdline:  # still the same process, not a reused pid
                _signal(pid, signal.SIGKILL)
        self._stack.close()  # reaps uvicorn (bench.load.server's terminate finds it gone)
        self._stack = None


# --- what runs beside a case: the RSS sampler and the normal client -----------------------------


class Beside:
    """A thread that runs beside a case, from the start of a `with` to its end."""

    join_seconds = 2.0  # the longest its last step can take

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self.join_seconds)

    def _run(self) -> None:
        raise NotImplementedError


class Sampler(Beside):
    """The worker's VmRSS every SAMPLE_EVERY seconds from a thread, and its peak; past
    `cap` MB above the baseline it kills the worker (and says so: `capped`)."""

    def __init__(self, server: Server, cap: float) -> None:
        super().__init__()
        self.server = server
        self.limit = server.base + cap
        self.peak = float("nan")
        self.capped = False

    def _run(self) -> None:
        while not self._stop.is_set():
            mb = rss(self.server.pid)
            if mb != mb:  # NaN: the worker is gone
                return
            if not mb <= self.peak:
                self.peak = mb
            if mb > self.limit:
                self.capped = True
                self.server.kill()
                return
            self._stop.wait(SAMPLE_EVERY)


class Normal(Beside):
    """A student meanwhile: POST /api/trace of `x*y + x` every NORMAL_EVERY seconds, one at a
    time, through bench.load.Client; each bounded by NORMAL_TIMEOUT."""

    join_seconds = NORMAL_TIMEOUT + 1.0

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self.latencies: list[float] = []  # answered requests, whatever their status
        self.failed: Counter[str] = Counter()  # status or error name of each not-200
        # Set by the case when its hostile setup is in place (at once for most): a normal
        # request racing the stalled uploads for a slot would make that case a coin toss.
        self.begin = threading.Event()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()  # first: a thread let through below must not send another request
        self.begin.set()  # a case that failed before setting it
        super().__exit__(*exc)

    def _run(self) -> None:
        self.begin.wait()
        asyncio.run(self._go())

    async def _go(self) -> None:
        client = load.Client(self.port)
        while not self._stop.is_set():
            began = time.perf_counter()
            try:
                status, _ = await asyncio.wait_for(
                    client.post_json("/api/trace", NORMAL), NORMAL_TIMEOUT
                )
            except (TimeoutError, OSError, EOFError, ValueError, IndexError) as exc:
                self.failed[type(exc).__name__] += 1
                client.close()
                client = load.Client(self.port)
            else:
                self.latencies.append(time.perf_counter() - began)
                if status != 200:
                    self.failed[str(status)] += 1
            await asyncio.sleep(max(0.0, NORMAL_EVERY - (time.perf_counter() - began)))
        client.close()

    def summary(self) -> str:
        if not self.latencies and not self.failed:
            return "–"
        text = f"{ms(median(self.latencies))} / {ms(max(self.latencies, default=float('nan')))}"
        bad = ", ".join(f"{n}×{what}" for what, n in self.failed.most_common())
        return f"{text} · {bad or 'all 200'} (of {len(self.latencies) + self._errors()})"

    def _errors(self) -> int:
        return sum(n for what, n in self.failed.items() if not what.isdigit())

    def all_fast(self, seconds: float) -> bool:
        return bool(self.latencies) and not self.failed and max(self.latencies) <= seconds


# --- hostile requests ---------------------------------------------------------------------------


@dataclass
class Hit:
    """One hostile request's outcome."""

    what: str  # "413", "200/413" (/api/render's own status), "timeout", "dropped", "open", …
    seconds: float
    status: int | None = None  # the HTTP status; None: no answer
    body: bytes = b""
    judged: bool = True  # counts for "every hostile request answered"

    def ok(self) -> bool:
        return self.status is not None and self.status < 500 and self.seconds <= ANSWER_SECONDS


@dataclass
class Outcome:
    hits: list[Hit]
    checks: list[tuple[str, bool]] = field(default_factory=list)  # extra targets of the case
    notes: list[str] = field(default_factory=list)


class Ctx:
    """What a case gets: the server, the run's settings, and HTTP clients bound to both."""

    def __init__(self, server: Server, config: Config, normal: Normal) -> None:
        self.server = server
        self.config = config
        self.normal = normal

    def client(self, source: str | None = None) -> httpx.Client:
        """A client connecting from `source` (any of 127.0.0.0/8 is loopback): a thread of its
        own address stands for a student of their own, not one client's nth request (the server
        bounds in-flight work per address). No keep-alive: each hostile request on a connection
        of its own, so a dropped connection is that request's, never an earlier one's."""
        transport = httpx.HTTPTransport(
            local_address=source, limits=httpx.Limits(max_keepalive_connections=0)
        )
        return httpx.Client(
            base_url=f"http://{HOST}:{self.server.port}",
            timeout=httpx.Timeout(self.config.timeout, connect=CONNECT_SECONDS),
            transport=transport,
            trust_env=False,  # loopback: no proxy from the environment
        )

    def send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: Any = None,
        http: httpx.Client | None = None,
    ) -> Hit:
        with contextlib.ExitStack() as stack:
            http = http or stack.enter_context(self.client())
            began = time.perf_counter()
            try:
                answer = http.request(method, path, params=params, json=body)
            except httpx.TimeoutException:
                return Hit("timeout", time.perf_counter() - began)
            except httpx.HTTPError:  # closed, reset or refused before a whole answer
                return Hit("dropped", time.perf_counter() - began)
            took = time.perf_counter() - began
        what = _label(answer.status_code, answer.content, path == "/api/render")
        return Hit(what, took, answer.status_code, answer.content)

    def ask(self, route: str, source: str, http: httpx.Client | None = None, **options: Any) -> Hit:
        """`source` sent to a route: trace or render (POST, options in the body), page, embed
        or svg (GET, options in the query)."""
        if route in ("trace", "render"):
            body = {"source": source, **options}
            return self.send("POST", f"/api/{route}", body=body, http=http)
        params = {"source": source, **options}
        return self.send("GET", GET_ROUTES[route], params=params, http=http)


SETTING = re.compile(r"\b(max_[a-z_]+)\b")


def _label(status: int, content: bytes, render: bool) -> str:
    """ "413 max_layout_seconds": the status, /api/render's own after a slash ("200/413"), and
    the setting that stopped the request as its answer names it."""
    data: Any = None
    if len(content) < 65_536:  # an error is short; a whole trace need not be parsed
        with contextlib.suppress(ValueError):
            data = json.loads(content)
    data = data if isinstance(data, dict) else {}
    what = str(status)
    if render and status == 200 and data.get("status"):
        what += f"/{data['status']}"
    elif status < 400:
        return what
    error = data.get("error")
    named = error.get("limit") if isinstance(error, dict) else None
    # An SVG or page names it in its message: "… 1 s (max_layout_seconds)".
    named = named or next(iter(SETTING.findall(content[:65_536].decode(errors="replace"))), None)
    return f"{what} {named}" if named else what


def address(k: int) -> str:
    """The k-th client address of a case that stands for many students (loopback all)."""
    return f"127.0.0.{10 + k}"


GET_ROUTES = {"page": "/", "embed": "/embed", "svg": "/api/svg"}
Ask = tuple[str, str, dict[str, Any]]  # (route, source, options)


def sends(*asks: Ask) -> Callable[[Ctx], Outcome]:
    """A case of requests sent one after the other."""
    return lambda ctx: Outcome([ctx.ask(route, source, **opts) for route, source, opts in asks])


def at_once(ctx: Ctx, jobs: list[Callable[[], list[Hit]]]) -> list[Hit]:
    """Run `jobs` in threads of their own: their hits, in job order. Each job's requests are
    bounded by the request timeout, and so is the join (a generous multiple of it)."""
    out: list[list[Hit]] = [[] for _ in jobs]

    def run(k: int) -> None:
        out[k] = jobs[k]()

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=ctx.config.timeout * 30)
    return [hit for hits in out for hit in hits]


@dataclass(frozen=True)
class Case:
    cls: str
    name: str
    run: Callable[[Ctx], Outcome]
    quick: bool = False  # one case of each class runs in --quick
    normal_within: float | None = None  # the normal requests' target, where the case has one
    normal_later: bool = False  # the case starts the normal requests itself (ctx.normal.begin)


# --- idle sockets -------------------------------------------------------------------------------


def upload_head(path: str, length: int = 1000) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def padded_body(length: int = 1000) -> bytes:
    """A JSON body of exactly `length` bytes (a program padded with spaces); the stalled
    uploads send its first half."""
    pad = length - len(json.dumps({"source": "x*y + x"}))
    return json.dumps({"source": "x*y + x" + " " * pad}).encode()


def stall(data: bytes, spread: bool) -> Callable[[Ctx], Outcome]:
    """STALLED connections that each send `data` (a request cut short) and then wait for
    `hold` seconds, from one address or (`spread`) each from its own; what the server did with
    each: its status, "closed" (no answer), "reset", or "open" (still waiting at the end)."""

    def case(ctx: Ctx) -> Outcome:
        began = time.perf_counter()
        socks: list[socket.socket] = []
        hits: dict[socket.socket, Hit] = {}
        refused = 0
        try:
            for k in range(STALLED):
                source = (address(k), 0) if spread else None
                try:
                    s = socket.create_connection((HOST, ctx.server.port), CONNECT_SECONDS, source)
                except OSError:
                    refused += 1
                    continue
                socks.append(s)
                with contextlib.suppress(OSError):  # the server's answer, if any, says more
                    s.sendall(data)
            ctx.normal.begin.set()
            end = began + ctx.config.hold
            while (left := end - time.perf_counter()) > 0:
                waiting = [s for s in socks if s not in hits]
                if not waiting:
                    time.sleep(left)
                    break
                ready, _, _ = select.select(waiting, [], [], min(left, 0.2))
                for s in ready:
                    hits[s] = _heard(s, time.perf_counter() - began)
        finally:
            for s in socks:
                s.close()
        out = [hits.get(s) or Hit("open", ctx.config.hold, judged=False) for s in socks]
        return Outcome(out + [Hit("refused", 0.0, judged=False)] * refused)

    return case


def _heard(s: socket.socket, seconds: float) -> Hit:
    """What a stalled socket that became readable says."""
    try:
        data = s.recv(256)
    except OSError:
        return Hit("reset", seconds, judged=False)
    if not data:
        return Hit("closed", seconds, judged=False)
    try:
        status = int(data.split()[1])
    except (IndexError, ValueError):
        return Hit("garbled", seconds, judged=False)
    return Hit(str(status), seconds, status, judged=False)


# --- layout bombs -------------------------------------------------------------------------------


def layouts_and_pictures(route: str, sources: tuple[str, ...]) -> Callable[[Ctx], Outcome]:
    """Layout bombs at once, and meanwhile new small pictures one after another from half a
    second in: each should come within SMALL_PICTURE_SECONDS."""

    def case(ctx: Ctx) -> Outcome:
        pictures: list[Hit] = []

        def small() -> list[Hit]:
            time.sleep(0.5)
            for k in range(3):
                source = hostile.small_picture(1000 * len(sources[0]) + k)  # never drawn
                pictures.append(ctx.ask("svg", source))
                time.sleep(0.3)
            return []

        def bomb(source: str) -> list[Hit]:
            return [ctx.ask(route, source)]

        hits = at_once(ctx, [*(functools.partial(bomb, b) for b in sources), small])
        fast = bool(pictures) and all(
            p.status == 200 and p.seconds <= SMALL_PICTURE_SECONDS for p in pictures
        )
        shown = ", ".join(f"{p.what} in {ms(p.seconds)}" for p in pictures)
        check = f"small picture ≤ {SMALL_PICTURE_SECONDS:g} s"
        return Outcome(hits, [(check, fast)], [f"small pictures meanwhile: {shown}"])

    return case


# --- grad() under concurrency -------------------------------------------------------------------


def grad_race(route: str, each: int, threads: int = 8, **options: Any) -> Callable[[Ctx], Outcome]:
    """Every grad program answered alone, then `threads` clients sending `each` of them at
    once: each concurrent answer must equal the lone one byte for byte. A comment after the
    last line gives each request a cache key of its own without changing the answer."""

    def case(ctx: Ctx) -> Outcome:
        programs = hostile.grad_programs()
        with ctx.client() as http:
            alone = {
                p: ctx.ask(route, hostile.salted(p, "alone"), http, **options) for p in programs
            }
            again = ctx.ask(route, hostile.salted(programs[0], "again"), http, **options)

        def job(t: int) -> list[Hit]:
            with ctx.client(address(t)) as http:
                return [
                    ctx.ask(route, hostile.salted(program(t, j), f"{t}.{j}"), http, **options)
                    for j in range(each)
                ]

        def program(t: int, j: int) -> str:
            return programs[(t * each + j) % len(programs)]

        raced = at_once(ctx, [functools.partial(job, t) for t in range(threads)])
        pairs = [(hit, alone[program(k // each, k % each)]) for k, hit in enumerate(raced)]
        compared = [(h, a) for h, a in pairs if h.status == 200 and a.status == 200]
        wrong = [(h, a) for h, a in compared if h.body != a.body]
        where = Counter(key for h, a in wrong for key in differs_in(h.body, a.body))
        differ = len(wrong)
        notes = [f"{differ} of {len(compared)} answers differ from the program answered alone"]
        if where:
            notes[0] += " (in " + ", ".join(f"{key} ×{n}" for key, n in where.most_common()) + ")"
        void = again.body != alone[programs[0]].body
        if void:
            notes.append("a trailing comment changed an answer: the comparison means nothing")
        hits = [*alone.values(), again, *raced]
        return Outcome(hits, [("same bytes as alone", not differ and not void)], notes)

    return case


def differs_in(a: bytes, b: bytes) -> list[str]:
    """Where two JSON answers differ: their top-level keys, and one level down ("trace.nodes");
    ["body"] when either is not a JSON object."""
    try:
        x, y = json.loads(a), json.loads(b)
    except ValueError:
        return ["body"]
    if not (isinstance(x, dict) and isinstance(y, dict)):
        return ["body"]
    out = []
    for key in sorted(set(x) | set(y)):
        u, v = x.get(key), y.get(key)
        if u == v:
            continue
        if isinstance(u, dict) and isinstance(v, dict):
            out += [f"{key}.{k}" for k in sorted(set(u) | set(v)) if u.get(k) != v.get(k)]
        else:
            out.append(key)
    return out


# --- every case ---------------------------------------------------------------------------------

CLASSES = ("memory", "views", "idle", "layout", "crash", "grad", "run")


def all_cases(config: Config) -> list[Case]:
    h = hostile

    def zeros_loop(steps: int) -> str:
        return h.tensor_loop(steps, "zeros(128, 128)", "sum(X)")

    memory: list[tuple[str, Ask]] = [
        ("sum loop (issue 11), POST /api/trace", ("trace", h.SUM_LOOP, {})),
        ("mse loop, POST /api/trace", ("trace", h.MSE_LOOP, {})),
        ("mse((16384,1), (1,16384)), POST /api/trace", ("trace", h.MSE_BROADCAST, {})),
        ("randn loop, X.sum(), POST /api/trace", ("trace", h.tensor_loop(998), {})),
        ("sum loop, accumulate=assign", ("trace", zeros_loop(997), {"accumulate": "assign"})),
        ("sum loop + 5 lessons", ("trace", zeros_loop(996), {"lessons": h.HEAVY_LESSONS})),
        ("sum loop, GET /", ("page", zeros_loop(995), {})),
        ("sum loop, GET /embed", ("embed", zeros_loop(994), {})),
        ("sum loop, GET /api/svg", ("svg", zeros_loop(993), {})),
        ("sum loop, POST /api/render", ("render", zeros_loop(992), {})),
    ]
    cases = [Case("memory", n, sends(a), quick=k == 0) for k, (n, a) in enumerate(memory)]

    # Issue 11 saw seven such /embed pages hold 2.9 GB; /api/render keeps answers of its own.
    pages = 2 if config.quick else 7
    for k, (route, what) in enumerate((("embed", "GET /embed"), ("render", "POST /api/render"))):
        asks: list[Ask] = [(route, h.heavy_view(100 * k + j), {}) for j in range(pages)]
        cases.append(Case("views", f"{pages} heavy views, {what}", sends(*asks), quick=k == 0))

    stalls = [
        (
            "half a body, POST /api/trace, one address",
            upload_head("/api/trace") + padded_body()[:500],
            False,
        ),
        (
            "half a body, POST /api/render, 20 addresses",
            upload_head("/api/render") + padded_body()[:500],
            True,
        ),
        ("headers only, 20 addresses", upload_head("/api/trace"), True),
        ("headers never finished, 20 addresses", upload_head("/api/trace")[:-2], True),
    ]
    for k, (what, data, spread) in enumerate(stalls):
        name = f"{STALLED} stalled uploads: {what}"
        case = stall(data, spread)
        cases.append(Case("idle", name, case, k == 0, STALLED_NORMAL_SECONDS, normal_later=True))

    # The DAG, then heavier ones of the same kind (skip_dag's `pad`), each a new shape.
    bombs = {
        "90": h.skip_dag(90),
        "70 padded": h.skip_dag(70, pad=True),
        "120 padded": h.skip_dag(120, pad=True),
        "90 padded": h.skip_dag(90, pad=True),
        "90 skips 1,7,19,37,53": h.skip_dag(90, (1, 7, 19, 37, 53), pad=True),
    }

    def two(route: str, a: str, b: str) -> Case:
        where = "POST /api/render" if route == "render" else "GET /api/svg"
        name = f"skip DAGs {a} and {b} at once, {where} + small pictures"
        case = layouts_and_pictures(route, (bombs[a], bombs[b]))
        return Case("layout", name, case, quick=route == "svg")

    cases += [
        Case("layout", "skip DAG 90 (issue 11), GET /api/svg", sends(("svg", bombs["90"], {}))),
        two("svg", "70 padded", "120 padded"),
        Case(
            "layout", "skip DAG 70 padded again (a replay)", sends(("svg", bombs["70 padded"], {}))
        ),
        two("render", "90 padded", "90 skips 1,7,19,37,53"),
    ]

    for k, (name, crashes) in enumerate(h.CRASHES.items()):
        asks = [(route, source, {}) for route, source in crashes]
        cases.append(Case("crash", name, sends(*asks), quick=k == 0))

    each = 2 if config.quick else 12
    cases += [
        Case("grad", f"8 threads × {each}, POST /api/trace", grad_race("trace", each), True),
        Case("grad", f"8 threads × {each}, POST /api/render", grad_race("render", each)),
        Case(
            "grad",
            f"8 threads × {each // 2}, POST /api/trace + lessons higher, forward",
            grad_race("trace", each // 2, lessons=["higher", "forward"]),
        ),
    ]
    for k, (name, (source, extra)) in enumerate(h.RUN_ATTACKS.items()):
        cases.append(Case("run", name, sends(("trace", source, extra)), quick=k == 0))
    return cases


# --- running a case -----------------------------------------------------------------------------


@dataclass
class Row:
    case: Case
    hits: list[Hit]
    rss: str  # "base / before → peak → settled", MB
    normal: str
    checks: list[tuple[str, bool]]
    notes: list[str]


def run_case(server: Server, case: Case, config: Config) -> Row:
    notes: list[str] = []
    if server.running and not (server.alive() and server.healthy()):
        notes.append("the worker did not answer /healthz before the case: restarted")
        server.stop()
    if not server.running:
        server.start()
    base, before = server.base, rss(server.pid)
    with Sampler(server, config.cap) as sampler, Normal(server.port) as normal:
        if not case.normal_later:
            normal.begin.set()
        try:
            outcome = case.run(Ctx(server, config, normal))
        except Exception as exc:  # one case failing must not lose the others
            outcome = Outcome([Hit(f"failed: {type(exc).__name__}: {exc}"[:80], float("nan"))])
    settled = _settle(server, config, outcome.hits, sampler.capped, notes)
    checks: list[tuple[str, bool]] = []
    judged = [h for h in outcome.hits if h.judged]
    if judged:
        checks.append((f"answered ≤ {ANSWER_SECONDS:g} s", all(h.ok() for h in judged)))
    checks.append((f"peak ≤ +{PEAK_MB:g} MB", sampler.peak - base <= PEAK_MB))
    checks.append((f"settled ≤ +{SETTLED_MB:g} MB", settled - base <= SETTLED_MB))
    if case.normal_within is not None:
        target = f"normal 200 ≤ {case.normal_within:g} s"
        checks.append((target, normal.all_fast(case.normal_within)))
    rss_text = f"{base:.0f} / {before:.0f} → {_mb(sampler.peak, base)} → {_mb(settled, base)}"
    return Row(
        case,
        outcome.hits,
        rss_text,
        normal.summary(),
        checks + outcome.checks,
        outcome.notes + notes,
    )


def _settle(
    server: Server, config: Config, hits: list[Hit], capped: bool, notes: list[str]
) -> float:
    """The settled RSS (NaN if the worker is gone); a worker that a case killed, left at work
    or left heavy is stopped, so that the next case starts from a baseline of its own."""
    if capped:
        notes.append(f"worker killed at +{config.cap:.0f} MB (the run's RSS cap)")
        for hit in hits:
            if hit.what == "dropped":
                hit.what = "killed"
    if not server.alive():
        if not capped:
            notes.append("the worker died")
        server.stop()
        return float("nan")
    cpu = cpu_seconds(server.pid)
    time.sleep(config.settle)
    settled = rss(server.pid)
    busy = (cpu_seconds(server.pid) - cpu) / config.settle
    why = ""
    if any(h.what == "timeout" for h in hits):
        why = "a request ran past the client's timeout"
    elif busy > BUSY_AFTER:
        why = f"the worker was still at work after the case ({busy:.0%} CPU)"
    elif settled - server.base > SETTLED_MB:
        why = f"the worker stayed at +{settled - server.base:.0f} MB"
    elif not server.healthy():
        why = "/healthz did not answer after the case"
    if why:
        notes.append(f"{why}: restarted")
        server.stop()
    return settled


def failed_row(case: Case, exc: Exception) -> Row:
    what = f"not run: {type(exc).__name__}: {exc}".splitlines()[0][:100]
    return Row(case, [Hit(what, float("nan"))], "–", "–", [("ran", False)], [])


# --- the table ----------------------------------------------------------------------------------


def _mb(x: float, base: float) -> str:
    return "–" if x != x else f"{x:.0f} (+{x - base:.0f})"


def _answers(hits: list[Hit]) -> str:
    counts = Counter(h.what for h in hits)
    if len(hits) == 1:
        return hits[0].what
    return " ".join(f"{n}×{what}" for what, n in counts.most_common())


def report(rows: list[Row], seconds: float, config: Config) -> str:
    lines = [
        "| class | case | answers | slowest | RSS MB: base / before → peak → settled | "
        "normal: p50 / max · not 200 | targets missed |",
        "|---|---|---|---|---|---|---|",
    ]
    notes = []
    for r in rows:
        slowest = max((h.seconds for h in r.hits if h.seconds == h.seconds), default=float("nan"))
        missed = ", ".join(name for name, met in r.checks if not met) or "✅ none"
        lines.append(
            f"| {r.case.cls} | {r.case.name} | {_answers(r.hits)} | {ms(slowest)} | "
            f"{r.rss} | {r.normal} | {missed} |"
        )
        notes += [f"- {r.case.cls} / {r.case.name}: {note}" for note in r.notes]
    met = sum(1 for r in rows for _, ok in r.checks if ok)
    total = sum(len(r.checks) for r in rows)
    mode = "quick" if config.quick else "full"
    lines += ["", *notes, "", f"run: {seconds:.0f} s ({mode}, {len(rows)} cases)"]
    lines.append(f"targets: {met} met, {total - met} missed")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.stress", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="one case per class, shorter waits")
    parser.add_argument(
        "--only", default="", help=f"comma-separated classes of {', '.join(CLASSES)}"
    )
    parser.add_argument(
        "--rss-cap",
        type=float,
        default=RSS_CAP_MB,
        help="MB above baseline at which the worker is killed",
    )
    args = parser.parse_args(argv)
    only = [c for c in args.only.split(",") if c] or list(CLASSES)
    unknown = set(only) - set(CLASSES)
    if unknown:
        parser.error(f"unknown classes: {', '.join(sorted(unknown))}")
    config = make_config(args.quick, args.rss_cap)
    started = time.perf_counter()
    rows: list[Row] = []
    cases = [c for c in all_cases(config) if c.quick or not config.quick]
    for cls in (c for c in CLASSES if c in only):
        server = Server()  # a fresh worker per class: one class's leftovers are not the next's
        try:
            for case in (c for c in cases if c.cls == cls):
                print(f"… {cls}: {case.name}", file=sys.stderr, flush=True)
                try:
                    rows.append(run_case(server, case, config))
                except Exception as exc:  # the server would not start: say so, go on
                    rows.append(failed_row(case, exc))
                    server.stop()
        finally:
            server.stop()
    print(report(rows, time.perf_counter() - started, config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
