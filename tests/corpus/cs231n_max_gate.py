# source: CS231n (Stanford), "Backpropagation, Intuitions" (optimization-2), Figure of the
#   "Patterns in backward flow" section: the add, mul and max gates
# url: https://cs231n.github.io/optimization-2/
# section: "Patterns in backward flow" (x = 3, y = -4, z = 2, w = -1)
# prints: (in the figure) f = -20 ... the figure's output is 2 * ((x*y) + max(z, w)) = -20;
#   dx = -8, dy = 6, dz = 2, dw = 0
x = 3
y = -4
z = 2
w = -1
f = 2 * ((x * y) + max(z, w))
