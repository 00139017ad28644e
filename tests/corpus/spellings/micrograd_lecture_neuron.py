# source: Andrej Karpathy, "The spelled-out intro to neural networks and backpropagation:
#   building micrograd" (lecture 1), the neuron with micrograd's Value
# url: https://github.com/karpathy/nn-zero-to-hero/blob/master/lectures/micrograd/micrograd_lecture_first_half_roughly.ipynb
# section: "manual backpropagation example #2: a neuron", then o.backward()
# prints: x1.grad -1.5, w1.grad 1.0, x2.grad 0.5, w2.grad 0.0 (o = 0.7071)
from micrograd.engine import Value
# inputs x1,x2
x1 = Value(2.0, label='x1')
x2 = Value(0.0, label='x2')
# weights w1,w2
w1 = Value(-3.0, label='w1')
w2 = Value(1.0, label='w2')
# bias of the neuron
b = Value(6.8813735870195432, label='b')
# x1*w1 + x2*w2 + b
x1w1 = x1*w1; x1w1.label = 'x1*w1'
x2w2 = x2*w2; x2w2.label = 'x2*w2'
x1w1x2w2 = x1w1 + x2w2; x1w1x2w2.label = 'x1*w1 + x2*w2'
n = x1w1x2w2 + b; n.label = 'n'
o = n.tanh(); o.label = 'o'
o.backward()
print(o.data)
print(x1.grad, w1.grad, x2.grad, w2.grad)
