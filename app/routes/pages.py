"""The page, the embed and the image: GET /, GET /embed, GET /api/svg, and POST /api/render
(the page's re-run: the trace and its drawing in one answer).

The server sends everything a program needs at once — the trace, the drawing laid out once,
the grads the other accumulation would give — and the page only moves an index through it.
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict, Field

from app import cache
from app.config import get_settings
from app.errors import SafeJSONResponse as JSONResponse  # strict JSON: never a NaN token
from app.errors import to_json
from app.query import (
    ACCUMULATE,
    FORMAT_VERSION,
    ORDERS,
    PageQuery,
    QueryError,
    parse_lang,
    parse_query,
    permalink,
)
from app.schemas import (
    JSON_ERRORS,
    PAGE_RESPONSES,
    SVG_PARAMETERS,
    SVG_RESPONSES,
    VIEW_PARAMETERS,
    NestedNumbers,
)
from engine.drawing import draw

ROOT = Path(__file__).resolve().parents[2]
templates = Jinja2Templates(directory=str(ROOT / "templates"))
router = APIRouter()

# The gallery: the seeds' worked examples first. Values for free names go beside the source.
EXAMPLES: list[dict[str, Any]] = [
    {
        "id": "xy-plus-x",
        "title": {"en": "L = xy + x (fan-out, +=)", "zh": "L = xy + x(扇出与 +=)"},
        "source": "x*y + x",
        "values": {"x": 2, "y": 3},
        "lesson": "compare_assign",
    },
    {
        "id": "max",
        "title": {"en": "(x·y)·max(x·y, z)", "zh": "(x·y)·max(x·y, z)"},
        "source": "(x*y)*max(x*y, z)",
        "values": {"x": 2, "y": 3, "z": 4},
        "lesson": "forward",
    },
    {
        "id": "max-missing",
        "title": {"en": "max without b's backward", "zh": "缺少 b 的 backward 的 max"},
        "source": "a = x*y\nb = max(a, z)   # the notes' b has no backward of its own\nL = a*b",
        "values": {"x": 2, "y": 3, "z": 4},
        "lesson": "mistakes",
        "lesson_mode": "missing",
    },
    {
        "id": "zero-grad",
        "title": {"en": "Descent without zero_grad", "zh": "不清零 grad 的梯度下降"},
        "source": "w = 3.0\nL = (w - 1)**2",
        "values": {},
        "lesson": "mistakes",
        "lesson_mode": "zero_grad",
    },
    {
        "id": "jacobian-rows",
        "title": {"en": "A vector output (VJP)", "zh": "向量输出(VJP)"},
        "source": "x = [1.0, 2.0, 3.0]\nW = [[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]]\ny = W @ x * x[0]",
        "values": {},
        "lesson": "mistakes",
        "lesson_mode": "vector",
    },
    {
        "id": "product",
        "title": {"en": "(xy + x)(x − y)", "zh": "(xy + x)(x − y)"},
        "source": "(x*y + x)*(x - y)",
        "values": {"x": 2, "y": 3},
        "lesson": "practice",
    },
    {
        "id": "diamonds",
        "title": {"en": "A chain of diamonds (order)", "zh": "菱形链(拓扑排序)"},
        "source": (
            "# each step uses h twice: the paths from L back to x double at every diamond\n"
            "x = 0.5\nh = x\nfor i in range(12):\n    h = sin(h) + cos(h)\nL = h"
        ),
        "values": {},
        "lesson": "orders",
    },
    {
        "id": "kink",
        "title": {"en": "ReLU and |x| at 0 (grad check)", "zh": "ReLU 与 |x| 在 0 处(梯度检查)"},
        "source": (
            "# relu and abs bend at 0: the check flags x[1] instead of failing it\n"
            "x = [-1.0, 0.0, 2.0]\nw = [0.5, -1.5, 2.0]\nL = (relu(x)*w + abs(x)).sum()"
        ),
        "values": {},
        "lesson": "gradcheck",
    },
    {
        "id": "second-derivative",
        "title": {"en": "d²/dx² x³ with grad()", "zh": "用 grad() 求 x³ 的二阶导"},
        "source": (
            "x = 3\ny = x**3\n# the first backward pass, built as a graph: g = 3x² = 27\n"
            "g = grad(y, x)\n# stepping backward through g is the second pass: x.grad = 6x = 18\ng"
        ),
        "values": {},
        "lesson": "higher",
    },
    {
        "id": "neuron",
        "title": {"en": "A tanh neuron", "zh": "一个 tanh 神经元"},
        "source": (
            "# one neuron: o = tanh(x1*w1 + x2*w2 + b)\n"
            "x1 = 2.0\nx2 = 0.0\nw1 = -3.0\nw2 = 1.0\nb = 6.8813735870195432\n"
            "n = x1*w1 + x2*w2 + b\no = tanh(n)"
        ),
        "values": {},
        "lesson": "code",
    },
    {
        "id": "sigmoid-mse",
        "title": {"en": "A sigmoid layer with squared error", "zh": "sigmoid 层 + 平方误差"},
        "source": (
            "W = randn(4, 8)\nx = randn(8)\nb = zeros(4)\ny = ones(4)\n"
            "L = ((sigmoid(W@x + b) - y)**2).sum()"
        ),
        "values": {},
        "lesson": "shapes",
    },
    {
        "id": "softmax-ce",
        "title": {"en": "Softmax + cross-entropy", "zh": "softmax + cross-entropy"},
        "source": (
            "W = randn(3, 4)\nx = randn(4)\nz = W @ x\n"
            "# fused: dz = softmax(z) - onehot(2)\nL = cross_entropy(z, 2)"
        ),
        "values": {},
        "lesson": "shapes",
    },
    {
        "id": "broadcast",
        "title": {"en": "A broadcast bias", "zh": "广播的 bias"},
        "source": (
            "X = randn(3, 4)\nb = randn(4)   # added to every row: its grad sums the rows\n"
            "L = ((X + b)**2).mean()"
        ),
        "values": {},
        "lesson": "shapes",
    },
    {
        "id": "batched-matmul",
        "title": {"en": "A batched matmul", "zh": "批量矩阵乘法"},
        "source": "A = randn(2, 3, 4)\nB = randn(2, 4, 2)\nC = A @ B\nL = C.sum()",
        "values": {},
        "lesson": "shapes",
    },
    {
        "id": "broadcast-batch",
        "title": {"en": "Broadcast: (2,3,4) back to (3,1)", "zh": "广播:(2,3,4) 折回 (3,1)"},
        "source": (
            "A = randn(2, 3, 4)\nB = randn(4, 4)\nc = randn(3, 1)   # one scale per row, "
            "shared by the batch\nC = (A @ B) * c\nL = C.sum()"
        ),
        "values": {},
        "lesson": "shapes",
    },
    {
        "id": "saved",
        "title": {"en": "What backward keeps alive", "zh": "backward 保留什么"},
        "source": (
            "W = randn(4, 3)\nx = randn(3)\nh = tanh(W @ x)     # tanh keeps its output\n"
            "target = const(h)   # detached: no backward runs through it\n"
            "v = randn(4)\np = sigmoid(v * h)\nL = ((p - target)**2).sum()"
        ),
        "values": {},
        "lesson": "memory",
    },
    {
        "id": "rnn",
        "title": {"en": "An unrolled RNN (shared weights)", "zh": "展开的 RNN(共享权重)"},
        "source": (
            "Wh = randn(3, 3)\nWx = randn(3, 2)\nxs = randn(4, 2)\nh = zeros(3)\n"
            "for t in range(4):\n    h = tanh(Wh @ h + Wx @ xs[t])\nL = h.sum()"
        ),
        "values": {},
        "lesson": "compare_assign",
    },
]

# Content Security Policy: no inline script anywhere; the page talks only to its own origin.
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors {ancestors}"
)
_SVG_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
}


@lru_cache(maxsize=1)
def strings() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = json.loads((ROOT / "static" / "i18n.json").read_text("utf-8"))
    return data


def lesson_tabs() -> list[str]:
    """The lesson panel's tabs: every lesson of engine.lessons, then the page-only practice."""
    from engine.lessons import LESSONS

    return [*LESSONS, "practice"]


