# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 1 ("The spelled-out intro
#   to neural networks and backpropagation: building micrograd")
# url: https://github.com/karpathy/nn-zero-to-hero/blob/master/lectures/micrograd/micrograd_lecture_first_half_roughly.ipynb
# section: cell 7, the slope of d with respect to c by nudging c
# prints: d1 4.0 / d2 4.0001 / slope 0.9999999999976694
h = 0.0001

# inputs
a = 2.0
b = -3.0
c = 10.0

d1 = a*b + c
c += h
d2 = a*b + c

print('d1', d1)
print('d2', d2)
print('slope', (d2 - d1)/h)
