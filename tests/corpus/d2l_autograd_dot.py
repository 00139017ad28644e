# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation"
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.1 "A Simple Function" (PyTorch tab)
# prints: x = tensor([0., 1., 2., 3.]); y = tensor(28.); x.grad = tensor([0., 4., 8., 12.])
import torch
x = torch.arange(4.0)
x
# Can also create x = torch.arange(4.0, requires_grad=True)
x.requires_grad_(True)
x.grad  # The gradient is None by default
y = 2 * torch.dot(x, x)
y
y.backward()
x.grad