def _engine() -> Any:
    import engine  # late: the engine is a library; import it once the app is up

    return engine


def _limits() -> Any:
    return get_settings().limits


def _max_drawn() -> int:
    return int(getattr(_limits(), "max_drawn_nodes", draw.MAX_DRAWN_NODES))


@dataclasses.dataclass(frozen=True)
class ViewAsk:
    """What a page view is made of: the program, its values and the page's switches.

    `keep_values`: values carried over from an earlier program are dropped when the new one
    has no such free name (the page keeps the fields a student filled in while they edit).
    `collapse`: draw a long unrolled loop as its first and last iterations and a box (True),
    in full (False), or as draw.wants_collapse decides (None: collapsed past
    draw.AUTO_COLLAPSE_NODES nodes); a loop too large to draw in full is collapsed anyway."""

    source: str
    values: dict[str, Any] | None = None
    accumulate: str = "add"
    order: str = "dfs"
    keep_values: bool = False
    collapse: bool | None = None
    lang: str = "en"


def run_view(ask: ViewAsk) -> dict[str, Any]:
    """`make_view`, from the worker's cache when the same program was drawn lately (the view
    is shared: read it, never change it)."""
    return cache.cached_view(dataclasses.astuple(ask), lambda: make_view(ask))


def make_view(ask: ViewAsk) -> dict[str, Any]:
    """Run a program for the page: {trace, contrast, svg, draw_error, collapsed, ...} or
    {error, status}."""
    eng = _engine()
    values = dict(ask.values or {})
    dropped: list[str] = []
    if ask.keep_values and values:
        try:
            free = set(eng.parse(ask.source, _limits()).free)
        except eng.ProgramError:
            free = None
        if free is not None:
            dropped = [k for k in values if k not in free]
            values = {k: v for k, v in values.items() if k in free}
    try:
        result = eng.run(
            ask.source, values, accumulate=ask.accumulate, order=ask.order, limits=_limits()
        )
        trace = result.to_dict()
    except eng.ProgramError as err:
        return {"error": err.to_dict()["error"], "status": err.status, "values": values}
    try:
        # The other accumulation's grads (the `=` row): one more backward on the same graph.
        contrast = eng.program.contrast(result)
    except eng.ProgramError:
        contrast = None
    svg = None
    draw_error = None
    plan = draw.collapse_plan(trace)
    folded = None
    try:
        svg, folded = draw.render_folded(
            trace,
            None,
            plan,
            collapse=ask.collapse,
            max_nodes=_max_drawn(),
            lang=ask.lang,
            timeout=_limits().max_layout_seconds,
        )
    except draw.DrawError as err:
        draw_error = {"message": err.message, "code": err.code, "limit": err.limit}
    return {
        "trace": trace,
        "contrast": contrast,
        "svg": svg,
        "draw_error": draw_error,
        "collapsible": plan is not None,
        "collapsed": folded,
        "dropped": dropped,
        "values": values,
    }


