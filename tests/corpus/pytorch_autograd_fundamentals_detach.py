# source: PyTorch tutorials, "Introduction to PyTorch" series, "The Fundamentals of Autograd"
#   (beginner_source/introyt/autogradyt_tutorial.py)
# url: https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html
# section: "Turning Autograd Off and On", the detach() cell (the tutorial's `import torch`
#   above it)
# prints: x (random, requires_grad=True), then y = x.detach(): the same numbers without it
import torch
x = torch.rand(5, requires_grad=True)
y = x.detach()

print(x)
print(y)
