# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 1, the neuron's forward
#   pass step by step (with `Value(…, label=…)` written as the numbers it wraps)
# url: https://github.com/karpathy/nn-zero-to-hero (lectures/micrograd)
# section: "manual backpropagation example #2: a neuron"
# prints: o = 0.7071; x1.grad = -1.5, w1.grad = 1.0, x2.grad = 0.5, w2.grad = 0.0, b = 0.5
# inputs x1,x2
x1 = 2.0
x2 = 0.0
# weights w1,w2
w1 = -3.0
w2 = 1.0
# bias of the neuron
b = 6.8813735870195432
# x1*w1 + x2*w2 + b
x1w1 = x1*w1
x2w2 = x2*w2
x1w1x2w2 = x1w1 + x2w2
n = x1w1x2w2 + b
o = n.tanh()
