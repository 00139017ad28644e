# source: PyTorch tutorials, "Introduction to PyTorch" series, "The Fundamentals of Autograd"
#   (beginner_source/introyt/autogradyt_tutorial.py)
# url: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
# section: "A Simple Example", its cells without matplotlib (its imports and the two
#   plt.plot lines) and without the cell that walks d.grad_fn.next_functions
# prints: a, b = sin(a), c = 2b, d = c + 1 and out = d.sum() with their grad_fn, then
#   a.grad = 2 cos(a): what torch prints for them, line for line
import torch

import math

a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
print(a)

b = torch.sin(a)

print(b)

c = 2 * b
print(c)

d = c + 1
print(d)

out = d.sum()
print(out)

out.backward()
print(a.grad)
