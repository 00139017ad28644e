"""JSON put inside an HTML <script> element, escaped so it cannot end the element early.

One escaping for every page: the app's pages (`<script type="application/json">`), the
standalone stepper and the notebook's upgrade script. Web code calls `script_safe` on JSON text
it encoded itself (the app's strict encoder, where a NaN becomes null); the exports call
`json_for_script`, which encodes and refuses a NaN.
"""

from __future__ import annotations

import json
from typing import Any

# `<` and `>` escaped means no `</script>` and no `<!--`; `&` escaped means no character
# reference is ever read. The \\u escapes decode to the same characters in JSON and JavaScript.
_HTML_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"))
# U+2028 and U+2029 end a line in JavaScript before ES2019: a classic script holding one in a
# string literal is a syntax error there. JSON read by JSON.parse does not need this.
_LINE_SEPARATOR_ESCAPES = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def script_safe(json_text: str, *, line_separators: bool = True) -> str:
    """`json_text` (JSON already encoded) safe inside <script>: no `</`, no `<!--`, and with
    `line_separators` no U+2028/U+2029 either (for JSON pasted into JavaScript code)."""
    text = json_text
    for raw, esc in _HTML_ESCAPES:
        text = text.replace(raw, esc)
    if line_separators:
        for raw, esc in _LINE_SEPARATOR_ESCAPES:
            text = text.replace(raw, esc)
    return text


def json_for_script(data: Any) -> str:
    """`data` as compact JSON safe inside a classic <script>. Raises ValueError on NaN or
    infinity (JSON has no token for them)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return script_safe(text)
