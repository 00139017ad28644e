# source: PyTorch tutorials, "Automatic Differentiation with torch.autograd"
# url: https://pytorch.org/tutorials/beginner/basics/autogradqs_tutorial.html
# section: "Tensors, Functions and Computational graph" (x, w, b with fixed values in place
#   of torch.randn, so the numbers can be checked: w = 0.1 everywhere, b = 0)
# prints: random values in the tutorial; binary_cross_entropy_with_logits is not in the language
import torch
x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.full((5, 3), 0.1, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
