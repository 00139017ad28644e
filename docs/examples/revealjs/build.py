"""Build deck.html: a three-slide reveal.js deck whose middle slide steps through the backward
pass of lesson.txt, one fragment per step (gradtrace/reveal). Run it from anywhere:

    python docs/examples/revealjs/build.py [OUT_DIR]

then put reveal.js beside the deck (`npm install --prefix OUT_DIR reveal.js@5` and move
node_modules/reveal.js to OUT_DIR/reveal.js, or pass another folder to deck_html's `reveal`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from gradtrace.files import Program, write_if_changed
from gradtrace.reveal import SlideOptions, deck_html, section_html

HERE = Path(__file__).resolve().parent


def build(out: Path) -> Path:
    """Write OUT/deck.html (unchanged bytes are not rewritten) and return its path."""
    source = (HERE / "lesson.txt").read_text("utf-8")
    trace = Program(source, {"x": 2, "y": 3}).trace()
    intro = (
        "<section><h2>Backward, one step at a time</h2><p>L = x·y + x, x = 2, y = 3</p></section>"
    )
    slide = section_html(
        trace, SlideOptions(caption="x is used twice: its grad adds up (+=)"), title="L = x*y + x"
    )
    outro = "<section><h2>x.grad = 4, y.grad = 2</h2><p>∂L/∂x = y + 1, ∂L/∂y = x</p></section>"
    path = out / "deck.html"
    write_if_changed(
        path, deck_html([intro, slide, outro], title="gradtrace: L = x*y + x").encode()
    )
    return path


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
