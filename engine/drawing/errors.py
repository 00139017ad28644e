"""The one error the drawing raises: why a graph could not be drawn."""

from __future__ import annotations

from typing import Any

from engine.errors import Msg


class DrawError(Exception):
    """The graph could not be drawn: too large, Graphviz too slow, or Graphviz failed. `limit`
    names the setting that stopped it, if one did. Its message is keyed, as every engine
    message is (engine/errors.py): `.msg` its key and params, `.message` its English."""

    def __init__(self, key: str, code: str, limit: str | None = None, **params: Any) -> None:
        self.msg = Msg(key, params)
        self.message = str(self.msg)
        super().__init__(self.message)
        self.code = code
        self.limit = limit
