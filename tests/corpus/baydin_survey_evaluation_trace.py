# source: A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind, "Automatic
#   Differentiation in Machine Learning: a Survey", JMLR 18(153):1-43, 2018
# url: https://www.jmlr.org/papers/v18/17-468.html
# section: Table 3, the forward primal trace of f(x1, x2) = ln(x1) + x1 x2 - sin(x2), one
#   line per row, and its reverse adjoint trace's results
# prints: v5 = y = 11.652 (v1 = 0.693, v2 = 10, v3 = -0.959, v4 = 10.693); x̄1 = 5.5,
#   x̄2 = 1.716
# note: the paper's v₋₁ is written v_1 (v-1 is not a name in Python); ln is math.log.
import math
x1 = 2
x2 = 5
v_1 = x1
v0 = x2
v1 = math.log(v_1)
v2 = v_1 * v0
v3 = math.sin(v0)
v4 = v1 + v2
v5 = v4 - v3
y = v5
