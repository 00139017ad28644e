"""reveal.js slides that step through backward: one fragment per backward step.

    gradtrace reveal "x*y + x" --values x=2,y=3 --deck -o deck.html

- `slides`: the figure, the `<section data-gradtrace>` and a whole deck, as HTML;
- `patches`: one laid-out drawing and the changes each step makes to it;
- `sentences`: the step sentence and the leaves' grads, worked out at build time;
- `commands`: the `gradtrace reveal` and `gradtrace quarto` commands;
- `gradtrace-reveal.js`: the reveal.js plugin (`Reveal.initialize({plugins: [RevealGradtrace]})`).
"""

from gradtrace.reveal.slides import SlideOptions, deck_html, figure_html, plugin_js, section_html

__all__ = ["SlideOptions", "deck_html", "figure_html", "plugin_js", "section_html"]
