# source: PyTorch tutorials, "Deep Learning with PyTorch: A 60 Minute Blitz", "Autograd:
#   Automatic Differentiation" (beginner_source/blitz/autograd_tutorial.py as it was before
#   "A Gentle Introduction to torch.autograd" replaced it)
# url: https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html
# section: "You can do many crazy things with autograd!"
# prints: y and x.grad, both random (x = torch.randn(3)); x.grad = [0.1, 1.0, 0.0001] * 2^k,
#   with 2^k the factor the while loop reached
import torch
x = torch.randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)

print(x.grad)
