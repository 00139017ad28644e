"""Every word a template prints comes from the language's table, never from Python: a key such
as `values` is also a dict method, which `t.values` would print as `<built-in method ...>`."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.main import app
from gradtrace.assets import ui_strings

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


def test_templates_read_words_that_shadow_dict_methods_by_key() -> None:
    for path in TEMPLATES.glob("*.html"):
        for key in re.findall(r"\bt\.(\w+)", path.read_text("utf-8")):
            assert key not in dir(dict), f'{path.name}: t.{key} is a dict method: write t["{key}"]'


def test_the_page_prints_each_language_s_word_for_values() -> None:
    client = TestClient(app)
    for lang, words in ui_strings().items():
        html = client.get("/", params={"source": "x*y", "values": "x=2", "lang": lang}).text
        assert "built-in method" not in html
        assert f'<legend data-i18n="values">{words["values"]}</legend>' in html
