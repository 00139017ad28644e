# source: PyTorch tutorials, the same 60 Minute Blitz autograd section, its statements without
#   the print calls (as a student pastes the arithmetic)
# url: https://pytorch.org/tutorials/beginner/former_torchies/autograd_tutorial.html
# section: "Gradients"
# prints: out = 27; x.grad = [[4.5, 4.5], [4.5, 4.5]]
import torch
x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
