# source: PyTorch tutorials, "Learn the Basics", "Automatic Differentiation with torch.autograd"
#   (beginner_source/basics/autogradqs_tutorial.py)
# url: https://pytorch.org/tutorials/beginner/basics/autogradqs_tutorial.html
# section: "Disabling Gradient Tracking", its two cells, after the first cell's x, y, w and b
#   (its z and loss left out: binary_cross_entropy_with_logits is not in the language)
# prints: True / False / False
import torch

x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)

z = torch.matmul(x, w)+b
print(z.requires_grad)

with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)

z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)
