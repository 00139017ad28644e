# source: Dive into Deep Learning (d2l.ai), 5.1 "Multilayer Perceptrons"
#   (chapter_multilayer-perceptrons/mlp.md, the PyTorch tab)
# url: https://d2l.ai/chapter_multilayer-perceptrons/mlp.html
# section: 5.1.2 "Activation Functions": the ReLU, sigmoid and tanh cells and the cells that
#   plot their grads (the chapter's imports above them)
# prints: plots: relu(x) and its grad (0, then 1), sigmoid(x) and its grad (peak 0.25 at 0),
#   tanh(x) and its grad (peak 1 at 0), over arange(-8.0, 8.0, 0.1)
%matplotlib inline
from d2l import torch as d2l
import torch

x = torch.arange(-8.0, 8.0, 0.1, requires_grad=True)
y = torch.relu(x)
d2l.plot(x.detach(), y.detach(), 'x', 'relu(x)', figsize=(5, 2.5))

y.backward(torch.ones_like(x), retain_graph=True)
d2l.plot(x.detach(), x.grad, 'x', 'grad of relu', figsize=(5, 2.5))

y = torch.sigmoid(x)
d2l.plot(x.detach(), y.detach(), 'x', 'sigmoid(x)', figsize=(5, 2.5))

# Clear out previous gradients
x.grad.data.zero_()
y.backward(torch.ones_like(x),retain_graph=True)
d2l.plot(x.detach(), x.grad, 'x', 'grad of sigmoid', figsize=(5, 2.5))

y = torch.tanh(x)
d2l.plot(x.detach(), y.detach(), 'x', 'tanh(x)', figsize=(5, 2.5))

# Clear out previous gradients
x.grad.data.zero_()
y.backward(torch.ones_like(x),retain_graph=True)
d2l.plot(x.detach(), x.grad, 'x', 'grad of tanh', figsize=(5, 2.5))
