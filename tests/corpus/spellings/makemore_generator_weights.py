# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 2 ("building makemore"),
#   the neural-network bigram model
# url: https://github.com/karpathy/nn-zero-to-hero/blob/master/lectures/makemore/makemore_part1_bigrams.ipynb
# section: "randomly initialize 27 neurons' weights" (W drawn from a seeded generator)
# prints: W[0, :3] as torch draws it: tensor([ 1.5674, -0.2373, -0.0274], grad_fn=<SliceBackward0>)
import torch
g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g, requires_grad=True)
print(W[0, :3])
