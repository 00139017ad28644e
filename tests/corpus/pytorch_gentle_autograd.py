# source: PyTorch tutorials, "A Gentle Introduction to torch.autograd"
#   (beginner_source/blitz/autograd_tutorial.py)
# url: https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html
# section: "Differentiation in Autograd", the cells in order
# prints: tensor([True, True]) twice (a.grad = 9a² = [36, 81], b.grad = -2b = [-12, -8])
import torch

a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)

Q = 3*a**3 - b**2

external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)

# check if collected gradients are correct
print(9*a**2 == a.grad)
print(-2*b == b.grad)
