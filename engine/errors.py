"""The one error a program can give: a message a student understands, with its position."""

from __future__ import annotations

from typing import Any


class ProgramError(Exception):
    """A program that cannot run. Positions are 1-based and count code points.

    `status` is the HTTP status the app answers with: 413 when a size limit was hit, 400 for
    any other bad program. `limit` names the setting that stopped it, if one did.
    """

    def __init__(
        self,
        message: str,
        line: int | None = None,
        column: int | None = None,
        *,
        end_line: int | None = None,
        end_column: int | None = None,
        code: str = "invalid",
        limit: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.code, self.limit = message, code, limit
        # Where: 1-based lines and columns (code points), None when it is not known.
        self.line, self.column = line, column
        self.end_line, self.end_column = end_line, end_column

    @property
    def status(self) -> int:
        return 413 if self.limit is not None else 400

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
        }
        if self.limit is not None:
            error["limit"] = self.limit
        return {"error": error}

    def __str__(self) -> str:
        where = f"line {self.line}, column {self.column}: " if self.line is not None else ""
        return where + self.message
