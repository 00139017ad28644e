"""The language: source text parsed to an IR, then built into a graph."""
