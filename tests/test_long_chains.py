"""A flat chain is one level of nesting however long (max_depth), so every part of the server
that walks one must walk it in a loop: a whole-number chain `zeros(1+1+…+1)` of a thousand
terms and more once hit Python's recursion limit, a 500."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.main import app
from engine import run
from engine.lessons import LESSONS

TERMS = 1_500


def chain(n: int = TERMS) -> str:
    return "+".join(["1"] * n)


def test_a_long_whole_number_chain_is_a_shape_an_axis_a_range_and_an_index() -> None:
    source = (
        f"x = zeros({chain()}) + 1\n"
        f"s = sum(x, axis={chain(2)} - 2)\n"
        f"for i in range({chain(3)} - 1):\n"
        "    s = s * 1\n"
        f"L = s + x[{chain()} - 1]"
    )
    trace = run(source).to_dict()
    assert [n["shape"] for n in trace["nodes"] if n["label"] == "x"] == [[TERMS]]
    assert trace["value"] == TERMS + 1


def test_the_api_answers_a_long_chain_with_every_lesson_without_a_500() -> None:
    client = TestClient(app, raise_server_exceptions=False)
    source = f"w = zeros({chain()}) + 2\nL = sum(w * w)"
    r = client.post("/api/trace", json={"source": source, "lessons": list(LESSONS)})
    assert r.status_code == 200, r.text[:300]
    assert set(r.json()["lessons"]) == set(LESSONS)
    r = client.get("/api/svg", params={"source": source})
    assert r.status_code in (200, 413), r.text[:300]


def test_every_lesson_answers_a_long_chain_in_a_pytorch_program() -> None:
    """The same chains where the interpreter does not ask whether they are a parameter (a
    PyTorch program): every lesson answers, and the code lesson writes the chain back."""
    client = TestClient(app, raise_server_exceptions=False)
    source = (
        f"import torch\nw = torch.ones({chain()}, requires_grad=True)\n"
        f"L = torch.sum(w * w * ({chain()}))"
    )
    r = client.post("/api/trace", json={"source": source, "lessons": list(LESSONS)})
    assert r.status_code == 200, r.text[:300]
    assert set(r.json()["lessons"]) == set(LESSONS)
    torch_code = r.json()["lessons"]["code"]["torch"]
    assert f"w = torch.ones({' + '.join(['1'] * TERMS)}, requires_grad=True)" in torch_code
