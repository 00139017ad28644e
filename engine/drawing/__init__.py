"""The drawing: DOT from a trace, laid out by Graphviz, finished as SVG."""
