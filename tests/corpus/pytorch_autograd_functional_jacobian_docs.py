# source: PyTorch documentation, torch.autograd.functional.jacobian
# url: https://docs.pytorch.org/docs/stable/generated/torch.autograd.functional.jacobian.html
# section: the first example: exp_reducer (the doctest prompts left out; inputs drawn with
#   torch.rand as published)
# prints: the 2x2x2 Jacobian (exp(x) where the row matches)
import torch
from torch.autograd.functional import jacobian
def exp_reducer(x):
    return x.exp().sum(dim=1)
inputs = torch.rand(2, 2)
jacobian(exp_reducer, inputs)
