# source: PyTorch documentation, torch.func.hessian
# url: https://docs.pytorch.org/docs/stable/generated/torch.func.hessian.html
# section: the example: the Hessian of sin(x).sum() (the doctest prompts left out; x drawn
#   with torch.randn as published)
# prints: nothing (the example asserts the Hessian is diag(-sin(x)))
import torch
from torch.func import hessian
def f(x):
  return x.sin().sum()

x = torch.randn(5)
hess = hessian(f)(x)  # equivalent to jacfwd(jacrev(f))(x)
assert torch.allclose(hess, torch.diag(-x.sin()))
