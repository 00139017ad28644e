# source: PyTorch documentation, torch.cat and torch.stack (their examples, with
#   requires_grad=True and a sum, so there is a gradient to show)
# url: https://pytorch.org/docs/stable/generated/torch.cat.html
# section: "Example": x = torch.randn(2, 3); torch.cat((x, x, x), 0) — here fixed numbers
# prints: L = 3 * sum(x*x) + 2 * sum(x*x); x.grad = 10 x
import torch
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], requires_grad=True)
c = torch.cat((x, x, x), 0)
s = torch.stack((x, x), dim=0)
L = (c * c).sum() + (s * s).sum()
