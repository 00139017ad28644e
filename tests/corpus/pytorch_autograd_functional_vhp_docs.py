# source: PyTorch documentation, torch.autograd.functional.vhp
# url: https://docs.pytorch.org/docs/stable/generated/torch.autograd.functional.vhp.html
# section: the first example: pow_reducer (the doctest prompts left out; inputs drawn with
#   torch.rand as published)
# prints: (Σx³, 6·x·v)
import torch
from torch.autograd.functional import vhp
def pow_reducer(x):
    return x.pow(3).sum()
inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
vhp(pow_reducer, inputs, v)
