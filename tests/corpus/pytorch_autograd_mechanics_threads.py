# source: PyTorch documentation, Notes, "Autograd mechanics" (docs/source/notes/autograd.rst)
# url: https://pytorch.org/docs/stable/notes/autograd.html
# section: "Multithreaded Autograd", its example (the `import torch` and `import threading`
#   the page assumes above it)
# prints: nothing; each of the ten threads makes its own x and leaves x.grad = 4.5 everywhere
import torch
import threading
# Define a train function to be used in different threads
def train_fn():
    x = torch.ones(5, 5, requires_grad=True)
    # forward
    y = (x + 3) * (x + 4) * 0.5
    # backward
    y.sum().backward()
    # potential optimizer update


# User write their own threading code to drive the train_fn
threads = []
for _ in range(10):
    p = threading.Thread(target=train_fn, args=())
    p.start()
    threads.append(p)

for p in threads:
    p.join()
