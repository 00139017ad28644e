"""No request changes state that another request reads, except a cache behind a lock.

The audit, as a test: every module-level object of `engine` and `app` is either immutable, a
cache that is safe across threads (functools.lru_cache, app.cache.LRU, each with its lock), a
lock, one of the few named objects guarded by a lock of their own, or a table that no
request writes — and that last claim is checked by running a varied set of requests (scalar,
tensor, grad of grad, every lesson, every page and picture) and comparing every such table
byte for byte before and after. A new module-level dict, list or object fails the inventory
until it is classified here.
"""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import threading
import types
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

import app
import engine
from app.cache import LRU
from tests.test_concurrency import requests

# Guarded by a lock of their own, next to them in their module.
GUARDED = {
    ("engine.drawing.render", "_timed_out"): "_timed_out_lock",
    ("engine.drawing.graphviz", "_idle"): "_lock",
    ("engine.drawing.graphviz", "_plugin_env"): "_plugin_lock",  # made once, on the first layout
}
# Framework objects made once at import (routes are registered then, never per request).
FRAMEWORK = ("FastAPI", "APIRouter", "Jinja2Templates")
IMMUTABLE = (
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    type,
    int,
    float,
    complex,
    str,
    bytes,
    bool,
    tuple,
    frozenset,
    type(None),
    property,
    staticmethod,
    classmethod,
    types.GenericAlias,  # type aliases: `Grads = tuple[...]`
    types.UnionType,
)


def modules() -> list[types.ModuleType]:
    found = [engine, app]
    for package in (engine, app):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.name.endswith("__main__"):
                found.append(importlib.import_module(info.name))
    return found


def is_immutable(obj: Any) -> bool:
    if isinstance(obj, IMMUTABLE):
        return True
    kind = type(obj)
    params = getattr(kind, "__dataclass_params__", None)
    if params is not None and params.frozen:
        return True  # Limits, Settings, Deadline
    # typing's aliases and forms, compiled patterns, paths, context variables, loggers, structs
    return kind.__module__ in ("typing", "re", "pathlib", "_contextvars", "logging", "_struct",
                               "__future__", "typing_extensions") or kind.__name__ in (
        "Pattern", "PosixPath", "ContextVar", "Logger", "Struct", "_Feature", "count",
    "_CallableGenericAlias",
    )  # fmt: skip


def is_safe_cache_or_lock(obj: Any) -> bool:
    if isinstance(obj, LRU):
        return True  # every read and write under its own lock
    if type(obj).__name__ == "_lru_cache_wrapper":
        return True  # functools.lru_cache: safe across threads
    lock_types = (type(threading.Lock()), type(threading.RLock()), threading.Semaphore)
    return isinstance(obj, lock_types)


def tables() -> Iterator[tuple[str, str, Any]]:
    """Every module-level object that a request could change: (module, name, object)."""
    for mod in modules():
        for name, obj in vars(mod).items():
            if name.startswith("__") or is_immutable(obj) or is_safe_cache_or_lock(obj):
                continue
            if type(obj).__name__ in FRAMEWORK:
                continue
            yield mod.__name__, name, obj


def snapshot(obj: Any) -> bytes:
    state = obj if isinstance(obj, dict | list | set) else getattr(obj, "__dict__", None)
    if state is None and hasattr(type(obj), "__slots__"):
        state = {s: getattr(obj, s, None) for s in type(obj).__slots__}
    try:
        return pickle.dumps(state if state is not None else repr(obj))
    except Exception:  # a table of functions or classes: its keys and what they name
        return repr(state).encode()


def test_every_guarded_object_has_its_lock() -> None:
    for (module, name), lock in GUARDED.items():
        mod = importlib.import_module(module)
        assert hasattr(mod, name) and is_safe_cache_or_lock(getattr(mod, lock)), (module, name)


@pytest.fixture(scope="module")
def before() -> dict[tuple[str, str], bytes]:
    return {(m, n): snapshot(o) for m, n, o in tables() if (m, n) not in GUARDED}


def test_no_request_changes_a_module_level_table(before: dict[tuple[str, str], bytes]) -> None:
    assert len(before) > 40  # the registries of ops, functions, lessons, strings, …
    with TestClient(app.main.app) as client:
        for method, path, data in requests():
            r = client.get(path, params=data) if method == "GET" else client.post(path, json=data)
            assert r.status_code == 200, (path, r.text[:200])
        for example in app.examples.EXAMPLES:
            assert client.get("/", params={"source": example["source"]}).status_code == 200
        assert client.get("/embed", params={"source": "x*y + x", "lang": "zh"}).status_code == 200
    after = {(m, n): snapshot(o) for m, n, o in tables() if (m, n) not in GUARDED}
    assert after.keys() == before.keys()
    changed = [f"{m}.{n}" for (m, n), b in before.items() if after[(m, n)] != b]
    assert not changed, f"requests changed module-level state: {changed}"
