# source: PyTorch documentation, torch.func.grad
# url: https://docs.pytorch.org/docs/stable/generated/torch.func.grad.html
# section: the examples "Case 1: Using grad()" and its second-order gradients (the doctest
#   prompts left out; x drawn with torch.randn as published)
# prints: nothing (the example asserts cos_x = cos(x) and neg_sin_x = -sin(x))
import torch
from torch.func import grad
x = torch.randn([])
cos_x = grad(lambda x: torch.sin(x))(x)
assert torch.allclose(cos_x, x.cos())

# Second-order gradients
neg_sin_x = grad(grad(lambda x: torch.sin(x)))(x)
assert torch.allclose(neg_sin_x, -x.sin())
