"""How the drawing looks and how much it may draw: fonts, box sizes, colours, drawing limits.

The legend, in words (the page's CSS styles the same classes):

- every trace node is ONE Graphviz node whose id is its trace id (``n0`` ...): an op cell with
  the op's symbol (op nodes only), the label and forward value, and the grad underneath;
  leaves have rounded corners, constants are small dashed boxes (class ``const``);
- every use of a value is its own edge, id ``e-<consumer>-<arg>``, labelled with the gradient
  it carries back (``← 3``);
- at a step: the node running its local backward has a thick outline and a ``▶`` before its
  label (class ``current``); the edges carrying gradient on this step are thick and bold
  (class ``active``), the ones that already carried it are thin and grey (``sent``), the ones
  still to come have no label (``future``); a grad that changed on this step is bold on a
  yellow cell with a thick border (class ``changed``). Colour is never the only signal.
- a value used more than ``COPY_FANOUT`` times is drawn once with its numbers and again as a
  small copy (class ``copy``) at each use, which keeps the layout fast and readable.
"""

from __future__ import annotations

# Drawing limits. Each is a setting, not a law of nature; see the README.
MAX_DRAWN_NODES = (
    500  # trace nodes; above this the page says "too large to draw" instead of laying out
)
COPY_FANOUT = 8  # a value with more uses than this is drawn as a small copy at each use
EDGE_LABEL_LIMIT = 200  # above this many drawn nodes, edges carry no text (labels cost layout time)
SMALL_TENSOR = 16  # at most this many elements (2-d, ≤ SMALL_COLS wide): print the numbers
SMALL_COLS = 4
SMALL_VECTOR = 6  # a 1-d tensor of at most this many elements: print it as a row
HEAT_ROWS, HEAT_COLS, HEAT_CELL = 8, 16, 8  # a larger tensor: heat map of at most 8×16 cells
LABEL_CHARS = 24  # longer labels (anonymous ops are labelled by their source text) are cut

FONT = "DejaVu Sans Mono"
FONT_SIZE = 11
EDGE_FONT_SIZE = 10
CHAR_W = 0.6021 * FONT_SIZE  # advance of one monospace character, in points
WIDE_W = 1.0 * FONT_SIZE  # a CJK (east-asian wide) character
PAD = 3  # CELLPADDING
MATRIX_PAD = 1  # CELLPADDING of a matrix's numbers
ROOM_CHARS = 3  # boxes grow in steps of this many characters (see cells.room)
NUMBER_ROOM = 6  # a scalar's value, grad and edge amount get room for this many characters
EMPTY = "∅"  # what an empty tensor shows for its numbers

# One place for every colour and pen. The page's CSS uses the same classes. Every colour that
# text is drawn in has at least 4.5:1 contrast (WCAG AA) on the white it is drawn on: muted
# 5.7, active 5.6, sent 5.3, const 4.7, offpath 5.9 (4.9 on op_bg); tests/test_accessibility.
STYLE: dict[str, str] = {
    "ink": "#222222",
    "muted": "#666666",
    "op_bg": "#e9ecef",
    "grad_bg": "#ffffff",
    "changed_bg": "#ffd43b",
    "active": "#b93d0c",
    "sent": "#6b6b6b",
    "const": "#6c757d",
    "offpath": "#5c6670",
}
# Fills Graphviz never chooses by itself: finishing the SVG (svg.py) finds these cells by them.
GRAD_FILL = "#fffffd"
HEAT_FILL = "#fffffc"
