# source: Dive into Deep Learning (d2l.ai), 2.5.3 "Detaching Computation", its statements up
#   to the sum, as the output
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.3
# prints: x.grad = u = [0, 1, 4, 9]
import torch
x = torch.arange(4.0, requires_grad=True)
y = x * x
u = y.detach()
z = u * x
L = z.sum()
