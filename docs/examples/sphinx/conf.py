"""Sphinx configuration for course notes whose gradtrace figures are drawn at build time.

    pip install sphinx myst-parser gradtrace   (gradtrace from its checkout: scripts/setup)
    sphinx-build -b html . _build/html

`gradtrace.sphinx` adds the `.. gradtrace::` directive (index.rst); with `myst_parser` the
same directive is a ```{gradtrace} fence in Markdown pages (myst.md). The figures go to the
build's _images/ under names made from their content, so rebuilding changes no byte.
"""

project = "Backpropagation, step by step"
author = "Course staff"
extensions = ["myst_parser", "gradtrace.sphinx"]
html_theme = "alabaster"
exclude_patterns = ["_build"]
