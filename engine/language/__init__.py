"""The language: one interpreter over Python's own syntax tree, deny by default. It runs the
Python; what the names of torch, NumPy and JAX mean is the library's (engine/library), which
the interpreter reaches through `Library` (libraries.py) and never imports.

source       the text's checks (length, characters, nesting) around ast.parse; positions
scan         what is known before the run: names bound, free names, labels, warnings
interpreter  the run: the dispatch, the meter (every limit and the deadline), graph nodes
statements   one handler per statement class       expressions   one per expression class
comparisons  ==, <, in, is, chained as Python's    sequences     what a loop runs over
scopes       what a name holds where it is read, and binding names
calls        def and lambda, the library's signatures
indexing     x[key]: views and integer-array indexing
output       the last value given, the implicit pass on it
values       what names hold besides tensors       libraries     what the interpreter asks
name_warnings  did-you-mean warnings: a free name one edit from an assigned one
"""
