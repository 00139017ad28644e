# source: PyTorch documentation, torch.func.jvp
# url: https://docs.pytorch.org/docs/stable/generated/torch.func.jvp.html
# section: the example (the doctest prompts left out; x drawn with torch.randn as published)
# prints: nothing (the example asserts the value is f(x) and the JVP [1, 2, 3])
import torch
from torch.func import jvp
x = torch.randn([])
f = lambda x: x * torch.tensor([1., 2., 3])
value, grad = jvp(f, (x,), (torch.tensor(1.),))
assert torch.allclose(value, f(x))
assert torch.allclose(grad, torch.tensor([1., 2, 3]))
