"""POST /api/own under attack, as /api/trace is (tests/test_hostile.py): a recording is data
from a browser, so anything may arrive. Cycles, dangling ids, a million nodes, NaN, huge
strings, markup in labels, wrong types, deep nesting, and random mutations of a real recording
(hypothesis): each is answered 4xx (or 200 when it is a valid recording), fast, never 5xx,
and no label becomes markup in the drawing."""

from __future__ import annotations

import copy
import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.main import app
from tests.test_own_engine import example, recorder

BOUND = 2.0  # seconds per answer: generous; a loop or a bomb that ran would blow it


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def good() -> dict[str, Any]:
    got = recorder.record(example("micrograd"))
    return got["trace"]


def post(client: TestClient, body: Any, raw: bytes | None = None) -> tuple[int, Any, float]:
    content = raw if raw is not None else json.dumps(body).encode()
    t0 = time.perf_counter()
    resp = client.post("/api/own", content=content, headers={"content-type": "application/json"})
    took = time.perf_counter() - t0
    assert resp.status_code < 500, resp.text[:500]
    assert took < BOUND, f"{took:.2f} s"
    return resp.status_code, resp.json(), took


def refused(client: TestClient, recording: Any, status: int = 422) -> dict[str, Any]:
    code, body, _ = post(client, {"recording": recording})
    assert code == status, body
    return body["error"]


def test_a_real_recording_is_drawn_and_worded(client: TestClient, good: dict) -> None:
    code, body, _ = post(client, {"recording": good, "lang": "zh"})
    assert code == 200
    assert body["svg"].lstrip().startswith("<svg") or "<svg" in body["svg"][:500]
    assert body["findings"] == [] and body["reference"]["agree"]
    assert all("words" in s for s in body["trace"]["steps"])
    assert body["trace"]["steps"][0]["words"].startswith("你的反向传播")


def test_a_cycle_is_refused(client: TestClient, good: dict) -> None:
    bad = copy.deepcopy(good)
    op = next(n for n in bad["nodes"] if n["inputs"])
    later = bad["nodes"][-1]["id"]
    op["inputs"][0] = later
    err = refused(client, bad)
    assert err["code"] == "own_cycle" and later in err["message"]
    own = copy.deepcopy(good)
    node = next(n for n in own["nodes"] if n["inputs"])
    node["inputs"][0] = node["id"]  # its own input
    assert refused(client, own)["code"] == "own_cycle"


@pytest.mark.parametrize(
    "where",
    ["input", "output", "step", "change", "pass", "check"],
)
def test_a_dangling_id_is_refused_wherever_it_is(
    client: TestClient, good: dict, where: str
) -> None:
    bad = copy.deepcopy(good)
    ghost = "n999999"
    if where == "input":
        next(n for n in bad["nodes"] if n["inputs"])["inputs"][0] = ghost
    elif where == "output":
        bad["output"] = ghost
    elif where == "step":
        bad["steps"][1]["node"] = ghost
    elif where == "change":
        bad["steps"][1]["changed"][ghost] = [0, 1]
    elif where == "pass":
        bad["passes"][0]["output"] = ghost
    else:
        bad["checks"]["end_to_end"][0]["leaf"] = ghost
    err = refused(client, bad)
    assert err["code"] == "own_dangling" and ghost in err["message"], err


def test_a_million_nodes_never_reach_the_validator(client: TestClient) -> None:
    nodes = ",".join(
        f'{{"id":"n{i}","label":"x","kind":"leaf","inputs":[],"value":0,"grad":0}}'
        for i in range(10**6)
    )
    raw = ('{"recording":{"version":1,"output":"n0","nodes":[' + nodes + '],"steps":[],'
           '"passes":[],"checks":{"local":{},"end_to_end":[]}}}').encode()  # fmt: skip
    code, body, _ = post(client, None, raw)
    assert code == 413  # over max_body_bytes, refused before it is read in full
    assert "max_body_bytes" in json.dumps(body)


def test_nodes_over_the_limit_are_refused_naming_it(client: TestClient) -> None:
    nodes = [
        {"id": f"n{i}", "label": "x", "kind": "leaf", "inputs": [], "value": 0, "grad": 0}
        for i in range(2_001)
    ]
    recording = {"version": 1, "output": "n0", "nodes": nodes, "steps": [], "passes": [],
                 "checks": {"local": {}, "end_to_end": []}}  # fmt: skip
    err = refused(client, recording, 413)
    assert err["limit"] == "max_own_nodes" and "max_own_nodes" in err["message"]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused(client: TestClient, good: dict, token: str) -> None:
    text = json.dumps({"recording": good})
    first = json.dumps(good["nodes"][0]["value"])
    raw = text.replace(f'"value": {first}', f'"value": {token}', 1).encode()
    code, body, _ = post(client, None, raw)
    assert code == 422 and body["error"]["code"] == "own_not_finite", body


