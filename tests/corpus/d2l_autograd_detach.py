# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation"
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.3 "Detaching Computation"
# prints: x.grad == u: tensor([True, True, True, True]), u = x * x = [0, 1, 4, 9]
import torch
x = torch.arange(4.0, requires_grad=True)
y = x * x
u = y.detach()
z = u * x

z.sum().backward()
x.grad == u
