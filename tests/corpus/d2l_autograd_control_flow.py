# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation", PyTorch tab
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.4 "Gradients and Python Control Flow" (the page's `import torch` above it)
# prints: a.grad == d / a -> tensor(True) (d is linear in a: a.grad = d / a)
import torch
def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c
a = torch.randn(size=(), requires_grad=True)
d = f(a)
d.backward()
a.grad == d / a
