"""A real uvicorn in a subprocess on a free 127.0.0.1 port, with settings from the environment,
serving `tests.server_hooks:app` (the app plus test-only hooks) unless told otherwise. For the
tests whose subject is the server itself: sockets, connections, the event loop."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Server:
    host: str
    port: int
    pid: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def uvicorn_server(env: dict[str, str], app: str = "tests.server_hooks:app") -> Iterator[Server]:
    """uvicorn serving `app` with `env` added to this environment (GRADTRACE_* settings)."""
    port = free_port()
    # A file, not a pipe: a server that logs much would block on a full pipe nobody reads.
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)]
            + ["--log-level", "critical", "--no-access-log"],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            give_up = time.monotonic() + 20
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if proc.poll() is not None or time.monotonic() > give_up:
                    proc.kill()
                    proc.wait()
                    log.seek(0)
                    err = log.read().decode("utf-8", "replace")
                    raise RuntimeError(f"uvicorn did not start: {err[-2000:]}")
                time.sleep(0.05)
            yield Server("127.0.0.1", port, proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
