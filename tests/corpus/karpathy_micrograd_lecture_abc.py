# source: Andrej Karpathy, "Neural Networks: Zero to Hero", lecture 1 ("The spelled-out intro
#   to neural networks and backpropagation: building micrograd")
# url: https://github.com/karpathy/nn-zero-to-hero/blob/master/lectures/micrograd/micrograd_lecture_first_half_roughly.ipynb
# section: cell 6, "les get more complex"
# prints: 4.0 (and the lecture then finds dd/da = -3, dd/db = 2, dd/dc = 1 by nudging)
# les get more complex
a = 2.0
b = -3.0
c = 10.0
d = a*b + c
print(d)
