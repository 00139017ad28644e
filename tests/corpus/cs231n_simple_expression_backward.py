# source: CS231n (Stanford), "Backpropagation, Intuitions" (optimization-2)
# url: https://cs231n.github.io/optimization-2/
# section: "Compound expressions with chain rule", the whole snippet: the forward pass and the
#   backward pass written by hand
# prints: (in the comments) q = 3, f = -12; dfdz = 3, dfdq = -4; the last line, dfdy, is -4
# set some inputs
x = -2; y = 5; z = -4

# perform the forward pass
q = x + y # q becomes 3
f = q * z # f becomes -12

# perform the backward pass (backpropagation) in reverse order:
# first backprop through f = q * z
dfdz = q # df/dz = q, so gradient on z becomes 3
dfdq = z # df/dq = z, so gradient on q becomes -4
dqdx = 1.0
dqdy = 1.0
# now backprop through q = x + y
dfdx = dfdq * dqdx  # The multiplication here is the chain rule!
dfdy = dfdq * dqdy  
