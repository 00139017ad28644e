"""Routers, one per concern: api (JSON), pages (HTML and SVG)."""