@pytest.mark.parametrize("value", [True, "2", None, [1, 2], {"x": 1}])
def test_a_number_must_be_a_number(client: TestClient, good: dict, value: Any) -> None:
    bad = copy.deepcopy(good)
    bad["nodes"][0]["grad"] = value
    assert refused(client, bad)["code"] == "own_not_number"


def test_huge_strings_are_refused_without_echoing_them(client: TestClient, good: dict) -> None:
    bad = copy.deepcopy(good)
    bad["nodes"][0]["label"] = "x" * 900_000
    code, body, _ = post(client, {"recording": bad})
    assert code == 413 and body["error"]["limit"] == "max_own_label_chars"
    assert len(json.dumps(body)) < 4096


@pytest.mark.parametrize("text", ["a\u0000b", "a\u202eb", "tab\there", "\x85"])
def test_control_characters_in_labels_are_refused(
    client: TestClient, good: dict, text: str
) -> None:
    bad = copy.deepcopy(good)
    bad["nodes"][0]["label"] = text
    assert refused(client, bad)["code"] == "own_control"


MARKUP = [
    "<script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "]]><!--",
    "&amp;<b>&lt;",
    "<a href=javascript:x>",
]


@pytest.mark.parametrize("label", MARKUP)
def test_markup_in_labels_is_drawn_as_text(client: TestClient, good: dict, label: str) -> None:
    bad = copy.deepcopy(good)
    bad["nodes"][0]["label"] = label
    bad["nodes"][0]["name"] = label
    op = next(n for n in bad["nodes"] if n["inputs"])
    op["op"] = label[:40]
    code, body, _ = post(client, {"recording": bad})
    assert code == 200
    svg = ET.fromstring(body["svg"])  # well-formed XML
    tags = {el.tag.split("}")[-1] for el in svg.iter()}
    assert "script" not in tags and "foreignObject" not in tags and "a" not in tags
    for el in svg.iter():
        assert not any(k.lower().startswith("on") for k in el.attrib), el.attrib
    texts = "".join(t for el in svg.iter() for t in [el.text or ""])
    assert label[:12] in texts  # shown as the text it is


@pytest.mark.parametrize(
    "recording",
    [
        [],
        "x",
        {},
        {"version": 1},
        {"version": True, "output": "n0", "nodes": [], "steps": [], "passes": [], "checks": {}},
    ],
)
def test_malformed_recordings_are_422(client: TestClient, recording: Any) -> None:
    code, body, _ = post(client, {"recording": recording})
    assert code == 422, body


def test_unknown_fields_are_refused(client: TestClient, good: dict) -> None:
    assert refused(client, {**good, "extra": 1})["code"] == "own_unknown_field"
    bad = copy.deepcopy(good)
    bad["nodes"][0]["__proto__"] = 1
    assert refused(client, bad)["code"] == "own_unknown_field"
    code, _, _ = post(client, {"recording": good, "run": "import os"})
    assert code == 422


def test_deeply_nested_json_is_a_4xx(client: TestClient) -> None:
    raw = b'{"recording": {"version": 1, "output": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    code, _, _ = post(client, None, raw)
    assert 400 <= code < 500


def test_steps_out_of_pass_order_and_bad_pairs_are_refused(client: TestClient, good: dict) -> None:
    bad = copy.deepcopy(good)
    bad["steps"][1]["pass"] = 3
    assert refused(client, bad)["code"] == "own_not_int"
    bad = copy.deepcopy(good)
    key = next(iter(bad["steps"][1]["changed"]))
    bad["steps"][1]["changed"][key] = [1, 2, 3]
    assert refused(client, bad)["code"] == "own_not_pair"


def test_a_check_must_name_an_input_of_its_node(client: TestClient, good: dict) -> None:
    bad = copy.deepcopy(good)
    nid, slopes = next(iter(bad["checks"]["local"].items()))
    slopes[0]["input"] = nid
    assert refused(client, bad)["code"] == "own_not_input"


# --- fuzzing: random mutations of a real recording ---------------------------------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats() | st.text(max_size=50),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=12,
)


def paths(x: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(x, dict):
        for k, v in x.items():
            out += paths(v, (*prefix, k))
    elif isinstance(x, list):
        for i, v in enumerate(x[:6]):
            out += paths(v, (*prefix, i))
    return out


def put(x: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    x[path[0]] = put(x[path[0]], path[1:], value)
    return x


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_random_mutations_are_answered_without_a_5xx(
    client: TestClient, good: dict, data: Any
) -> None:
    bad = copy.deepcopy(good)
    every = paths(bad)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(every))
        try:
            bad = put(bad, path, data.draw(JSONISH))
        except (KeyError, IndexError, TypeError):
            continue
        every = paths(bad)
    raw = json.dumps({"recording": bad}, allow_nan=True).encode()
    code, body, _ = post(client, None, raw)
    assert code in (200, 413, 422), body
    if code != 200:
        assert body["error"]["message"]
