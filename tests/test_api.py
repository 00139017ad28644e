"""POST /api/trace exactly as spec/api.md says, through FastAPI's TestClient against
`app.main:app`; every failure is a 4xx with the error object, and nothing is ever a 5xx."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.main import app

EXAMPLE_REQUEST = {
    "source": "x*y + x",
    "values": {"x": 2, "y": 3},
    "accumulate": "add",
    "order": "dfs",
}
EXAMPLE_RESPONSE = {
    "output": "n3",
    "value": 8.0,
    "nodes": [
        {
            "id": "n0",
            "name": "x",
            "label": "x",
            "kind": "leaf",
            "op": None,
            "inputs": [],
            "shape": [],
            "value": 2.0,
            "grad": 4.0,
        },
        {
            "id": "n1",
            "name": "y",
            "label": "y",
            "kind": "leaf",
            "op": None,
            "inputs": [],
            "shape": [],
            "value": 3.0,
            "grad": 2.0,
        },
        {
            "id": "n2",
            "name": None,
            "label": "x*y",
            "kind": "op",
            "op": "mul",
            "inputs": ["n0", "n1"],
            "shape": [],
            "value": 6.0,
            "grad": 1.0,
        },
        {
            "id": "n3",
            "name": "out",
            "label": "out",
            "kind": "op",
            "op": "add",
            "inputs": ["n2", "n0"],
            "shape": [],
            "value": 8.0,
            "grad": 1.0,
        },
    ],
    "topo": ["n0", "n1", "n2", "n3"],
    "steps": [
        {"node": "n3", "grads": {"n3": 1.0}},
        {"node": "n3", "grads": {"n2": 1.0, "n0": 1.0}},
        {"node": "n2", "grads": {"n0": 4.0, "n1": 2.0}},
    ],
    "grads": {"x": 4.0, "y": 2.0},
}
ERROR_KEYS = {"message", "line", "column"}
SMALL = 4096  # bytes: an error answer never echoes a large input back


def no_5xx(response: httpx.Response) -> None:
    # 503 with Retry-After is the one 5xx api.md allows (load shedding)
    if response.status_code == 503:
        assert "retry-after" in response.headers
        return
    assert response.status_code < 500, (response.status_code, response.read()[:500])


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as c:
        c.event_hooks = {"request": [], "response": [no_5xx]}
        yield c


def strict_json(response: httpx.Response) -> Any:
    """Parse as a browser would: NaN/Infinity are not JSON."""

    def refuse(token: str) -> None:
        raise AssertionError(f"{token} in JSON")

    return json.loads(response.content, parse_constant=refuse)


def post(client: TestClient, body: Any) -> httpx.Response:
    return client.post("/api/trace", json=body)


def post_raw(
    client: TestClient, content: bytes, content_type: str = "application/json"
) -> httpx.Response:
    return client.post("/api/trace", content=content, headers={"content-type": content_type})


def error_of(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/json")
    body = strict_json(response)
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) >= ERROR_KEYS
    assert isinstance(error["message"], str) and error["message"]
    assert len(response.content) < SMALL
    return error


def pick(node: dict[str, Any], keys: Any) -> dict[str, Any]:
    return {k: node[k] for k in keys}


# --- the contract ---------------------------------------------------------------------------


def test_the_example_request_gives_the_example_response(client: TestClient) -> None:
    r = post(client, EXAMPLE_REQUEST)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    d = strict_json(r)
    assert d["output"] == EXAMPLE_RESPONSE["output"] and d["value"] == EXAMPLE_RESPONSE["value"]
    keys = EXAMPLE_RESPONSE["nodes"][0].keys()
    assert [pick(n, keys) for n in d["nodes"]] == EXAMPLE_RESPONSE["nodes"]
    assert d["topo"] == EXAMPLE_RESPONSE["topo"]
    assert [pick(s, ("node", "grads")) for s in d["steps"]] == EXAMPLE_RESPONSE["steps"]
    assert d["grads"] == EXAMPLE_RESPONSE["grads"]


def test_options_default_to_add_and_dfs(client: TestClient) -> None:
    full = strict_json(post(client, EXAMPLE_REQUEST))
    short = strict_json(post(client, {"source": "x*y + x", "values": {"x": 2, "y": 3}}))
    assert short == full


def test_accumulate_assign_shows_the_classic_bug(client: TestClient) -> None:
    d = strict_json(post(client, {**EXAMPLE_REQUEST, "accumulate": "assign"}))
    # the second contribution to x (3, from x*y) overwrites the first (1, from + x)
    assert d["grads"] == {"x": 3.0, "y": 2.0}
    assert [s["grads"] for s in d["steps"]] == [
        {"n3": 1.0},
        {"n2": 1.0, "n0": 1.0},
        {"n0": 3.0, "n1": 2.0},
    ]
    # every contribution overwrites, even the second edge of x*x
    d = strict_json(post(client, {"source": "x*x", "values": {"x": 3}, "accumulate": "assign"}))
    assert d["grads"] == {"x": 3.0}
    d = strict_json(post(client, {"source": "x*x", "values": {"x": 3}}))
    assert d["grads"] == {"x": 6.0}


def kahn_reference(d: dict[str, Any]) -> list[str]:
    """api.md's Kahn: dependency counting from the output, the highest ready id runs first;
    returned inputs-first like `topo`."""
    nodes = {n["id"]: n for n in d["nodes"]}
    seen, todo = {d["output"]}, [d["output"]]
    while todo:
        for x in nodes[todo.pop()]["inputs"]:
            if x not in seen:
                seen.add(x)
                todo.append(x)
    waiting = dict.fromkeys(seen, 0)
    for nid in seen:
        for x in nodes[nid]["inputs"]:
            waiting[x] += 1
    ready, backward = [d["output"]], []
    while ready:
        ready.sort(key=lambda i: int(i[1:]))
        nid = ready.pop()
        backward.append(nid)
        for x in nodes[nid]["inputs"]:
            waiting[x] -= 1
            if waiting[x] == 0:
                ready.append(x)
    return backward[::-1]


@pytest.mark.parametrize(
    "source",
    [
        "a = 2\nb = a * 3\nc = a * 4\nL = c + b",
        "x*y + x",
        "w = 0.5\nh = 1\nfor t in range(3):\n    h = tanh(h*w + x*t)\nL = h + w*w",
        "W = [[1, 2], [3, 4]]\nv = [1, -1]\nu = W @ v\nL = (u*u).sum() + (W*W).mean()",
    ],
)
def test_order_kahn(client: TestClient, source: str) -> None:
    dfs = strict_json(post(client, {"source": source}))
    kahn = strict_json(post(client, {"source": source, "order": "kahn"}))
    assert kahn["topo"] == kahn_reference(kahn)
    ops = [n["id"] for n in kahn["nodes"] if n["kind"] == "op"]
    expected_steps = [i for i in reversed(kahn["topo"]) if i in ops]
    assert [s["node"] for s in kahn["steps"]] == [kahn["output"]] + expected_steps
    assert kahn["grads"] == dfs["grads"]  # same gradients, different schedule
    assert kahn["nodes"] == dfs["nodes"]


def test_kahn_and_dfs_differ_where_the_spec_says(client: TestClient) -> None:
    source = "a = 2\nb = a * 3\nc = a * 4\nL = c + b"  # a n0, 3 n1, b n2, 4 n3, c n4, L n5
    dfs = strict_json(post(client, {"source": source}))
    kahn = strict_json(post(client, {"source": source, "order": "kahn"}))
    assert dfs["topo"] == ["n0", "n3", "n4", "n1", "n2", "n5"]  # inputs in argument order
    assert kahn["topo"] == ["n0", "n1", "n2", "n3", "n4", "n5"]  # highest ready id first
    assert [s["node"] for s in dfs["steps"]] == ["n5", "n5", "n2", "n4"]
    assert [s["node"] for s in kahn["steps"]] == ["n5", "n5", "n4", "n2"]


def test_values_with_nested_lists(client: TestClient) -> None:
    d = strict_json(
        post(
            client,
            {"source": "L = (W @ v).sum()", "values": {"W": [[1, 2], [3, 4]], "v": [0.5, -1]}},
        )
    )
    assert d["value"] == (0.5 - 2) + (1.5 - 4)
    assert d["grads"] == {"W": [[0.5, -1.0], [0.5, -1.0]], "v": [4.0, 6.0]}
    w = next(n for n in d["nodes"] if n["label"] == "W")
    assert w["shape"] == [2, 2] and w["value"] == [[1.0, 2.0], [3.0, 4.0]]


def test_class_labels_given_as_values(client: TestClient) -> None:
    d = strict_json(
        post(client, {"source": "z = [1.0, 2.0, 3.0]\nL = cross_entropy(z, t)", "values": {"t": 2}})
    )
    assert set(d["grads"]) == {"z"}
    d = strict_json(
        post(
            client,
            {
                "source": "z = [[1.0, 2.0], [3.0, 4.0]]\ncross_entropy(z, t)",
                "values": {"t": [1, 0]},
            },
        )
    )
    assert set(d["grads"]) == {"z"}
    e = error_of(
        post(client, {"source": "z = [1.0, 2.0]\ncross_entropy(z, t)", "values": {"t": 0.5}}), 400
    )
    assert e["code"] == "labels"


def test_a_tensor_output_is_seeded_with_ones(client: TestClient) -> None:
    d = strict_json(post(client, {"source": "W = [[1, 2], [3, 4]]\nW * 2"}))
    assert d["steps"][0] == {
        **d["steps"][0],
        "node": d["output"],
        "grads": {d["output"]: [[1.0, 1.0], [1.0, 1.0]]},
    }


def test_the_per_step_grad_table_merges_to_the_final_grads(client: TestClient) -> None:
    d = strict_json(post(client, {"source": "x = 2\ny = 3\nu = x*y\nv = u*x + tanh(u)\nL = v*v"}))
    table: dict[str, Any] = {}
    for step in d["steps"]:
        table.update(step["grads"])
    for n in d["nodes"]:
        if n["id"] in table:
            assert table[n["id"]] == n["grad"]


# --- documentation ---------------------------------------------------------------------------


def test_openapi_docs(client: TestClient) -> None:
    r = client.get("/docs")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert "openapi.json" in r.text
    spec = client.get("/openapi.json").json()
    post_op = spec["paths"]["/api/trace"]["post"]
    assert {"200", "400", "413", "422"} <= set(post_op["responses"])
    ref = post_op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    schema = spec["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    assert schema["required"] == ["source"]
    # spec/api.md's four, plus the optional lessons (engine/lessons, docs/lessons.md) and the
    # pass they look at.
    assert set(schema["properties"]) == {
        "source",
        "values",
        "accumulate",
        "order",
        "lessons",
        "lesson_options",
        "lesson_pass",
    }


# --- bad programs: 400 with a position, too large: 413 ---------------------------------------


def test_a_bad_program_is_400_with_the_error_object(client: TestClient) -> None:
    e = error_of(post(client, {"source": "x = 2\nL = tanhh(x)"}), 400)
    assert e["message"] == "unknown function 'tanhh' — did you mean 'tanh'?"
    assert (e["line"], e["column"]) == (2, 5)


@pytest.mark.parametrize(
    ("source", "line", "column", "code"),
    [
        ("x = (1", 1, 5, "syntax"),
        ("损失 = x*log(0)", 1, 8, "non_finite"),
        ("import os", 1, 1, "import"),
        ("import torch\ny = torch.fft.fft(x)", 2, 5, "unknown_function"),
        ("x.__class__", 1, 1, "attribute"),
        ("a = zeros(2, 3)\nb = a + zeros(4)", 2, 5, "shape"),
        ("def f(x):\n    return f(x)\ny = f(2)", 2, 12, "recursion"),
        ("seed(-1)\nx = randn(2)", 1, 6, "static"),
        ("", 1, 1, "empty"),
    ],
)
def test_bad_programs(client: TestClient, source: str, line: int, column: int, code: str) -> None:
    e = error_of(post(client, {"source": source}), 400)
    assert (e["line"], e["column"], e["code"]) == (line, column, code)


def test_values_naming_no_free_name_is_400(client: TestClient) -> None:
    e = error_of(post(client, {"source": "x*y", "values": {"z": 1}}), 400)
    assert "'z'" in e["message"] and (e["line"], e["column"]) == (None, None)


@pytest.mark.parametrize(
    ("source", "limit"),
    [
        ("x" + "+x" * 6000, "max_source_chars"),
        ("zeros(10**9)", "max_tensor_elements"),
        ("for i in range(10**9):\n    y = 1", "max_loop_iterations"),
        ("9**9**9**9", "max_exponent"),
        ("(" * 5000, "max_depth"),
        ("s = 0\nfor i in range(1500):\n    s = s + x*x", "max_nodes"),
    ],
)
def test_too_large_is_413_naming_the_limit(client: TestClient, source: str, limit: str) -> None:
    e = error_of(post(client, {"source": source}), 413)
    assert e["limit"] == limit and limit in e["message"]


# --- malformed requests: 422, never echoing the input ----------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"values": {"x": 2}},
        {"source": 5},
        {"source": None},
        {"source": ["x"]},
        {"source": "x", "values": "x=2"},
        {"source": "x", "values": {"x": "two"}},
        {"source": "x", "values": [1, 2]},
        {"source": "x", "accumulate": "mul"},
        {"source": "x", "order": "bfs"},
        {"source": "x", "order": 1},
        {"source": "x", "extra": 1},
        {"source": "x", "Source": "y"},
        [],
        ["x*y"],
        "x*y",
        3,
        None,
    ],
    ids=lambda b: json.dumps(b)[:40],
)
def test_malformed_requests_are_422(client: TestClient, body: Any) -> None:
    e = error_of(post(client, body), 422)
    assert (e["line"], e["column"]) == (None, None)


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"not json", "application/json"),
        (b'{"source": "x"', "application/json"),
        (b"", "application/json"),
        (b'{"source": "x"}', "text/plain"),
        (b"source=x", "application/x-www-form-urlencoded"),
        (b'{"source": "x"}', "application/xml"),
        (b"\xff\xfe\x00\x01", "application/json"),
    ],
)
def test_not_json_or_wrong_content_type_is_422(
    client: TestClient, content: bytes, content_type: str
) -> None:
    error_of(post_raw(client, content, content_type), 422)


def test_a_large_junk_field_is_not_echoed(client: TestClient) -> None:
    junk = "A" * 1_000_000
    for body in (
        {"source": "x", "junk": junk},
        {"source": "x", "values": {"x": junk}},
        {"source": "x", "accumulate": junk},
        {"source": 1, "junk2": [junk]},
    ):
        r = post(client, body)
        e = error_of(r, 422)
        assert "AAAAAAAAAA" not in r.text and "AAAAAAAAAA" not in e["message"]
    # a huge key of `values`: wrong type (422) or naming no free name (400)
    r = post(client, {"source": "x", "values": {junk: "a"}})
    error_of(r, 422)
    assert "AAAAAAAAAA" * 10 not in r.text
    r = post(client, {"source": "x", "values": {junk: 1}})
    error_of(r, 400)
    assert "AAAAAAAAAA" * 10 not in r.text
    r = post(client, {"source": junk})  # a huge program is over the source limit
    e = error_of(r, 413)
    assert e["limit"] == "max_source_chars" and "AAAAAAAAAA" not in r.text


def test_a_lone_surrogate_in_source_is_a_4xx(client: TestClient) -> None:
    # httpx cannot encode "\ud800"; JSON's escape is valid JSON that decodes to a lone surrogate
    e = error_of(post_raw(client, b'{"source": "x = \\ud800"}'), 400)
    assert (e["line"], e["column"], e["code"]) == (1, 5, "bad_character")
    # the same code point as raw (invalid) UTF-8 bytes
    r = post_raw(client, b'{"source": "x = \xed\xa0\x80"}')
    assert 400 <= r.status_code < 500
    error_of(r, r.status_code)
    # a surrogate in a values key or a junk field
    r = post_raw(client, b'{"source": "x", "values": {"\\udc00": 1}}')
    error_of(r, 400)
    r = post_raw(client, b'{"source": "x", "values": {"\\udc00": "a"}}')
    error_of(r, 422)
    r = post_raw(client, b'{"source": "x", "\\udc00": 1}')
    error_of(r, 422)


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_non_finite_values_are_a_4xx(client: TestClient, literal: bytes) -> None:
    r = post_raw(client, b'{"source": "x*2", "values": {"x": ' + literal + b"}}")
    assert 400 <= r.status_code < 500
    error_of(r, r.status_code)
    r = post_raw(client, b'{"source": "x*2", "values": {"x": [1, ' + literal + b"]}}")
    error_of(r, r.status_code)


def test_other_methods_and_paths_get_the_error_object(client: TestClient) -> None:
    error_of(client.put("/api/trace"), 405)
    error_of(client.get("/api/trace"), 400)  # GET /api/trace takes ?source=… (app/cache.py)
    error_of(client.get("/api/nothing-here"), 404)


def test_answers_are_always_strict_json(client: TestClient) -> None:
    for body in (
        {"source": "x = 1e308\ny = x * 10"},
        {"source": "x = 0\ny = sqrt(x)"},
        {"source": "x = 700\ny = exp(x)"},
        {"source": "z = [1000.0, -1000.0]\ncross_entropy(z, 1)"},
    ):
        r = post(client, body)
        strict_json(r)
