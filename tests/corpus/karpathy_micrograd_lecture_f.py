# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 1 ("The spelled-out intro
#   to neural networks and backpropagation: building micrograd")
# url: https://github.com/karpathy/nn-zero-to-hero/blob/master/lectures/micrograd/micrograd_lecture_first_half_roughly.ipynb
# section: cells 2-3, the function and its value at 3 (cell 1's imports of math, numpy and
#   matplotlib, and %matplotlib inline, are left out)
# prints: 20.0
def f(x):
  return 3*x**2 - 4*x + 5
f(3.0)
