# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 4: the loss by hand
#   without the max subtraction (log of softmax, then the rows' labels), numbers written out
# url: https://github.com/karpathy/nn-zero-to-hero (lectures/makemore)
# section: the forward pass "chunked into smaller steps"
# prints: loss = 1.47495 (PyTorch's for these numbers)
import torch
logits = torch.tensor([[0.2, -1.0, 0.5, 0.1], [1.5, 0.3, -0.2, 0.0], [-0.5, 0.8, 0.9, -1.2]], requires_grad=True)
Yb = torch.tensor([2, 0, 3])
n = 3
counts = logits.exp()
counts_sum = counts.sum(1, keepdims=True)
probs = counts / counts_sum
logprobs = probs.log()
loss = -logprobs[range(n), Yb].mean()
