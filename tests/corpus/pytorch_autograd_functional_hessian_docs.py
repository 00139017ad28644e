# source: PyTorch documentation, torch.autograd.functional.hessian
# url: https://docs.pytorch.org/docs/stable/generated/torch.autograd.functional.hessian.html
# section: the example: pow_reducer (the doctest prompts left out; inputs drawn with
#   torch.rand as published)
# prints: the 2x2x2x2 Hessian (6·x on the diagonal)
import torch
from torch.autograd.functional import hessian
def pow_reducer(x):
    return x.pow(3).sum()
inputs = torch.rand(2, 2)
hessian(pow_reducer, inputs)
