"""The language: source text parsed to an IR, then built into a graph.

vocabulary   the functions, methods and operators a program may use (ops from the registry)
positions    lines and columns of the text; syntax errors; "did you mean"
guards       the checks around ast.parse: length, characters, nesting (max_depth)
parse        parse(source) -> ir.Program: statements and expressions, deny by default
parser_base  the parser's shared state, refusals and whole numbers (shapes, indices)
calls        function and method calls, their keywords and constant arguments
ir           the IR's dataclasses; str() of one is the source it means
build        build(program, values) -> Graph: the IR run forward, loops unrolled
nodes        each graph node made after the limits it could break are checked
given        the values given for the free names, checked
valuespec    the `values` text of the query and the CLI: `x=2,y=3` or JSON
"""
