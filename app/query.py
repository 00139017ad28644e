"""The query parameters shared by GET /, GET /embed and GET /api/svg (see spec/api.md).

`parse_query(params)` turns them into a `PageQuery` or raises `QueryError` (a 4xx with a
message a student understands). `permalink(query)` writes one back, so the server and the
page agree on the address format:

    ?v=1&source=x*y%2Bx&values=x=2,y=3&step=1&lang=zh
    ?v=1&z=<base64url of raw deflate>&...        (a long program, made by the page)
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from engine.errors import Msg
from engine.inputs import valuespec

# The one table of the address format, which the page's static/js/url.js reads too.
QUERY_TABLE: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "static" / "query.json").read_text("utf-8")
)
PARAMS: dict[str, dict[str, Any]] = {p["name"]: p for p in QUERY_TABLE["params"]}

FORMAT_VERSION: int = QUERY_TABLE["version"]  # `v=`: links of a newer format are refused
MAX_Z_CHARS = 65_536  # length of a compressed `z=` parameter
MAX_INFLATED_BYTES = 65_536  # a `z=` never inflates past this (a zip bomb stops here)
MAX_STEP = 10**9  # `step` is clamped anyway; this keeps int() of absurd input cheap
DEFAULT_SOURCE: str = PARAMS["source"]["default"]
DEFAULT_VALUES: dict[str, Any] = PARAMS["values"]["default"]
ACCUMULATE: tuple[str, ...] = tuple(PARAMS["accumulate"]["allowed"])
ORDERS: tuple[str, ...] = tuple(PARAMS["order"]["allowed"])
LANGS: tuple[str, ...] = tuple(PARAMS["lang"]["allowed"])


class QueryError(Exception):
    """A query parameter that cannot be used. `param` names it; `status` is 400 or 413. Its
    message is keyed as the engine's are (`msg` worded in any language, `message` English)."""

    def __init__(self, msg: Msg, param: str, status: int = 400, code: str = "bad_query") -> None:
        self.msg, self.message = msg, str(msg)
        super().__init__(self.message)
        self.param = param
        self.status = status
        self.code = code

    def in_language(self, lang: str) -> str:
        return self.msg.in_language(lang)

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "line": None,
                "column": None,
                "code": self.code,
                "param": self.param,
                **self.msg.to_dict(),
            }
        }


@dataclass(frozen=True)
class PageQuery:
    source: str = DEFAULT_SOURCE
    values: dict[str, Any] = field(default_factory=dict)
    accumulate: str = "add"
    order: str = "dfs"
    step: int | None = None  # None: the last step
    lang: str = "en"
    version: int = FORMAT_VERSION
    compressed: bool = False  # the source came from `z=`
    fwd: int | None = None  # forward-pass position (topo index), when stepping it
    given_source: bool = True  # False when the address named no program (the default shows)
    pass_: str | int | None = None  # `pass=first|last|k`: that pass at its last step

    def with_step(self, step: int | None) -> PageQuery:
        return replace(self, step=step)

    def step_in(self, trace: Mapping[str, Any]) -> int | None:
        """The step to show in `trace`: `step` when given (an index across all passes), else
        the last step of the pass `pass=` names, else None (the last)."""
        if self.step is not None or self.pass_ is None:
            return self.step
        from engine.drawing.passes import pass_step

        return pass_step(trace, self.pass_)


