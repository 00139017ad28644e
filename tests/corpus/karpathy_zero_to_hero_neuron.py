# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 1 ("The spelled-out intro
#   to neural networks and backpropagation: building micrograd"), the neuron in PyTorch
# url: https://github.com/karpathy/nn-zero-to-hero (lectures/micrograd)
# section: the PyTorch comparison after the manual backprop of the neuron
# prints: 0.7071066904050358 (o), x2 0.5000001283844369, w2 0.0, x1 -1.5000003851533106,
#   w1 1.0000002567688737
import torch
x1 = torch.Tensor([2.0]).double()                ; x1.requires_grad = True
x2 = torch.Tensor([0.0]).double()                ; x2.requires_grad = True
w1 = torch.Tensor([-3.0]).double()               ; w1.requires_grad = True
w2 = torch.Tensor([1.0]).double()                ; w2.requires_grad = True
b = torch.Tensor([6.8813735870195432]).double()  ; b.requires_grad = True
n = x1*w1 + x2*w2 + b
o = torch.tanh(n)

print(o.data.item())
o.backward()

print('---')
print('x2', x2.grad.item())
print('w2', w2.grad.item())
print('x1', x1.grad.item())
print('w1', w1.grad.item())
