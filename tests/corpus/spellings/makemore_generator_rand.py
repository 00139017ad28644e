# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 2 ("The spelled-out intro
#   to language modeling: building makemore")
# url: https://github.com/karpathy/nn-zero-to-hero/blob/master/lectures/makemore/makemore_part1_bigrams.ipynb
# section: sampling with a seeded torch.Generator
# prints: tensor([0.7081, 0.3542, 0.1054])
import torch
g = torch.Generator().manual_seed(2147483647)
p = torch.rand(3, generator=g)
p = p / p.sum()
print(torch.rand(3, generator=torch.Generator().manual_seed(2147483647)))
