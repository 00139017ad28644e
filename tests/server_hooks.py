"""The real app with two test-only hooks, for tests that start a real uvicorn in a subprocess
(`uvicorn tests.server_hooks:app`), where a test cannot monkeypatch:

- `GET /test/sleep?s=0.5`: holds a place in max_in_flight for that long without using the CPU
  (a worker thread that sleeps), so admission can be tested without timing real programs;
- `GET /test/raise`, and `?raise=1` on `/`, `/embed` and `/api/svg`: an unexpected exception
  (a bug), for the last-resort handler.

Not a test file (pytest collects `test_*.py` only), and never imported by the app.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import wraps
from typing import Any

from fastapi import Request

from app.main import app
from app.routes import images, pages


class Bug(RuntimeError):
    """What a test raises where the app has a bug."""


@app.get("/test/sleep", include_in_schema=False)
def sleep(s: float = 0.5) -> dict[str, float]:
    time.sleep(min(s, 5.0))
    return {"slept": s}


@app.get("/test/raise", include_in_schema=False)
def boom() -> None:
    raise Bug("a test's bug in SECRET_INPUT")


def raising_on_ask(produce: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(produce)
    def wrapped(request: Request, *args: Any, **kw: Any) -> Any:
        if request.query_params.get("raise") == "1":
            raise Bug("a test's bug in SECRET_INPUT")
        return produce(request, *args, **kw)

    return wrapped


pages._page = raising_on_ask(pages._page)  # type: ignore[assignment]
images.svg_answer = raising_on_ask(images.svg_answer)  # type: ignore[assignment]
