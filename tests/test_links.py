"""Links and embeds that work where authors put them: a bare `+` in an address's program gets
an error that says how to write it, and /embed frames in notes opened from disk (`file://`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import app
from app.query import raw_plus_in_source, with_plus_hint
from bench.chromium import have_chromium

client = TestClient(app)


def svg_texts(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_a_bare_plus_in_the_program_of_an_address_says_to_write_2b() -> None:
    r = client.get("/api/svg?source=x*y+x")
    assert r.status_code == 400
    assert "write it as %2B" in " ".join(svg_texts(r.text))
    assert client.get("/api/svg?source=x*y%2Bx").status_code == 200
    page = client.get("/?source=x*y+x&lang=zh").text
    assert "请写成 %2B" in page
    # A `+` elsewhere in the address, or a program that fails for its own reasons, gets none.
    assert "%2B" not in " ".join(svg_texts(client.get("/api/svg?source=tanhh(x)").text))
    assert "%2B" not in client.get("/?source=x*y%2Btanhh(x)").text.split("error", 1)[-1][:400]


def test_the_hint_reads_the_raw_address_and_copies_the_error() -> None:
    assert raw_plus_in_source(b"v=1&source=x*y+x&step=2")
    assert not raw_plus_in_source(b"source=x*y%2Bx&values=a+b")
    error = {"message": "invalid syntax", "line": 1}
    hinted = with_plus_hint(error, b"source=a+b", "(hint)")
    assert hinted == {"message": "invalid syntax (hint)", "line": 1}
    assert error == {"message": "invalid syntax", "line": 1}  # a cached answer stays as it was


def test_embeds_and_images_may_be_framed_from_files_the_page_may_not() -> None:
    for path in ("/embed?source=x*y", "/api/svg?source=x*y"):
        csp = client.get(path).headers["content-security-policy"]
        assert "frame-ancestors * file:" in csp, path
    assert "frame-ancestors 'self'" in client.get("/").headers["content-security-policy"]


@pytest.mark.browser
@pytest.mark.skipif(not have_chromium(), reason="Chromium is not installed")
def test_notes_opened_from_disk_frame_the_embed(browser: Any, base_url: str, tmp_path: Path):
    notes = tmp_path / "notes.html"
    notes.write_text(
        f'<!doctype html><title>notes</title><iframe src="{base_url}/embed?source=x*y"'
        ' width="600" height="400"></iframe>'
    )
    page = browser.new_page()
    try:
        page.goto(notes.as_uri())  # waits for the frame's load too
        # A frame its CSP refused has the browser's error page's address, not the app's.
        frame = next(f for f in page.frames if f.url.startswith(base_url))
        frame.wait_for_selector("#graph svg g.node", timeout=20_000)
        assert frame.locator("#graph svg g.node").count() == 3
    finally:
        page.close()


@pytest.mark.parametrize(
    "path",
    ["/", "/embed?source=x*y", "/api/svg?source=x*y", "/api/trace?source=x*y",
     "/api/svg?source=tanhh(x)", "/static/js/main.js"],
)  # fmt: skip
def test_head_is_answered_wherever_get_is(path: str) -> None:
    get, head = client.get(path), client.head(path)
    assert head.status_code == get.status_code and head.content == b""
    for name in ("content-type", "content-length", "content-security-policy", "etag"):
        assert head.headers.get(name) == get.headers.get(name), name


@pytest.mark.browser
@pytest.mark.skipif(not have_chromium(), reason="Chromium is not installed")
def test_share_offers_the_step_as_an_img_and_a_markdown_image(browser: Any, base_url: str):
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(base_url + "/?source=x*y%20%2B%20x&values=x=2,y=3&step=1")
        page.wait_for_function("() => window.gradtrace && document.querySelector('#graph svg')")
        page.click("#share summary")
        page.click("#copy-img")
        page.wait_for_function("() => document.querySelector('#share-text').value.length > 0")
        img = page.input_value("#share-text")
        match = re.fullmatch(r'<img src="([^"]+)" alt="gradtrace: x\*y \+ x \(step 1\)">', img)
        assert match, img
        src = match.group(1).replace("&amp;", "&")
        assert src.startswith(base_url + "/api/svg?") and "step=1" in src and "%2B" in src
        answer = page.request.get(src)
        assert answer.status == 200 and answer.headers["content-type"] == "image/svg+xml"
        page.click("#copy-markdown")
        page.wait_for_function("() => document.querySelector('#share-text').value.startsWith('!')")
        markdown = page.input_value("#share-text")
        assert markdown == f"![gradtrace: x*y + x (step 1)]({src})"
    finally:
        context.close()
