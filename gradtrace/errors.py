"""The one error the exports raise: what could not be made, in words for the author."""


class ExportError(Exception):
    """An export could not be made: no PNG renderer, a drawing too large, assets missing."""
