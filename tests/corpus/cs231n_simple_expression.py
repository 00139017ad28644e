# source: CS231n (Stanford), "Backpropagation, Intuitions" (optimization-2)
# url: https://cs231n.github.io/optimization-2/
# section: "Compound expressions with chain rule" (the forward pass; the notes then write the
#   backward pass by hand)
# prints: (in the comments) q = 3, f = -12; df/dx = -4, df/dy = -4, df/dz = 3
# set some inputs
x = -2; y = 5; z = -4

# perform the forward pass
q = x + y # q becomes 3
f = q * z # f becomes -12
