"""Exports outside the engine's core: files, standalone HTML, notebooks."""
