"""The one error a recording can give: a key into the words (engine/words, `own_err_…`) with
its numbers and names, so it is said in either language without retelling English."""

from __future__ import annotations

from typing import Any

from engine.words import words


class OwnError(Exception):
    """A recording refused. `status` is 413 past a limit (named in `limit`), else 422; `where`
    is the path into the recording (`nodes[3].inputs[0]`)."""

    def __init__(self, key: str, where: str = "", limit: str | None = None, **params: Any):
        super().__init__(key)
        self.key, self.where, self.limit, self.params = key, where, limit, params

    @property
    def status(self) -> int:
        return 413 if self.limit is not None else 422

    def message(self, lang: str = "en") -> str:
        text = words(lang).get("own_err_" + self.key) or words("en")["own_err_" + self.key]
        said = text.format(**self.params, where=self.where, limit=self.limit or "")
        return f"{self.where}: {said}" if self.where else said

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        error: dict[str, Any] = {
            "message": self.message(lang),
            "line": None,
            "column": None,
            "code": "own_" + self.key,
            "where": self.where or None,
        }
        if self.limit is not None:
            error["limit"] = self.limit
        return {"error": error}