def collapse_param(value: str | None) -> bool | None:
    """`collapse=1` asks for a long loop collapsed, `collapse=0` for it in full; without it the
    drawing decides (draw.wants_collapse)."""
    return {"1": True, "0": False}.get(value or "")


def _json_for_script(data: Any) -> str:
    """JSON that is safe inside <script type="application/json">: no `</`, no `<!--`."""
    text = to_json(data).decode("utf-8")  # strict: a NaN is null, never a token JSON lacks
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _page(request: Request, template: str, *, embed: bool) -> Response:
    params = dict(request.query_params)
    lang = parse_lang(params.get("lang"))
    query: PageQuery | None = None
    view: dict[str, Any]
    try:
        query = parse_query(params)
        view = run_view(
            ViewAsk(
                query.source,
                query.values,
                query.accumulate,
                query.order,
                collapse=collapse_param(params.get("collapse")),
                lang=lang,
            )
        )
    except QueryError as err:
        view = {"error": err.to_dict()["error"], "status": err.status}
    source = query.source if query else params.get("source", "")
    # The editor shows the program, but never more of it than a program may hold: a page
    # opened at an over-long address does not echo it back in full.
    limit = _limits().max_source_chars
    if len(source) > limit:
        source = source[:limit]
        query = dataclasses.replace(query, source=source) if query else None
    trace = view.get("trace")
    step = None
    if trace is not None and query is not None:
        step = draw.clamp_step(trace, query.step)
    state = {
        "version": FORMAT_VERSION,
        "embed": embed,
        "query": {
            "source": source,
            "values": (query.values if query else {}),
            "accumulate": query.accumulate if query else "add",
            "order": query.order if query else "dfs",
            "step": step,
            "fwd": query.fwd if query else None,
            "lang": lang,
            "present": params.get("present") == "1",
            "collapse": collapse_param(params.get("collapse")),
        },
        "trace": trace,
        "contrast": view.get("contrast"),
        "error": view.get("error"),
        "draw_error": view.get("draw_error"),
        "collapsible": view.get("collapsible", False),
        "collapsed": view.get("collapsed"),
        "examples": EXAMPLES,
        "strings": strings(),
    }
    t = strings()[lang]
    n_steps = len(trace["steps"]) - 1 if trace else 0
    context = {
        "t": t,
        "lang": lang,
        "embed": embed,
        "state_json": _json_for_script(state),
        "svg": view.get("svg"),  # from engine.drawing.draw: escaped there, safe to inline
        "error": view.get("error"),
        "draw_error": view.get("draw_error"),
        "source": source,
        "step": step or 0,
        "n_steps": n_steps,
        "step_label": t["step_of"].format(k=step or 0, n=n_steps),
        "examples": EXAMPLES,
        "accumulate": query.accumulate if query else "add",
        "order": query.order if query else "dfs",
        "accumulate_options": ACCUMULATE,
        "order_options": ORDERS,
        "present": params.get("present") == "1",
        "collapsible": view.get("collapsible", False),
        "collapse": view.get("collapsed") is not None,
        "full_link": permalink(query, "/") if query else "/",
        "lesson_tabs": lesson_tabs(),  # static/lessons.js
    }
    response = templates.TemplateResponse(request=request, name=template, context=context)
    response.headers["Content-Security-Policy"] = _CSP.format(ancestors="*" if embed else "'self'")
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@router.get(
    "/",
    response_class=HTMLResponse,
    responses=PAGE_RESPONSES,
    openapi_extra={"parameters": VIEW_PARAMETERS},
)
def index(request: Request) -> Response:
    """The interactive page, opened at the program and step in the address (a permalink)."""
    return _page(request, "index.html", embed=False)


