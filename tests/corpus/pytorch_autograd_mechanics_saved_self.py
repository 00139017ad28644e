# source: PyTorch documentation, Notes, "Autograd mechanics" (docs/source/notes/autograd.rst)
# url: https://pytorch.org/docs/stable/notes/autograd.html
# section: "How autograd encodes the history", "Saved tensors", its first example (the
#   `import torch` the page assumes above it)
# prints: True / True (y.grad_fn saved x itself)
import torch
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print(x.equal(y.grad_fn._saved_self))  # True
print(x is y.grad_fn._saved_self)  # True
