"""The one error the drawing raises: why a graph could not be drawn."""

from __future__ import annotations


class DrawError(Exception):
    """The graph could not be drawn: too large, Graphviz too slow, or Graphviz failed. `limit`
    names the setting that stopped it, if one did."""

    def __init__(self, message: str, code: str, limit: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.limit = limit
