"""The autograd core: values, ops, the graph and the one reverse walk."""
