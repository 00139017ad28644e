"""The Graphviz helper process (`python engine/drawing/graphviz_helper.py`, started by
graphviz.py): loads Graphviz's library (libgvc, through ctypes) once, then lays out graph after
graph, read from stdin and answered on stdout. Standard library only, so it starts without
importing NumPy or the engine; the parent imports only its wire format from here."""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable

HEADER = struct.Struct("!BI")  # status (0 = SVG, 1 = refused), payload length
LENGTH = struct.Struct("!I")
LIBRARIES = ("libgvc.so.6", "libgvc.so", "libgvc.dylib")
CGRAPH = ("libcgraph.so.6", "libcgraph.so", "libcgraph.dylib")


def _load(names: tuple[str, ...]) -> object:
    import ctypes

    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise OSError(f"none of {names} could be loaded")


def _serve() -> None:
    """Read length-prefixed DOT from stdin, answer status + length-prefixed SVG on stdout."""
    import ctypes

    gvc: ctypes.CDLL = _load(LIBRARIES)  # type: ignore[assignment]
    cgraph: ctypes.CDLL = _load(CGRAPH)  # type: ignore[assignment]
    vp, cp = ctypes.c_void_p, ctypes.c_char_p
    gvc.gvContext.restype = vp
    cgraph.agmemread.restype = vp
    cgraph.agmemread.argtypes = [cp]
    cgraph.agclose.argtypes = [vp]
    gvc.gvLayout.argtypes = [vp, vp, cp]
    gvc.gvFreeLayout.argtypes = [vp, vp]
    gvc.gvRenderData.argtypes = [vp, vp, cp, ctypes.POINTER(cp), ctypes.POINTER(ctypes.c_uint)]
    gvc.gvFreeRenderData.argtypes = [cp]
    context = gvc.gvContext()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(b"R")
    stdout.flush()

    def read(n: int) -> bytes:
        data = stdin.read(n)
        if len(data) < n:
            raise EOFError
        return data

    def layout(dot: bytes) -> bytes | None:
        graph = cgraph.agmemread(dot)
        if not graph:
            return None
        try:
            if gvc.gvLayout(context, graph, b"dot") != 0:
                return None
            try:
                buf, size = cp(), ctypes.c_uint()
                if gvc.gvRenderData(context, graph, b"svg", ctypes.byref(buf), ctypes.byref(size)):
                    return None
                svg = ctypes.string_at(buf, size.value)
                gvc.gvFreeRenderData(buf)
                return svg
            finally:
                gvc.gvFreeLayout(context, graph)
        finally:
            cgraph.agclose(graph)

    answer: Callable[[bytes | None], bytes] = lambda svg: (  # noqa: E731
        HEADER.pack(1, 0) if svg is None else HEADER.pack(0, len(svg)) + svg
    )
    while True:
        try:
            (size,) = LENGTH.unpack(read(LENGTH.size))
            dot = read(size)
        except EOFError:
            return  # the parent has gone
        stdout.write(answer(layout(dot)))
        stdout.flush()


if __name__ == "__main__":
    _serve()
