"""Did-you-mean warnings (engine/language/name_warnings.py) and what the answer says back: a
free name one edit from an assigned name still runs as a free leaf and carries a warning at its
first use; none for a name given a value, two one-letter names, a digit's edit or a long name;
at most MAX_WARNINGS. /api/trace (POST and GET) and the page's render always carry `printed`
and `warnings`."""

from __future__ import annotations

import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from app.main import app
from engine import parse, run_program
from engine.language.name_warnings import MAX_WARNINGS, one_edit, shown

ROOT = Path(__file__).resolve().parents[1]


def warnings_of(source: str, values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    ran = run_program(source, values)
    return shown(ran.warnings, [f["name"] for f in ran.free if f["given"]])


def messages(source: str) -> list[str]:
    return [w["message"] for w in warnings_of(source)]


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(app)


# --- the engine --------------------------------------------------------------------------------


def test_a_name_one_edit_from_an_assigned_one_runs_free_and_warns_at_its_first_use() -> None:
    source = "y = 2*x\nL = yy*y + x\nM = yy + L\nM"
    ran = run_program(source)
    assert ran.scan.free == ("x", "yy")
    assert ran.trace.to_dict()["grads"]["yy"] == 3.0  # a free leaf of value 1: y + 1
    assert warnings_of(source) == [
        {
            "message": "'yy' is never assigned; did you mean 'y'?",
            "line": 2,
            "column": 5,
            "end_line": 2,
            "end_column": 7,
            "name": "yy",
            "suggestion": "y",
        }
    ]


@pytest.mark.parametrize(
    ("source", "name", "meant"),
    [
        ("loss = 2*x\nlos + loss", "los", "loss"),  # a letter left out
        ("los = 2*x\nloss + los", "loss", "los"),  # a letter too many
        ("lr = 0.1\nw = 2*x\nw - lt*w", "lt", "lr"),  # a letter changed
        ("hidden = 2*x\nhidedn*hidden", "hidedn", "hidden"),  # neighbours swapped
        ("Wx = 3*x\nV = Wx*x\nwx*V", "wx", "Wx"),  # case is a letter too
    ],
)
def test_each_kind_of_single_edit_is_caught(source: str, name: str, meant: str) -> None:
    assert messages(source) == [f"'{name}' is never assigned; did you mean '{meant}'?"]


@pytest.mark.parametrize(
    "source",
    [
        "y = a*x + b\ny",  # one-letter names beside one another are other variables
        "h1 = 2*x\nh1*h2",  # a digit's edit: a numbered family
        "h = 2*x\nh*h0",
        "loss = 2*x\nlasso*loss",  # two edits away
        "x*y + x",  # nothing assigned
        "a = 2\nb = a*c\nb",  # all one letter
        "W = 3*x\nw*W",  # even in another case
        "xn = x / 2\nxn * x",  # a one-letter name is an input, whatever is near it
        f"{'n' * 41} = 2*x\n{'n' * 42}*x",  # past MAX_NAME_CHARS, not looked at
    ],
)
def test_no_warning_where_the_name_is_meant(source: str) -> None:
    assert messages(source) == []


def test_a_name_given_a_value_is_meant_and_not_warned_about() -> None:
    source = "y = 2*x\nyy*y"
    assert len(warnings_of(source)) == 1
    assert warnings_of(source, {"yy": 3.0}) == []
    assert parse(source).warnings[0].name == "yy"  # the parse keeps it; the answer drops it


def test_a_function_s_argument_is_an_assigned_name() -> None:
    source = "def f(inp):\n    return inpt * 2\nf(3.0)"
    [w] = warnings_of(source)
    assert (w["name"], w["suggestion"], w["line"], w["column"]) == ("inpt", "inp", 2, 12)


def test_the_first_use_is_the_earliest_in_the_source_and_columns_count_characters() -> None:
    source = "# é𝑥\nab = 2*x\nz = 1 + abb\nq = abb * ab\nq"
    [w] = warnings_of(source)
    assert (w["line"], w["column"], w["end_column"]) == (3, 9, 12)
    source = "é = 2*x; ab = é*x; q = é + abb\nq"  # two-byte é before it on its line
    [w] = warnings_of(source)
    assert (w["line"], w["column"]) == (1, 28)


def test_warnings_are_in_source_order_and_at_most_max_warnings() -> None:
    names = [f"val{chr(97 + i)}" for i in range(MAX_WARNINGS + 5)]
    body = "\n".join(f"{n} = {i}.0*x" for i, n in enumerate(names))
    uses = " + ".join(n + "q" for n in reversed(names))
    got = warnings_of(f"{body}\n{uses}")
    assert len(got) == MAX_WARNINGS
    assert [w["column"] for w in got] == sorted(w["column"] for w in got)
    assert got[0]["name"] == names[-1] + "q"


def test_a_long_program_of_near_names_is_checked_quickly() -> None:
    names = [f"v{i:03d}x" for i in range(700)]  # 700 assigned names, 200 near ones read
    body = "\n".join(f"{n} = 1.0" for n in names)
    source = body + "\n" + "+".join(n[:-1] + "y" for n in names[:200])
    assert len(source) <= 10_000  # max_source_chars
    started = time.perf_counter()
    program = parse(source)
    assert time.perf_counter() - started < 2.0
    assert len(program.warnings) == 200


def reference_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (Damerau–Levenshtein without moves of a swapped pair)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


@settings(max_examples=300, deadline=None)
@given(st.text("abc", max_size=5), st.text("abc", max_size=5))
def test_one_edit_is_exactly_distance_one(a: str, b: str) -> None:
    assert one_edit(a, b) == (reference_distance(a, b) == 1)


def test_no_gallery_example_or_corpus_file_warns() -> None:
    examples = tomllib.loads((ROOT / "app" / "examples.toml").read_text("utf-8"))
    sources = [ex["source"] for ex in examples["example"]]
    sources += [p.read_text("utf-8") for p in sorted((ROOT / "tests" / "corpus").glob("*.py"))]
    assert len(sources) > 40
    warned = []
    for s in sources:
        try:
            program = parse(s)
        except Exception:  # noqa: BLE001 - a corpus file the language refuses says nothing
            continue
        warned += [w.message for w in program.warnings]
    assert warned == []


# --- the answer --------------------------------------------------------------------------------

TORCH = """import torch
x = torch.tensor(2.0, requires_grad=True)
y = x**2
y.backward()
print(x.grad)"""


def test_post_trace_always_carries_printed_and_warnings(client: TestClient) -> None:
    plain = client.post("/api/trace", json={"source": "x*y + x"}).json()
    assert (plain["printed"], plain["warnings"]) == ([], [])
    torch = client.post("/api/trace", json={"source": TORCH}).json()
    assert torch["printed"] == [{"line": 5, "text": "tensor(4.)"}]
    assert torch["warnings"] == []
    typo = client.post("/api/trace", json={"source": "y = 2*x\nyy*y"}).json()
    assert [(w["line"], w["column"], w["suggestion"]) for w in typo["warnings"]] == [(2, 1, "y")]
    given = client.post("/api/trace", json={"source": "y = 2*x\nyy*y", "values": {"yy": 2}})
    assert given.json()["warnings"] == []


def test_get_trace_and_the_page_s_render_carry_them_too(client: TestClient) -> None:
    got = client.get("/api/trace", params={"source": "y = 2*x\nyy*y"}).json()
    assert got["warnings"][0]["message"] == "'yy' is never assigned; did you mean 'y'?"
    assert got["printed"] == []
    page = client.post("/api/render", json={"source": TORCH}).json()
    assert page["trace"]["printed"] == [{"line": 5, "text": "tensor(4.)"}]
    assert page["trace"]["warnings"] == []


def test_a_lessons_answer_keeps_them(client: TestClient) -> None:
    body = {"source": "y = 2*x\nprint(y)\nyy*y", "lessons": ["orders"]}
    answer = client.post("/api/trace", json=body).json()
    assert "orders" in answer["lessons"]
    assert answer["printed"] == [{"line": 2, "text": "2.0"}]
    assert answer["warnings"][0]["name"] == "yy"


def test_the_openapi_document_describes_them(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    fields = schemas["TraceResponse"]["properties"]
    assert {"printed", "warnings"} <= set(fields)
    assert set(schemas["WarningOut"]["required"]) == {"message", "line", "column"}
