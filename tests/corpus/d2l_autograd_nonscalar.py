# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation"
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.2 "Backward for Non-Scalar Variables"
# prints: x.grad = tensor([0., 2., 4., 6.])
import torch
x = torch.arange(4.0, requires_grad=True)
y = x * x
y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
x.grad
