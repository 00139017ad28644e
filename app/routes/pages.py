"""The page and the embed: GET / and GET /embed, opened at the program and step in the address
(a permalink). The view they show is app/views.py's; this turns it into HTML."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.templating import Jinja2Templates

from app.config import Settings, SettingsDep
from app.errors import to_json
from app.examples import EXAMPLES
from app.query import (
    ACCUMULATE,
    FORMAT_VERSION,
    ORDERS,
    PageQuery,
    QueryError,
    parse_lang,
    parse_query,
    permalink,
    with_plus_hint,
)
from app.schemas import PAGE_RESPONSES, VIEW_QUERY
from app.views import ViewAsk, collapse_param, layout_param, run_view
from engine import drawing as draw
from engine.drawing.passes import pass_at
from engine.words import words
from engine.words.messages import translate_error
from gradtrace.assets import ui_strings
from gradtrace.script_json import script_safe

ROOT = Path(__file__).resolve().parents[2]
templates = Jinja2Templates(directory=str(ROOT / "templates"))
router = APIRouter()


# The own-engine page's words (`own_…`) stay on that page (app/routes/own.py sends them), so
# the main page's start-up data does not grow by them; it shows only the link to it.
OWN_WORDS_SHOWN_HERE = ("own_link", "own_link_hint")


@functools.lru_cache(maxsize=1)
def strings() -> dict[str, dict[str, str]]:
    """The page's words, a table per language (engine/words/*.json)."""
    return {
        lang: {
            k: v for k, v in table.items() if not k.startswith("own_") or k in OWN_WORDS_SHOWN_HERE
        }
        for lang, table in ui_strings().items()
    }


def lesson_tabs() -> list[str]:
    """The lesson panel's tabs: every lesson of engine.lessons, then the page-only practice."""
    from engine.lessons import LESSONS

    return [*LESSONS, "practice"]


@dataclasses.dataclass(frozen=True)
class PageParts:
    """What one page shows: its address's parameters, the program they name (None when they
    cannot be read), its view, and what the page opens at."""

    params: dict[str, str]
    query: PageQuery | None
    view: dict[str, Any]
    source: str
    step: int | None
    lang: str
    embed: bool

    @property
    def accumulate(self) -> str:
        return self.query.accumulate if self.query else "add"

    @property
    def order(self) -> str:
        return self.query.order if self.query else "dfs"

    @property
    def present(self) -> bool:
        return self.params.get("present") == "1"

    @property
    def layout(self) -> str | None:
        """The direction the address asks for, or None (`auto`, or none asked)."""
        asked = (self.params.get("layout") or "").strip().lower()
        return asked if asked in ("lr", "tb") else None


def page_parts(
    params: dict[str, str], settings: Settings, *, embed: bool, raw_query: bytes = b""
) -> PageParts:
    """Read the address and make the view of the program it names."""
    lang = parse_lang(params.get("lang"))
    query: PageQuery | None = None
    ask: ViewAsk | None = None
    view: dict[str, Any]
    try:
        query = parse_query(params)
        ask = ViewAsk(
            query.source,
            query.values,
            query.accumulate,
            query.order,
            collapse=collapse_param(params.get("collapse")),
            lang=lang,
            layout=layout_param(params.get("layout")),
        )
        view = run_view(ask, settings)
    except QueryError as err:
        view = {"error": translate_error(err.to_dict()["error"], lang), "status": err.status}
    if "error" in view:  # a bare `+` in the address's program: say how to write it
        view = {**view, "error": with_plus_hint(view["error"], raw_query, words(lang)["hint_plus"])}
    source = query.source if query else params.get("source", "")
    # The editor shows the program, but never more of it than a program may hold: a page
    # opened at an over-long address does not echo it back in full.
    limit = settings.limits.max_source_chars
    if len(source) > limit:
        source = source[:limit]
        query = dataclasses.replace(query, source=source) if query else None
    trace = view.get("trace")
    step = None
    if trace is not None and query is not None:
        # The landing (an address that names no program) opens at the seed, to be stepped
        # through; an address with a program and no step opens at its last step (a permalink),
        # or at the first step of the pass it names (`pass=`).
        landing = not embed and not ({"source", "z"} & params.keys())
        wanted = 0 if landing and query.step is None and query.pass_ is None else None
        step = draw.clamp_step(trace, query.step_in(trace) if wanted is None else wanted)
        on_show = pass_at(trace, step)
        if ask is not None and on_show is not None and on_show != view.get("svg_pass"):
            view = run_view(ask, settings, on_show)  # the drawing of the pass the step is in
    return PageParts(params, query, view, source, step, lang, embed)


