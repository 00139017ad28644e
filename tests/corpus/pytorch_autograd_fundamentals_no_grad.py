# source: PyTorch tutorials, "Introduction to PyTorch" series, "The Fundamentals of Autograd"
#   (beginner_source/introyt/autogradyt_tutorial.py)
# url: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
# section: "Turning Autograd Off and On", the torch.no_grad() cell (the tutorial's
#   `import torch` above it)
# prints: c1 = a + b with grad_fn=<AddBackward0>, c2 (made under no_grad) without one,
#   c3 = a * b with grad_fn=<MulBackward0>: all 5s, 5s and 6s
import torch
a = torch.ones(2, 3, requires_grad=True) * 2
b = torch.ones(2, 3, requires_grad=True) * 3

c1 = a + b
print(c1)

with torch.no_grad():
    c2 = a + b

print(c2)

c3 = a * b
print(c3)
