# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation", 2.5.1, written
#   with the comment's own suggestion: x = torch.arange(4.0, requires_grad=True)
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.1 "A Simple Function"
# prints: y = 28; x.grad = [0, 4, 8, 12] (= 4x)
import torch
x = torch.arange(4.0, requires_grad=True)
y = 2 * torch.dot(x, x)
