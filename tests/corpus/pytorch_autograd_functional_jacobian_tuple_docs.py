# source: PyTorch documentation, torch.autograd.functional.jacobian
# url: https://docs.pytorch.org/docs/stable/generated/torch.autograd.functional.jacobian.html
# section: the last example: exp_adder of two inputs (the doctest prompts left out; inputs
#   drawn with torch.rand as published)
# prints: (diag(2·exp(x)), diag(3, 3))
import torch
from torch.autograd.functional import jacobian
def exp_adder(x, y):
    return 2 * x.exp() + 3 * y
inputs = (torch.rand(2), torch.rand(2))
jacobian(exp_adder, inputs)
