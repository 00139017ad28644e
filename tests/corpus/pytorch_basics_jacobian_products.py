# source: PyTorch tutorials, "Learn the Basics", "Automatic Differentiation with torch.autograd"
#   (beginner_source/basics/autogradqs_tutorial.py)
# url: https://pytorch.org/tutorials/beginner/basics/autogradqs_tutorial.html
# section: "Optional Reading: Tensor Gradients and Jacobian Products" (the tutorial's
#   `import torch` above it)
# prints: First call [[4, 2, 2, 2, 2], …]; Second call [[8, 4, 4, 4, 4], …] (accumulated);
#   Call after zeroing gradients [[4, 2, 2, 2, 2], …]
import torch
inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")
