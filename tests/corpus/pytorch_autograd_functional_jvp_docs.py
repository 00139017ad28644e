# source: PyTorch documentation, torch.autograd.functional.jvp
# url: https://docs.pytorch.org/docs/stable/generated/torch.autograd.functional.jvp.html
# section: the second example: adder of two inputs (the doctest prompts left out; inputs
#   drawn with torch.rand as published)
# prints: (2x + 3y, tensor([5., 5.]))
import torch
from torch.autograd.functional import jvp
def adder(x, y):
    return 2 * x + 3 * y
inputs = (torch.rand(2), torch.rand(2))
v = (torch.ones(2), torch.ones(2))
jvp(adder, inputs, v)
