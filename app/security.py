"""Security headers on every answer. The page runs no inline script (a strict CSP); `/embed`
and `/api/svg` are made to be framed or embedded by other sites, every other page is not."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

EMBEDDABLE = ("/embed", "/api/svg")

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        # Graphviz's SVG and the page set style attributes; no style can run script.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ]
)


# An SVG opened on its own (an image address, or a picture of an error) runs and loads nothing.
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'"


def headers_for(path: str, svg: bool = False) -> list[tuple[bytes, bytes]]:
    embeddable = path.startswith(EMBEDDABLE)
    ancestors = "frame-ancestors *" if embeddable else "frame-ancestors 'self'"
    out = [
        (b"content-security-policy", f"{SVG_CSP if svg else CSP}; {ancestors}".encode()),
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


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
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
