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
modules      the imports allowed (torch, numpy, math, jax…) and what their functions mean here
spelling     PyTorch's and NumPy's spellings: prefixes, requires_grad, x.shape, integer indexing
spelling_more  steps=/size= as positions, constant expressions (2. * math.pi), norm, square,
             .double(), .data, .item(), x.requires_grad = True; the tensors made from numbers
build_names  what those spellings build
parse_flow, parse_functions   if/while/for, comprehensions, zip; def, lambda, grad(f)
flow_ir, shown_ir             the IR of those statements; print(...) and x.grad
run_statements, run_flow, run_functions, runtime   the builder's statements, decided on the
             values as eager PyTorch does; functions inlined at each call
run_shown    backward(), print, comparisons that are only shown; which node is the output
printing     what print(...) and x.grad show, as PyTorch or NumPy prints them
name_warnings  did-you-mean warnings: a free name one edit from an assigned one
"""
