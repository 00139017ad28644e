# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 4 ("Building makemore
#   Part 3"/"Becoming a Backprop Ninja"): the loss written out against F.cross_entropy
# url: https://github.com/karpathy/nn-zero-to-hero (lectures/makemore)
# section: the cross-entropy loss by hand; logits and labels written out (3 rows, 4 classes)
# prints: the lecture prints random losses; here PyTorch's: loss = 1.47495, as F.cross_entropy
import torch
import torch.nn.functional as F
logits = torch.tensor([[0.2, -1.0, 0.5, 0.1], [1.5, 0.3, -0.2, 0.0], [-0.5, 0.8, 0.9, -1.2]], requires_grad=True)
Yb = torch.tensor([2, 0, 3])
n = 3
logit_maxes = logits.max(1, keepdim=True).values
norm_logits = logits - logit_maxes
counts = norm_logits.exp()
counts_sum = counts.sum(1, keepdims=True)
counts_sum_inv = counts_sum**-1
probs = counts * counts_sum_inv
logprobs = probs.log()
loss = -logprobs[range(n), Yb].mean()
