# source: PyTorch tutorials, "A Gentle Introduction to torch.autograd"
#   (beginner_source/blitz/autograd_tutorial.py), its cells up to the backward call
# url: https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html
# section: "Differentiation in Autograd" (the check by == that follows is left out)
# prints: (in the text) a.grad = 9a² = [36, 81], b.grad = -2b = [-12, -8]; Q = [-12, 65]
import torch

a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)

Q = 3*a**3 - b**2

external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
