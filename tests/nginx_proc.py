"""A real nginx (Debian's /usr/sbin/nginx) in the foreground on a free 127.0.0.1 port, from a
config text the test gives, with everything it writes (pid, logs, temp files) in a temporary
directory: `nginx -t` first (it must pass), then nginx itself, stopped at the end. For the test
of deploy/nginx.conf in front of real replicas (tests/test_rooms_proxy.py)."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

NGINX = "nginx"
START_SECONDS = 10.0  # nginx listens within a fraction of this; more means it failed
DOCKER_NOFILE = 1024  # a container's soft limit of open files since Docker 25 (moby#45534)


def have_nginx() -> bool:
    return shutil.which(NGINX) is not None or Path("/usr/sbin/nginx").exists()


def nginx_path() -> str:
    return shutil.which(NGINX) or "/usr/sbin/nginx"


@dataclass(frozen=True)
class Nginx:
    port: int
    dir: Path  # its prefix: the config, error.log, access.log, temp files
    checked: str  # what `nginx -t` said
    started: str  # error.log once it listens: its complaints about the config, if any

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def access_log(self) -> list[str]:
        path = self.dir / "access.log"
        return path.read_text().splitlines() if path.exists() else []


def bare_machine_lines(tmp: Path) -> tuple[str, str]:
    """(main-context lines, http-context lines) that keep nginx to `tmp` on a bare machine: in
    the foreground, its pid and logs there, temp files there (the distribution's are compiled
    in under /var/lib/nginx). The access log adds $upstream_addr: which replica served what."""
    main = f"daemon off;\npid {tmp}/nginx.pid;\nerror_log {tmp}/error.log warn;\n"
    temps = "".join(
        f"{kind}_temp_path {tmp}/{kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    log = (
        "log_format replicas '$status $request_method $request_uri upstream=$upstream_addr';\n"
        f"access_log {tmp}/access.log replicas;\n"
    )
    return main, temps + log


@contextmanager
def nginx_server(render: Callable[[int, Path], str]) -> Iterator[Nginx]:
    """nginx on a free port with the config `render(port, tmp)` returns; checked with
    `nginx -t` first (its complaint is the failure), then run until the block ends."""
    with tempfile.TemporaryDirectory(prefix="gradtrace-nginx-") as name:
        tmp = Path(name)
        os.chmod(tmp, 0o755)  # as root, nginx's workers run as nobody and write temp files here
        port = _free_port()
        conf = tmp / "nginx.conf"
        conf.write_text(render(port, tmp))
        cmd = [nginx_path(), "-c", str(conf), "-p", f"{tmp}/", "-e", str(tmp / "error.log")]
        check = subprocess.run(
            [*cmd, "-t"], capture_output=True, text=True, timeout=30, preexec_fn=_as_in_docker
        )
        if check.returncode != 0:
            raise RuntimeError(f"nginx -t refused the config:\n{check.stderr}")
        # Its own session: if nginx does not stop on SIGTERM, its workers go with the group.
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_as_in_docker,
        )
        try:
            _wait_listening(port, proc, tmp)
            yield Nginx(port, tmp, check.stderr, (tmp / "error.log").read_text())
        finally:
            proc.terminate()  # SIGTERM: nginx's fast shutdown, workers included
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _as_in_docker() -> None:
    """The open files a container gets from Docker unless told otherwise: a soft limit of 1024
    (the hard one, 524288 there, stays this machine's), so that a config that needs more must
    say so (worker_rlimit_nofile)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    soft = DOCKER_NOFILE if hard == resource.RLIM_INFINITY else min(DOCKER_NOFILE, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[bytes], tmp: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                log = tmp / "error.log"
                err = log.read_text()[-2000:] if log.exists() else ""
                raise RuntimeError(f"nginx did not start (exit {proc.poll()}): {err}") from None
            time.sleep(0.02)
