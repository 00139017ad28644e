"""Security headers on every answer, and the one Content Security Policy they carry.

The page runs no inline script (a strict CSP); `/embed` and `/api/svg` are made to be framed or
embedded by other sites, every other page is not. Routes set none of these headers themselves:
`SecurityHeaders` adds them to every answer (a 503, 413 or cached one too), and
`headers_for` is what the last-resort 500 (app/errors.py) carries.
"""

from __future__ import annotations

from starlette.types import Message, Receive, Scope, Send

from app.middleware.asgi import HTTPMiddleware

EMBEDDABLE = ("/embed", "/api/svg")

# No inline script anywhere; the page talks only to its own origin. The page styles itself
# through the CSSOM (`element.style`), which style-src does not govern, so it needs no inline
# style either.
POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data: blob:",
    "connect-src": "'self'",
    "font-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
}
# An SVG opened on its own (an image address, or a picture of an error) runs and loads nothing;
# Graphviz's SVG sets style attributes, and no style can run script.
SVG_POLICY = {"default-src": "'none'", "style-src": "'unsafe-inline'"}
# What the API docs (app/routes/docs.py) need beyond the page's policy. Their bundles style
# themselves with <style> elements made as they run. ReDoc's search runs in a worker that its
# bundle makes from a blob: address: a worker touches no page and can be made only by a script
# that already runs, so this widens nothing an attacker could reach; without it the browser
# refuses the worker.
# The own-engine page (app/routes/own.py) runs a student's Python on Pyodide in a worker:
# WebAssembly needs 'wasm-unsafe-eval' (never 'unsafe-eval': no JavaScript eval), and a
# worker takes its policy from its own script's answer, so that script carries it too.
# connect-src stays 'self': Pyodide loads from this origin only.
OWN_ENGINE = {"script-src": "'self' 'wasm-unsafe-eval'", "worker-src": "'self'"}
WIDER = {
    "/docs": {"style-src": "'self' 'unsafe-inline'"},
    "/redoc": {"style-src": "'self' 'unsafe-inline'", "worker-src": "'self' blob:"},
    "/own": OWN_ENGINE,
    "/static/js/own/worker.js": OWN_ENGINE,
}


def content_security_policy(path: str, svg: bool = False) -> str:
    """The CSP of the answer at `path` (an SVG image's own when `svg`)."""
    # `*` matches no page opened from disk: notes kept as files frame /embed too (`file:`).
    ancestors = "* file:" if path.startswith(EMBEDDABLE) else "'self'"
    policy = SVG_POLICY if svg else POLICY
    directives = {**policy, "frame-ancestors": ancestors, **({} if svg else WIDER.get(path, {}))}
    return "; ".join(f"{name} {sources}" for name, sources in directives.items())


def headers_for(path: str, svg: bool = False) -> list[tuple[bytes, bytes]]:
    embeddable = path.startswith(EMBEDDABLE)
    out = [
        (b"content-security-policy", content_security_policy(path, svg).encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"cross-origin-opener-policy", b"same-origin"),
    ]
    if embeddable:
        # An <img> or <iframe> on a course-notes site loads these from another origin.
        out.append((b"cross-origin-resource-policy", b"cross-origin"))
    else:
        out.append((b"x-frame-options", b"SAMEORIGIN"))
        out.append((b"cross-origin-resource-policy", b"same-origin"))
    return out


class SecurityHeaders(HTTPMiddleware):
    """Adds `headers_for` the answer's path to every answer, keeping any a route set itself."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "/")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                svg = any(
                    k.lower() == b"content-type" and v.startswith(b"image/svg+xml")
                    for k, v in headers
                )
                message["headers"] = headers + [
                    (k, v) for k, v in headers_for(path, svg) if k not in names
                ]
            await send(message)

        await self.app(scope, receive, with_headers)
