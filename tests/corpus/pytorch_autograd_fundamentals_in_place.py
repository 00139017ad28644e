# source: PyTorch tutorials, "Introduction to PyTorch" series, "The Fundamentals of Autograd"
#   (beginner_source/introyt/autogradyt_tutorial.py)
# url: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
# section: "Autograd and In-place Operations", the cell the tutorial says throws (the
#   tutorial's imports of torch and math above it)
# prints: nothing: PyTorch's RuntimeError, "a leaf Variable that requires grad is being used
#   in an in-place operation."
import torch
import math
a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
torch.sin_(a)