@router.get(
    "/embed",
    response_class=HTMLResponse,
    responses=PAGE_RESPONSES,
    openapi_extra={"parameters": VIEW_PARAMETERS},
)
def embed(request: Request) -> Response:
    """The same view without the page's chrome, for iframes."""
    return _page(request, "embed.html", embed=True)


def _svg_response(svg: str, status: int = 200, extra: dict[str, str] | None = None) -> Response:
    headers = dict(_SVG_HEADERS)
    if status == 200:
        headers["Cache-Control"] = "public, max-age=3600"
    headers.update(extra or {})
    return Response(content=svg, status_code=status, media_type="image/svg+xml", headers=headers)


def _error_svg(message: str, line: int | None = None, column: int | None = None) -> str:
    where = f"line {line}, column {column}" if line else None
    lines = _wrap(message, 80)
    return draw.message_svg("gradtrace: " + lines[0], ([where] if where else []) + lines[1:])


def _wrap(text: str, width: int) -> list[str]:
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return lines[:8]


@router.get(
    "/api/svg",
    response_class=Response,
    responses=SVG_RESPONSES,
    openapi_extra={"parameters": SVG_PARAMETERS},
)
def api_svg(request: Request) -> Response:
    """The graph at a step as SVG, for <img src> in course notes. A program that cannot run
    gets a 4xx whose body is an SVG that shows why. Cached as its address names it (app.cache)."""
    return cache.cached_get(request, lambda: svg_answer(request))


