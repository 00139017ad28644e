# source: CS231n (Stanford), "Backpropagation, Intuitions" (optimization-2)
# url: https://cs231n.github.io/optimization-2/
# section: "Modularity: Sigmoid example" (the forward pass of the 2-d neuron)
# prints: (in the text) f = 0.73; dw = [-0.20, -0.39, 0.20], dx = [0.39, -0.59]
# note: the notes' snippet uses math without showing its import; `import math` is added.
import math
w = [2,-3,-3] # assume some random weights and data
x = [-1, -2]

# forward pass
dot = w[0]*x[0] + w[1]*x[1] + w[2]
f = 1.0 / (1 + math.exp(-dot)) # sigmoid function
