# source: PyTorch tutorials, "Introduction to PyTorch" series, "The Fundamentals of Autograd"
#   (beginner_source/introyt/autogradyt_tutorial.py), the steps the tutorial recalls
# url: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
# section: "A Simple Example": "Recall the computation steps we took to get here" (the
#   tutorial's imports of torch and math added above them)
# prints: a.grad = 2 cos(a) (the tutorial plots it: 2, 1.93, 1.73, … at a = 0, π/12, π/6, …)
import torch
import math
a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
b = torch.sin(a)
c = 2 * b
d = c + 1
out = d.sum()
