"""Request, response and error models of the JSON API (spec/api.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# A value for a free name: a number or a nested list of numbers.
NestedNumbers = float | list[Any]


class TraceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

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


class TraceResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    output: str
    value: Any
    nodes: list[NodeOut]
    topo: list[str]
    steps: list[StepOut]
    grads: dict[str, Any]
