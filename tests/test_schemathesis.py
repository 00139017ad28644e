"""The whole API fuzzed from its own OpenAPI document (/openapi.json) with schemathesis: for
every operation, generated requests — valid and invalid — never get a 5xx (other than a
documented 503), and every answer matches the document: its status, content type, headers and
body schema. Example counts are bounded so the file runs in seconds."""

from __future__ import annotations

import json

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app.main import app

SMALL = 8 * 1024  # bytes: an error answer never echoes a large input back


@schemathesis.check
def strict_json(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case
) -> None:
    """A JSON answer is JSON a browser can parse: no NaN or Infinity token, whatever the path."""
    if "json" not in response.headers.get("content-type", [""])[0]:
        return

    def refuse(token: str) -> None:
        raise AssertionError(f"{token} in a JSON answer")

    json.loads(response.content, parse_constant=refuse)


@schemathesis.check
def small_errors(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case
) -> None:
    """A 4xx answer is short: it names the problem and never echoes the input back in full."""
    if 400 <= response.status_code < 500:
        assert len(response.content) < SMALL, f"a {len(response.content)}-byte error answer"


# 413 is how this API rejects a request over a limit (a body over max_body_bytes), which
# generated invalid data sometimes is; schemathesis does not count 413 as a rejection by default.
CONFIG = schemathesis.Config.from_dict(
    {"checks": {"negative_data_rejection": {"expected-statuses": [400, 404, 405, 413, 422]}}}
)
schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=CONFIG)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    strict_json,
    small_errors,
]


@schema.parametrize()
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_every_operation_conforms_to_the_openapi_document(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=CHECKS)
