# source: PyTorch documentation, torch.func.jacrev
# url: https://docs.pytorch.org/docs/stable/generated/torch.func.jacrev.html
# section: the first example: the Jacobian of torch.sin (the doctest prompts left out; x
#   drawn with torch.randn as published)
# prints: nothing (the example asserts the Jacobian is diag(cos(x)))
import torch
from torch.func import jacrev
x = torch.randn(5)
jacobian = jacrev(torch.sin)(x)
expected = torch.diag(torch.cos(x))
assert torch.allclose(jacobian, expected)
