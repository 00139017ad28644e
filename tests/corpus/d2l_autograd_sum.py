# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation"
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.1, the second function: y = x.sum() (x.grad.zero_() dropped: a fresh program)
# prints: x.grad = tensor([1., 1., 1., 1.])
import torch
x = torch.arange(4.0, requires_grad=True)
y = x.sum()