def svg_answer(request: Request) -> Response:
    params = dict(request.query_params)
    try:
        q = parse_query(params, default_source=False)
    except QueryError as err:
        return _svg_response(_error_svg(err.message), err.status)
    eng = _engine()
    try:
        trace = eng.run(
            q.source, q.values, accumulate=q.accumulate, order=q.order, limits=_limits()
        ).to_dict()
    except eng.ProgramError as err:
        return _svg_response(_error_svg(err.message, err.line, err.column), err.status)
    step = draw.clamp_step(trace, q.step)
    legend = params.get("legend", "1") not in ("0", "false", "no")
    try:
        svg, _ = draw.render_folded(
            trace,
            step,
            draw.collapse_plan(trace),
            collapse=collapse_param(params.get("collapse")),
            lang=q.lang,
            legend=legend,
            max_nodes=_max_drawn(),
            timeout=_limits().max_layout_seconds,
        )
    except draw.DrawError as err:
        if err.code == "busy":
            return _svg_response(_error_svg(err.message), 503, {"Retry-After": "2"})
        title = strings()[q.lang]["too_large"]
        return _svg_response(draw.message_svg(title, _wrap(err.message, 80)), 413)
    return _svg_response(svg)


class RenderRequest(BaseModel):
    """POST /api/render: what POST /api/trace takes, plus the page's own switches."""

    model_config = ConfigDict(extra="forbid", strict=True)
    source: str = Field(max_length=1_000_000)
    # As strict as POST /api/trace: a number or nested lists, never "2" or true (a 422).
    values: dict[str, NestedNumbers] | None = None
    accumulate: str = "add"
    order: str = "dfs"
    keep_values: bool = False
    collapse: bool | None = None  # None: collapse a long loop past draw.AUTO_COLLAPSE_NODES
    lang: str = "en"


@router.post("/api/render", responses=JSON_ERRORS)
def api_render(body: Annotated[RenderRequest, Body()]) -> Response:
    """The page's re-run: {trace, contrast, svg, draw_error, values, dropped}, or {error, status}
    when the program cannot run (the status /api/trace would give, 400 or 413)."""
    if body.accumulate not in ACCUMULATE or body.order not in ORDERS:
        err = QueryError("accumulate is add|assign and order is dfs|kahn", "options", 422)
        return JSONResponse(err.to_dict(), status_code=422)
    return cache.keep_if(*render_answer(body))  # app.cache.AnswerCache keeps it


def render_answer(body: RenderRequest) -> tuple[Response, bool]:
    """POST /api/render's answer, and whether it may be kept (app.cache)."""
    view = run_view(ViewAsk(**{**body.model_dump(), "lang": parse_lang(body.lang)}))
    if "error" in view:
        # 200: the page asked "what does this text do?" and the answer is "it cannot run" —
        # a 4xx here would also land in the browser console on every keystroke.
        return JSONResponse(
            {"error": view["error"], "status": view["status"], "values": view.get("values")}
        ), False
    return JSONResponse(view), cache.cacheable_view(view)
