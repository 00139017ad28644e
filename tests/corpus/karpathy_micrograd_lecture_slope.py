# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 1 ("The spelled-out intro
#   to neural networks and backpropagation: building micrograd")
# url: https://github.com/karpathy/nn-zero-to-hero/blob/master/lectures/micrograd/micrograd_lecture_first_half_roughly.ipynb
# section: cell 2 (the function) and cell 5, the slope by a finite difference at x = 2/3
#   (cell 4's plot is left out)
# prints: 2.999378523327323e-06
def f(x):
  return 3*x**2 - 4*x + 5
h = 0.000001
x = 2/3
(f(x + h) - f(x))/h
