"""docker-compose.yml's deployment, run for real on this machine: a real redis-server, real app
replicas (uvicorn with the compose command's options) and a real nginx with deploy/nginx.conf
in front, each of which a test may stop, pause or start again (a replica killed mid-question,
Redis restarted empty or paused), on the same ports so that nginx finds them again.

Docker cannot run here, so the configs are rendered for a bare machine: the same files with
only what must differ replaced, each replacement required to match exactly once (below).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bench import load
from bench.rooms import redis_process
from tests.nginx_proc import Nginx, bare_machine_lines, nginx_server

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "deploy" / "nginx.conf"
COMPOSE = ROOT / "docker-compose.yml"
PROXY_ADDRESS = "172.28.0.2"  # nginx's address in docker-compose.yml, the one hop trusted


def compose_uvicorn_options() -> list[str]:
    """The app service's uvicorn options in docker-compose.yml, less the address and the
    workers, which the launcher sets (one worker a replica: replicas are the point here); the
    one trusted hop, nginx's address there, is nginx's here: 127.0.0.1."""
    compose = yaml.safe_load(COMPOSE.read_text())
    command = compose["services"]["app"]["command"]
    proxy_ip = compose["services"]["proxy"]["networks"]["classroom"]["ipv4_address"]
    assert proxy_ip == PROXY_ADDRESS
    set_here = {"--host", "--port", "--workers"}
    options = [a for a in command if a.startswith("--") and a.split("=")[0] not in set_here]
    trusted = f"--forwarded-allow-ips={PROXY_ADDRESS}"
    assert options.count(trusted) == 1, (
        f"docker-compose.yml no longer trusts nginx alone: {options}"
    )
    return [("--forwarded-allow-ips=127.0.0.1" if a == trusted else a) for a in options]


def bare_machine(conf: str, replicas: list[int], port: int, tmp: Path) -> str:
    """deploy/nginx.conf as it runs here. Docker's DNS name `app` with `resolve` (nginx 1.27.3+;
    Debian's is 1.22) becomes the replicas' loopback ports; port 80 a free one; and pid, logs
    and temp files go to `tmp`, in the foreground (tests/nginx_proc.bare_machine_lines)."""
    main, http_lines = bare_machine_lines(tmp)
    servers = "".join(f"        server 127.0.0.1:{p};\n" for p in replicas)
    swaps = [
        ("        server app:8000 resolve;\n", servers),
        ("        listen 80;\n", f"        listen 127.0.0.1:{port};\n"),
        ("\nhttp {\n", "\nhttp {\n" + http_lines),
    ]
    for old, new in swaps:
        assert conf.count(old) == 1, f"deploy/nginx.conf no longer has {old.strip()!r} once"
        conf = conf.replace(old, new)
    return main + conf


@dataclass
class Replica:
    """One app replica on a fixed port: start, kill, start again."""

    port: int
    env: dict[str, str]
    options: list[str]
    proc: subprocess.Popen[bytes] | None = None
    log: Path = field(default_factory=lambda: Path(tempfile.mkstemp(suffix=".log")[1]))
    open_files: tuple[int, int] | None = None  # (soft, hard): a container's ulimit

    @property
    def url(self) -> str:
        return f"http://{load.HOST}:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> None:
        args = [sys.executable, "-m", "uvicorn", "app.main:app", "--host", load.HOST,
                "--port", str(self.port), "--log-level", "warning", *self.options]  # fmt: skip
        limits = self.open_files

        def ulimit() -> None:
            if limits is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, limits)

        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **self.env},
                stdout=subprocess.DEVNULL, stderr=log, preexec_fn=ulimit,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    err = self.log.read_text()[-2000:]
                    raise RuntimeError(f"the replica did not start: {err}") from None
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: a replica that dies, with no goodbye to anyone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Redis:
    """The deployment's redis-server on a fixed port: stopped and started again empty (as
    compose runs it: nothing on disk), or paused (SIGSTOP) and resumed."""

    def __init__(self) -> None:
        self.port = load.free_port()
        self.url = f"redis://{load.HOST}:{self.port}/0"
        self._stack = ExitStack()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        _, self.proc = self._stack.enter_context(redis_process(self.port))

    def restart_empty(self) -> None:
        """Kill it and start a new one on the same port, holding nothing."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        self._stack.close()
        self._stack = ExitStack()
        self.start()

    def pause(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
        self._stack.close()


@dataclass
class Deployment:
    nginx: Nginx
    replicas: list[Replica]
    redis: Redis

    @property
    def url(self) -> str:
        return self.nginx.url


@contextmanager
def deployment(env: dict[str, str] | None = None, replicas: int = 2) -> Iterator[Deployment]:
    """Redis, `replicas` app replicas sharing it, and nginx with deploy/nginx.conf in front."""
    redis = Redis()
    redis.start()
    options = compose_uvicorn_options()
    made = [
        Replica(load.free_port(), {"GRADTRACE_REDIS_URL": redis.url, **(env or {})}, options)
        for _ in range(replicas)
    ]
    try:
        for r in made:
            r.start()

        def render(port: int, tmp: Path) -> str:
            return bare_machine(CONF.read_text(), [r.port for r in made], port, tmp)

        with nginx_server(render) as nginx:
            yield Deployment(nginx, made, redis)
    finally:
        for r in made:
            r.stop()
        redis.close()
