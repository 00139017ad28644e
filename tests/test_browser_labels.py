"""In real Chromium: the order strips, the grad table and the drawing name each node of the
12-step diamond chain with the same label, and no two nodes alike (issue 16)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from tests.test_browser import ctx, open_page, wait_js  # noqa: F401  (ctx is a fixture)
from tests.test_labels import DIAMONDS

pytestmark = pytest.mark.browser

SHOWN = """() => {
    const text = (el) => el.textContent.replace(/^▶ /, "");
    const by = (sel) => Object.fromEntries([...document.querySelectorAll(sel)].map(
        (el) => [el.dataset.node, text(el)]));
    const heads = Object.fromEntries([...document.querySelectorAll("#graph svg text[id$='-head']")]
        .map((el) => [el.id.replace(/-head$/, ""), text(el)]));
    return {topo: by("#topo-strip li"), back: by("#backward-strip li"),
            table: by("#grad-table thead th[data-node]"), graph: heads};
}"""


def test_strips_table_and_graph_show_the_same_distinct_labels(ctx: Any, base_url: str) -> None:  # noqa: F811
    page = open_page(ctx, base_url, "/?source=" + quote(DIAMONDS) + "&step=3")
    wait_js(page, "document.querySelectorAll('#grad-table thead th[data-node]').length > 30")
    wait_js(page, "document.querySelector(\"#graph svg text[id$='-head']\") !== null")
    shown: dict[str, dict[str, str]] = page.evaluate(SHOWN)
    topo, table = shown["topo"], shown["table"]
    assert len(set(topo.values())) == len(topo) == 37, topo  # every node once, none alike
    assert shown["back"] == topo
    assert table == {k: v for k, v in topo.items() if k in table}
    assert len(table) >= 36, table  # every node with a grad has its column
    sins = sorted((v for v in topo.values() if v.startswith("sin(h)")), key=len)
    assert sins[:2] == ["sin(h)₁", "sin(h)₂"] and len(sins) == 12
    assert topo[f"n{len(topo) - 1}"] == "L"
    for nid, head in shown["graph"].items():  # `label = value` in the drawing
        assert head.split(" = ")[0].split("  ")[0] == topo[nid], (nid, head)
    page.locator("#grad-table").scroll_into_view_if_needed()
    page.screenshot(path="/tmp/h5_labels_table.png", full_page=True)


def test_a_strip_chip_cut_short_keeps_its_subscript(ctx: Any, base_url: str) -> None:  # noqa: F811
    page = open_page(ctx, base_url, "/?source=x*y")
    cut = page.evaluate(
        """async () => {
        const { shorten } = await import('/static/js/format.js');
        return [shorten('(Wh @ h + Wx @ xs[t])₁₂', 18), shorten('abcdefghijklmnopqrstuvwxyz', 18),
                shorten('sin(h)₂', 18)];
    }"""
    )
    assert cut == ["(Wh @ h + Wx @ …₁₂", "abcdefghijklmnopq…", "sin(h)₂"]
