# source: CS231n (Stanford), "Backpropagation, Intuitions" (optimization-2)
# url: https://cs231n.github.io/optimization-2/
# section: "Backprop in practice: Staged computation" (the forward pass)
# prints: nothing; the numbers below are PyTorch's for the same expression at x = 3, y = -4:
#   f = 1.5456, df/dx = 2.0596, df/dy = 1.5922
# note: `import math` is added, as above.
import math
x = 3 # example values
y = -4

# forward pass
sigy = 1.0 / (1 + math.exp(-y)) # sigmoid in numerator   #(1)
num = x + sigy # numerator                               #(2)
sigx = 1.0 / (1 + math.exp(-x)) # sigmoid in denominator #(3)
xpy = x + y                                              #(4)
xpysqr = xpy**2                                          #(5)
den = sigx + xpysqr # denominator                        #(6)
invden = 1.0 / den                                       #(7)
f = num * invden # done!                                 #(8)
