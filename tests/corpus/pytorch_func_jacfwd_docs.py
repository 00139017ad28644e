# source: PyTorch documentation, torch.func.jacfwd
# url: https://docs.pytorch.org/docs/stable/generated/torch.func.jacfwd.html
# section: the first example: the Jacobian of torch.sin by forward mode (the doctest prompts
#   left out; x drawn with torch.randn as published)
# prints: nothing (the example asserts the Jacobian is diag(cos(x)))
import torch
from torch.func import jacfwd
x = torch.randn(5)
jacobian = jacfwd(torch.sin)(x)
expected = torch.diag(torch.cos(x))
assert torch.allclose(jacobian, expected)
