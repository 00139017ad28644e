# source: PyTorch tutorials, "Deep Learning with PyTorch: A 60 Minute Blitz",
#   "Autograd: Automatic Differentiation" (the tutorial's older version)
# url: https://pytorch.org/tutorials/beginner/former_torchies/autograd_tutorial.html
# section: "Tensor" and "Gradients"
# prints: out = 27; x.grad = [[4.5, 4.5], [4.5, 4.5]]
import torch
x = torch.ones(2, 2, requires_grad=True)
print(x)
y = x + 2
print(y)
z = y * y * 3
out = z.mean()
print(z, out)
out.backward()
print(x.grad)
