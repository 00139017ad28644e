"""The language: one interpreter over Python's own syntax tree, deny by default.

source       the text's checks (length, characters, nesting) around ast.parse; positions
scan         what is known before the run: names bound, free names, labels, warnings
interpreter  the run: names, the meter (every limit and the deadline), graph nodes
statements   one handler per statement class       expressions   one per expression class
calls        def and lambda, the library's signatures
names        the names a program may use: modules and their spellings, attributes
library      the ops as functions (from the registry) and the tensors a program makes
builtins     print, range, len, zip, … as Python means them
methods      a tensor's methods and attributes, a grad's, a list's, a string's
indexing     x[key]: views and integer-array indexing
transforms   backward(), torch.autograd.grad, jax.grad, grad(L, x), no_grad, optimizers
printing     what print(…) shows, as PyTorch or NumPy prints it; format strings
values       what names hold besides tensors
given, valuespec   the values given for the free names
name_warnings  did-you-mean warnings: a free name one edit from an assigned one
"""
