# source: PyTorch documentation, torch.autograd.functional.hessian
# url: https://docs.pytorch.org/docs/stable/generated/torch.autograd.functional.hessian.html
# section: the second example: pow_adder_reducer of two inputs (the doctest prompts left
#   out; inputs drawn with torch.rand as published)
# prints: ((diag(4, 4), zeros), (zeros, diag(6, 6)))
import torch
from torch.autograd.functional import hessian
def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()
inputs = (torch.rand(2), torch.rand(2))
hessian(pow_adder_reducer, inputs)
