"""A real uvicorn in a subprocess on a free 127.0.0.1 port, with settings from the environment,
serving `tests.server_hooks:app` (the app plus test-only hooks) unless told otherwise. For the
tests whose subject is the server itself: sockets, connections, the event loop."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from bench import load


@dataclass(frozen=True)
class Server:
    host: str
    port: int
    pid: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


@contextmanager
def uvicorn_server(
    env: dict[str, str], app: str = "tests.server_hooks:app", extra: Sequence[str] = ()
) -> Iterator[Server]:
    """uvicorn serving `app` with `env` added to this environment (GRADTRACE_* settings) and
    `extra` uvicorn options; the bench's launcher (bench.load.server), so that tests and bench
    start servers alike."""
    with load.server(env=env, app=app, extra=extra) as (port, pid):
        yield Server(load.HOST, port, pid)
