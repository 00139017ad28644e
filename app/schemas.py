"""Request, response and error models of the JSON API (spec/api.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# A value for a free name: a number or a nested list of numbers.
NestedNumbers = float | list[Any]


class TraceRequest(BaseModel):
    # strict: "2" is not the number 2, nor 0 the boolean false (a malformed request is a 422)
    model_config = ConfigDict(extra="forbid", strict=True)

    source: str = Field(description="A program in the gradtrace language (spec/language.md).")
    values: dict[str, NestedNumbers] | None = Field(
        default=None, description="Values for free names: numbers or nested lists."
    )
    accumulate: Literal["add", "assign"] = Field(
        default="add", description="'add' (+=, correct) or 'assign' (=, the classic bug)."
    )
    order: Literal["dfs", "kahn"] = Field(
        default="dfs", description="'dfs' post-order topological sort or Kahn's ready queue."
    )
    lessons: list[str] | None = Field(
        default=None,
        max_length=16,
        description="Lessons to add to the answer under 'lessons' (engine/lessons): "
        "compare_assign, orders, gradcheck, higher, forward, shapes, memory, code, mistakes.",
    )
    lesson_options: dict[str, dict[str, Any]] | None = Field(
        default=None, description="Options per lesson, keyed by the lesson's name."
    )
    lesson_pass: int | None = Field(
        default=None,
        ge=0,
        description="Of a program of several backward passes, the pass (an index into "
        "'passes', clamped) that the lessons looking at one pass look at: compare_assign, "
        "orders, gradcheck, higher, forward, shapes, memory, mistakes. The others (code) read "
        "the whole run. Absent: every lesson reads the whole run, as before. Given, the "
        "answer's 'lesson_passes' says which pass each lesson looked at (null: the whole run).",
    )


class ErrorDetail(BaseModel):
    message: str
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    code: str | None = None
    limit: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorDetail


class NodeOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    name: str | None
    label: str
    kind: Literal["leaf", "const", "op"]
    op: str | None
    inputs: list[str]
    shape: list[int]
    value: Any
    grad: Any


class StepOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    node: str
    grads: dict[str, Any]


class PrintedLine(BaseModel):
    """One line a print(…) or `x.grad` statement shows, as its library prints it."""

    line: int = Field(description="The source line of the statement that printed it.")
    text: str = Field(description="What it prints: `tensor(4.)` under torch, `4.0` otherwise.")


class WarningOut(BaseModel):
    """A free name one edit from an assigned name: it runs, and the answer says so."""

    model_config = ConfigDict(extra="allow")

    message: str = Field(description="\"'yy' is never assigned; did you mean 'y'?\"")
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    name: str | None = Field(default=None, description="The free name (`yy`).")
    suggestion: str | None = Field(default=None, description="The assigned name (`y`).")


class TraceResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    output: str
    value: Any
    nodes: list[NodeOut]
    topo: list[str]
    steps: list[StepOut]
    grads: dict[str, Any]
    printed: list[PrintedLine] = Field(
        default_factory=list, description="What print(…) and `x.grad` lines show, in order."
    )
    warnings: list[WarningOut] = Field(
        default_factory=list,
        description="Did-you-mean warnings (none for a name given a value; at most 20).",
    )


# --- what the OpenAPI document says about the page, the embed and the image --------------------
# GET /, /embed and /api/svg read their query parameters themselves (app/query.py), leniently:
# a permalink in old course notes should still open. So the parameters are described here
# rather than declared on the routes, where FastAPI would validate them.


def _query(name: str, description: str, example: str | None = None) -> dict[str, Any]:
    param: dict[str, Any] = {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": {"type": "string"},
    }
    if example is not None:
        param["example"] = example
    return param


PAGE_PARAMETERS: list[dict[str, Any]] = [
    _query(
        "source",
        "The program (spec/language.md). The page opens the lesson's example "
        "without it; the image needs it (or `z`).",
        "x*y + x",
    ),
    _query(
        "z",
        "The program compressed: raw deflate, then base64url without padding (what the "
        "page writes for long programs). Used when `source` is absent; it may not inflate "
        "past 65,536 bytes.",
    ),
    _query(
        "values",
        "Values for free names: `x=2,y=3`, `x:2,y:3`, or a JSON object for tensors.",
        "x=2,y=3",
    ),
    _query("accumulate", "`add` (+=, the default) or `assign` (=, the classic bug).", "add"),
    _query("order", "`dfs` (the default) or `kahn`.", "dfs"),
    _query(
        "step",
        "An index into `steps`: 0 shows only the seed; absent (or not a whole number) "
        "means the last; out of range clamps.",
        "1",
    ),
    _query("lang", "`en` (the default) or `zh`.", "en"),
    _query("v", "The address format; this server reads 1.", "1"),
    _query(
        "collapse",
        "`1`: draw a long unrolled loop as its first and last iterations and a box; `0`: draw "
        "it in full; absent: collapsed when the graph has more than 200 nodes.",
    ),
]
_LAYOUT = _query(
    "layout",
    "`lr` (inputs on the left, the default) or `tb` (inputs on top); on the page, `auto` (or "
    "absent) lets it draw the one that fits its box larger (on a desk, lr whenever it reads).",
)
VIEW_PARAMETERS: list[dict[str, Any]] = PAGE_PARAMETERS + [
    _query("fwd", "A position in the forward pass, when stepping it."),
    _query("present", "`1`: presentation mode."),
    _LAYOUT,
]
SVG_PARAMETERS: list[dict[str, Any]] = PAGE_PARAMETERS + [
    _query("legend", "`0` draws no legend."),
    _LAYOUT,
]
# The routes' `openapi_extra`: the parameters each reads itself.
TRACE_QUERY = {"parameters": PAGE_PARAMETERS}
VIEW_QUERY = {"parameters": VIEW_PARAMETERS}
SVG_QUERY = {"parameters": SVG_PARAMETERS}

_ERROR_JSON = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}}
_SVG = {"image/svg+xml": {"schema": {"type": "string"}}}
_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again.",
        "required": True,
        "schema": {"type": "integer"},
    }
}
_BUSY = "The server is busy (load shed, or the request ran past max_request_seconds)."


def _error(
    description: str, content: dict[str, Any] = _ERROR_JSON, headers: dict[str, Any] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "content": content}
    if headers:
        out["headers"] = headers
    return out


# Every route: 413 from the size guard, 503 from load shedding or the time bound.
JSON_ERRORS: dict[int | str, dict[str, Any]] = {
    413: _error("The program or request is over a limit (the limit is named)."),
    422: _error("The request is malformed."),
    503: _error(_BUSY, headers=_RETRY_AFTER),
}
PAGE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The page; a program that cannot run opens with its error shown.",
        "content": {"text/html": {"schema": {"type": "string"}}},
    },
    413: _error("The address is longer than max_query_bytes."),
    503: _error(_BUSY, headers=_RETRY_AFTER),
}
SVG_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "The graph at the step, as SVG.", "content": _SVG},
    400: _error("The program cannot run: an SVG that shows why (a broken image says so).", _SVG),
    413: _error(
        "The program, its drawing or the address is over a limit: an SVG that says which.", _SVG
    ),
    503: _error(_BUSY + " An SVG that says so.", _SVG, _RETRY_AFTER),
}
