# source: PyTorch documentation, Notes, "Autograd mechanics" (docs/source/notes/autograd.rst)
# url: https://pytorch.org/docs/stable/notes/autograd.html
# section: "How autograd encodes the history", "Saved tensors", its second example (the
#   `import torch` the page assumes above it)
# prints: True / False (exp saves its result, packed into another tensor object)
import torch
x = torch.randn(5, requires_grad=True)
y = x.exp()
print(y.equal(y.grad_fn._saved_result))  # True
print(y is y.grad_fn._saved_result)  # False
