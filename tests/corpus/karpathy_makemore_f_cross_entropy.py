# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 4: the same loss as one
#   call, F.cross_entropy(logits, Yb); logits and labels written out
# url: https://github.com/karpathy/nn-zero-to-hero (lectures/makemore)
# section: "cross entropy loss backward pass"
# prints: loss = 1.47495 (PyTorch's for these numbers)
import torch
import torch.nn.functional as F
logits = torch.tensor([[0.2, -1.0, 0.5, 0.1], [1.5, 0.3, -0.2, 0.0], [-0.5, 0.8, 0.9, -1.2]], requires_grad=True)
Yb = torch.tensor([2, 0, 3])
loss = F.cross_entropy(logits, Yb)
