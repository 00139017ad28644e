# source: PyTorch documentation, torch.autograd.functional.vjp
# url: https://docs.pytorch.org/docs/stable/generated/torch.autograd.functional.vjp.html
# section: the second example: adder of two inputs (the doctest prompts left out; inputs
#   drawn with torch.rand as published)
# prints: (2x + 3y, (tensor([2., 2.]), tensor([3., 3.])))
import torch
from torch.autograd.functional import vjp
def adder(x, y):
    return 2 * x + 3 * y
inputs = (torch.rand(2), torch.rand(2))
v = torch.ones(2)
vjp(adder, inputs, v)
