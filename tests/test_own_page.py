"""The own-engine page as the server sends it, and how Pyodide gets there: GET /own lists the
examples and shows code from a link as text; the lessons panel links to it; scripts/pyodide
pins one exact version of npm's package into static/pyodide (ignored by git), which only the
own page's worker loads, from this origin; the main page loads none of it."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from app.main import app
from app.routes.own import EXAMPLES

ROOT = Path(__file__).resolve().parents[1]
OWN_JS = ROOT / "static" / "js" / "own"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


class Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.textarea = ""
        self._in = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))
        self._in = tag == "textarea"

    def handle_data(self, data: str) -> None:
        if self._in:
            self.textarea += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._in = False


def parse(html: str) -> Scripts:
    p = Scripts()
    p.feed(html)
    return p


def test_the_page_lists_every_example_and_opens_on_micrograd(client: TestClient) -> None:
    resp = client.get("/own")
    assert resp.status_code == 200
    for name in EXAMPLES:
        assert f'value="{name}"' in resp.text
    page = parse(resp.text)
    assert "class Value:" in page.textarea and "def backward(self):" in page.textarea
    srcs = [s.get("src") for s in page.scripts if s.get("src")]
    assert srcs == ["/static/js/own/page.js"]
    zh = client.get("/own?lang=zh&example=minitorch")
    assert "逐步运行你自己的引擎" in zh.text and "class ScalarFunction:" in parse(zh.text).textarea


def test_code_from_a_link_is_shown_as_text_with_a_note(client: TestClient) -> None:
    code = "</textarea><script>alert(1)</script>\nx = 1"
    resp = client.get("/own?source=" + quote(code))
    page = parse(resp.text)
    assert page.textarea == code  # escaped in the HTML, the same text in the editor
    assert all(s.get("src") for s in page.scripts if s.get("type") != "application/json")
    assert 'id="own-from-link"' in resp.text


def test_the_lessons_panel_links_to_the_page(client: TestClient) -> None:
    html = client.get("/").text
    assert re.search(r'<a href="/own" id="own-link"', html)
    assert 'href="/own?lang=zh"' in client.get("/?lang=zh").text


def test_pyodide_is_pinned_to_one_exact_version_and_ignored_by_git() -> None:
    version = subprocess.run(
        [str(ROOT / "scripts" / "pyodide"), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    script = (ROOT / "scripts" / "pyodide").read_text()
    assert re.search(r"^PYODIDE_INTEGRITY=sha512-", script, re.M)
    assert '"$root/scripts/pyodide"' in (ROOT / "scripts" / "setup").read_text()
    assert "/static/pyodide/" in (ROOT / ".gitignore").read_text().splitlines()
    installed = ROOT / "static" / "pyodide" / ".version"
    if installed.exists():
        assert installed.read_text().strip() == version


def test_only_the_own_pages_worker_loads_pyodide_and_only_from_this_origin() -> None:
    for js in OWN_JS.glob("*.js"):
        text = js.read_text()
        assert not re.search(r"https?://", text), js.name  # no CDN, no other origin
    worker = (OWN_JS / "worker.js").read_text()
    assert 'from "../../pyodide/pyodide.mjs"' in worker
    others = [p for p in (ROOT / "static" / "js").rglob("*.js") if OWN_JS not in p.parents]
    for js in others:
        assert "pyodide" not in js.read_text().lower(), js
        assert "/own/" not in js.read_text(), js


def test_the_main_pages_first_paint_loads_nothing_of_it(client: TestClient) -> None:
    html = client.get("/").text
    assert "pyodide" not in html.lower() and "own.css" not in html and "own/page.js" not in html
