# source: PyTorch documentation, torch.func.vjp
# url: https://docs.pytorch.org/docs/stable/generated/torch.func.vjp.html
# section: the first two examples: a scalar function, and one of two outputs (the doctest
#   prompts left out; x drawn with torch.randn as published)
# prints: nothing (the examples assert vjps[0] = cos(x), then cos(x) - sin(x))
import torch
x = torch.randn([5])
f = lambda x: x.sin().sum()
(_, vjpfunc) = torch.func.vjp(f, x)
vjps = vjpfunc(torch.tensor(1.))
assert torch.allclose(vjps[0], x.cos())

x = torch.randn([5])
f = lambda x: (x.sin(), x.cos())
(_, vjpfunc) = torch.func.vjp(f, x)
vjps = vjpfunc((torch.ones([5]), torch.ones([5])))
assert torch.allclose(vjps[0], x.cos() + -x.sin())
