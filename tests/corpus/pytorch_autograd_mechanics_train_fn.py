# source: PyTorch documentation, Notes, "Autograd mechanics" (docs/source/notes/autograd.rst)
# url: https://pytorch.org/docs/stable/notes/autograd.html
# section: "Multithreaded Autograd", its train_fn, called once (what each of the example's
#   threads runs) in place of the threading code (the page's `import torch` above it)
# prints: nothing; x.grad = (x + 4 + x + 3) · 0.5 = 4.5 everywhere
import torch
# Define a train function to be used in different threads
def train_fn():
    x = torch.ones(5, 5, requires_grad=True)
    # forward
    y = (x + 3) * (x + 4) * 0.5
    # backward
    y.sum().backward()
    # potential optimizer update


train_fn()
