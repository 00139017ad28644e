# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 1: the neuron with tanh
#   broken into exp (the same numbers), with Value written as numbers
# url: https://github.com/karpathy/nn-zero-to-hero (lectures/micrograd)
# section: "breaking up tanh, exercising with more operations"
# prints: o = 0.7071; x1.grad = -1.5, w1.grad = 1.0, x2.grad = 0.5, w2.grad = 0.0
x1 = 2.0
x2 = 0.0
w1 = -3.0
w2 = 1.0
b = 6.8813735870195432
x1w1 = x1*w1
x2w2 = x2*w2
x1w1x2w2 = x1w1 + x2w2
n = x1w1x2w2 + b
e = (2*n).exp()
o = (e - 1) / (e + 1)