def page_state(p: PageParts) -> dict[str, Any]:
    """What the page's script starts from (static/js/main.js reads it from the page)."""
    view = p.view
    return {
        "version": FORMAT_VERSION,
        "embed": p.embed,
        "query": {
            "source": p.source,
            "values": (p.query.values if p.query else {}),
            "accumulate": p.accumulate,
            "order": p.order,
            "step": p.step,
            "fwd": p.query.fwd if p.query else None,
            "lang": p.lang,
            "present": p.present,
            # None: the page picks the direction (static/js/layout.js); lr or tb: that one.
            "layout": p.layout,
            "collapse": collapse_param(p.params.get("collapse")),
        },
        "trace": view.get("trace"),
        "contrast": view.get("contrast"),
        "error": view.get("error"),
        "draw_error": view.get("draw_error"),
        "svg_pass": view.get("svg_pass"),
        "collapsible": view.get("collapsible", False),
        "collapsed": view.get("collapsed"),
        "examples": EXAMPLES,
        "strings": strings(),
    }


def page_context(p: PageParts) -> dict[str, Any]:
    """What the templates fill in: the page as it looks before its script runs."""
    view = p.view
    t = strings()[p.lang]
    trace = view.get("trace")
    n_steps = len(trace["steps"]) - 1 if trace else 0
    return {
        "t": t,
        "lang": p.lang,
        "embed": p.embed,
        # Strict JSON (a NaN is null), escaped for <script type="application/json">.
        "state_json": script_safe(to_json(page_state(p)).decode("utf-8"), line_separators=False),
        "svg": view.get("svg"),  # from engine.drawing: escaped there, safe to inline
        "error": view.get("error"),
        "draw_error": view.get("draw_error"),
        "source": p.source,
        "step": p.step or 0,
        "n_steps": n_steps,
        "step_label": t["step_of"].format(k=p.step or 0, n=n_steps),
        "examples": EXAMPLES,
        "accumulate": p.accumulate,
        "order": p.order,
        "accumulate_options": ACCUMULATE,
        "order_options": ORDERS,
        "present": p.present,
        "collapsible": view.get("collapsible", False),
        "collapse": view.get("collapsed") is not None,
        "full_link": permalink(p.query, "/") if p.query else "/",
        "lesson_tabs": lesson_tabs(),  # static/js/lessons/panel.js
    }


def _page(request: Request, template: str, *, embed: bool, settings: Settings) -> Response:
    """The page, under the security headers of its address (app/middleware/security.py)."""
    raw = request.scope.get("query_string", b"")
    parts = page_parts(dict(request.query_params), settings, embed=embed, raw_query=raw)
    context = page_context(parts)
    return templates.TemplateResponse(request=request, name=template, context=context)


def page_route(path: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """GET `path`, an HTML page that reads the address's parameters itself."""
    return router.get(
        path, response_class=HTMLResponse, responses=PAGE_RESPONSES, openapi_extra=VIEW_QUERY
    )


@page_route("/")
def index(request: Request, settings: SettingsDep) -> Response:
    """The interactive page, opened at the program and step in the address (a permalink)."""
    return _page(request, "index.html", embed=False, settings=settings)


@page_route("/embed")
def embed(request: Request, settings: SettingsDep) -> Response:
    """The same view without the page's chrome, for iframes."""
    return _page(request, "embed.html", embed=True, settings=settings)