def parse_query(params: Mapping[str, str], *, default_source: bool = True) -> PageQuery:
    """Read the shared parameters. Without `source`/`z`, the lesson's example is used when
    `default_source` is true (the page), otherwise it is an error (the image)."""
    version = _int_param(params, "v", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise QueryError(Msg("query_version", {"v": version, "w": FORMAT_VERSION}), "v")
    compressed = False
    given = True
    if params.get("source") is not None:
        source = params["source"]
    elif params.get("z"):
        source = inflate_source(params["z"])
        compressed = True
    elif default_source:
        source, given = DEFAULT_SOURCE, False
    else:
        raise QueryError(Msg("query_no_program", {}), "source")

    raw_values = params.get("values")
    if raw_values is None and not given:
        values = dict(DEFAULT_VALUES)
    else:
        values = parse_values(raw_values or "")

    accumulate = _choice_param(params, "accumulate")
    order = _choice_param(params, "order")

    step = _step_param(params.get("step"))
    fwd = _step_param(params.get("fwd"))
    which = _pass_param(params.get("pass"))
    return PageQuery(
        source=source,
        values=values,
        accumulate=accumulate,
        order=order,
        step=step,
        lang=parse_lang(params.get("lang")),
        version=version,
        compressed=compressed,
        fwd=fwd,
        given_source=given,
        pass_=which,
    )


def parse_lang(raw: str | None) -> str:
    lang = (raw or "en").strip().lower()
    return "zh" if lang.startswith("zh") or lang == "中文" else "en"


def _show(text: str) -> str:
    return repr(text[:40])


def _choice_param(params: Mapping[str, str], name: str) -> str:
    """One of the table's allowed words (or an alias of one); absent or empty: the default."""
    spec = PARAMS[name]
    word = (params.get(name) or spec["default"]).strip().lower()
    word = spec.get("aliases", {}).get(word, word)
    if word not in spec["allowed"]:
        allowed = ", ".join(repr(a) for a in spec["allowed"])
        raise QueryError(
            Msg("query_choice", {"name": name, "allowed": allowed, "got": _show(word)}), name
        )
    return str(word)


def _int_param(params: Mapping[str, str], name: str, default: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw.strip())
    except ValueError:
        raise QueryError(Msg("query_whole", {"name": name, "got": _show(raw)}), name) from None


def _pass_param(raw: str | None) -> str | int | None:
    """`pass`: first, last or a pass's index (lenient, as `step`: anything else is absent)."""
    raw = (raw or "").strip().lower()
    if raw in ("first", "last"):
        return raw
    if re.fullmatch(r"\d{1,9}", raw):
        return int(raw)
    return None


def _step_param(raw: str | None) -> int | None:
    """`step`: absent or empty means the last; anything not a whole number too (lenient: an
    image in course notes should still show). Huge or negative values are clamped later."""
    if raw is None:
        return None
    raw = raw.strip()
    if not re.fullmatch(r"[+-]?\d{1,30}", raw):
        if raw in ("last", "end", ""):
            return None
        if raw in ("first", "start"):
            return 0
        return None
    return max(-MAX_STEP, min(MAX_STEP, int(raw)))


# ---------------------------------------------------------------------------------------------
# values: `x=2,y=3`, `x:2,y:3`, or a JSON object (for tensors)


def parse_values(text: str) -> dict[str, Any]:
    """The engine's values parser (shared with the CLI), its errors as query errors."""
    try:
        return valuespec.parse_values(text)
    except valuespec.ValuesError as err:
        code = "too_large" if err.http_status == 413 else "bad_query"
        assert err.msg is not None  # every ValuesError is keyed
        raise QueryError(err.msg, "values", err.http_status, code) from None


def format_values(values: Mapping[str, Any]) -> str:
    """`x=2,y=3` when every value is a number, otherwise a compact JSON object."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()):
        return ",".join(f"{k}={_num_text(float(v))}" for k, v in values.items())
    return json.dumps(dict(values), separators=(",", ":"), ensure_ascii=False)


def _num_text(x: float) -> str:
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


# ---------------------------------------------------------------------------------------------
# z=: raw deflate + base64url (no padding), what the page's CompressionStream("deflate-raw") makes


def deflate_source(source: str) -> str:
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = co.compress(source.encode("utf-8")) + co.flush()
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def inflate_source(z: str) -> str:
    if len(z) > MAX_Z_CHARS:
        raise QueryError(Msg("query_z_too_long", {"max": MAX_Z_CHARS}), "z", 413, "too_large")
    try:
        data = base64.urlsafe_b64decode(z.strip() + "=" * (-len(z.strip()) % 4))
    except (binascii.Error, ValueError):
        raise QueryError(Msg("query_z_base64", {}), "z") from None
    d = zlib.decompressobj(-15)
    try:
        out = d.decompress(data, MAX_INFLATED_BYTES + 1)
    except zlib.error:
        raise QueryError(Msg("query_z_damaged", {}), "z") from None
    if len(out) > MAX_INFLATED_BYTES or d.unconsumed_tail:
        raise QueryError(
            Msg("query_z_inflates", {"max": MAX_INFLATED_BYTES}), "z", 413, "too_large"
        )
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise QueryError(Msg("query_z_utf8", {}), "z") from None


# ---------------------------------------------------------------------------------------------


# above this many characters (URL-encoded) a permalink compresses the program
LONG_SOURCE: int = QUERY_TABLE["long_source"]


def permalink_params(q: PageQuery, *, compress: bool | None = None) -> dict[str, str]:
    """The query parameters that reproduce `q`, in the table's order, defaults left out."""
    if compress is None:
        compress = len(urlencode({"source": q.source})) > LONG_SOURCE
    given: dict[str, str | None] = {
        "v": str(q.version),
        "z": deflate_source(q.source) if compress else None,
        "source": None if compress else q.source,
        "values": format_values(q.values) if q.values else None,
        "accumulate": q.accumulate,
        "order": q.order,
        "step": None if q.step is None else str(q.step),
        "fwd": None if q.fwd is None else str(q.fwd),
        "lang": q.lang,
    }
    out: dict[str, str] = {}
    for spec in QUERY_TABLE["params"]:
        value = given.get(spec["name"])
        if value is None or (spec["type"] == "choice" and value == spec["default"]):
            continue
        out[spec["name"]] = value
    return out


def permalink(q: PageQuery, path: str = "/", *, compress: bool | None = None) -> str:
    return path + "?" + urlencode(permalink_params(q, compress=compress), safe=QUERY_TABLE["safe"])


def raw_plus_in_source(raw_query: bytes) -> bool:
    """Did the address write a bare `+` in its program (`source=x*y+x`)? A query string reads
    `+` as a space, so such a program fails in a way its author cannot see: the error says so."""
    for part in raw_query.split(b"&"):
        name, _, value = part.partition(b"=")
        if name == b"source" and b"+" in value:
            return True
    return False


def with_plus_hint(error: dict[str, Any], raw_query: bytes, hint: str) -> dict[str, Any]:
    """`error` (an error object) with `hint` after its message when the address wrote a bare
    `+` in its program; a new dict, the given one (maybe cached) unchanged."""
    if not raw_plus_in_source(raw_query):
        return error
    return {**error, "message": f"{error.get('message', '')} {hint}".strip()}
