"""The one error a program can give: a message a student understands, with its position.

Messages are keyed: `fail("too_many_nodes", span, limit=2000)` finds the template
`msg_too_many_nodes` in engine/words/en.json (and zh.json for the Chinese), so a message is
worded once per language and translated by its key, never by matching its English text.
"""

from __future__ import annotations

from typing import Any


class Msg:
    """A message not yet worded: its key and the parts that vary (names, numbers, shapes, or
    other Msgs), worded in a language by engine.words.messages.say."""

    __slots__ = ("key", "params")

    def __init__(self, key: str, params: dict[str, Any]) -> None:
        self.key, self.params = key, params

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "params": jsonable_params(self.params)}

    def in_language(self, lang: str) -> str:
        """The message worded in `lang` (English for a language it has no words in)."""
        from engine.words.messages import say

        return say(self.key, lang, self.params)

    def __str__(self) -> str:
        return self.in_language("en")


def jsonable_params(params: dict[str, Any]) -> dict[str, Any]:
    """Params as JSON: a nested Msg as its dict, numbers and strings as they are."""
    out: dict[str, Any] = {}
    for k, v in params.items():
        if isinstance(v, Msg):
            out[k] = v.to_dict()
        elif isinstance(v, bool) or v is None or isinstance(v, int | float | str):
            out[k] = v
        else:
            out[k] = str(v)
    return out


class ProgramError(Exception):
    """A program that cannot run. Positions are 1-based and count code points.

    `status` is the HTTP status the app answers with: 413 when a size limit was hit, 400 for
    any other bad program. `limit` names the setting that stopped it, if one did. `msg` is the
    keyed message when the error was made by key (every error the engine makes), so that it
    can be worded in another language.
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
        msg: Msg | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.code, self.limit, self.msg = message, code, limit, msg
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
        if self.msg is not None:
            error["key"] = self.msg.key
            error["params"] = jsonable_params(self.msg.params)
        return {"error": error}

    def in_language(self, lang: str) -> str:
        """The message in `lang` (English for a language it has no words in)."""
        from engine.words.messages import translate_error

        return str(translate_error(self.to_dict()["error"], lang)["message"])

    def __str__(self) -> str:
        where = f"line {self.line}, column {self.column}: " if self.line is not None else ""
        return where + self.message


def fail(
    key: str,
    span: Any = None,
    *,
    code: str = "invalid",
    limit: str | None = None,
    **params: Any,
) -> ProgramError:
    """The ProgramError of message `key` with `params`, at `span` (anything with line, column,
    end_line and end_column, or None)."""
    from engine.words.messages import say

    msg = Msg(key, params)
    return ProgramError(
        say(key, "en", params),
        getattr(span, "line", None),
        getattr(span, "column", None),
        end_line=getattr(span, "end_line", None),
        end_column=getattr(span, "end_column", None),
        code=code,
        limit=limit,
        msg=msg,
    )
