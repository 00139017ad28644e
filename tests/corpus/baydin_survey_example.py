# source: A. G. Baydin, B. A. Pearlmutter, A. A. Radul, J. M. Siskind, "Automatic
#   Differentiation in Machine Learning: a Survey", JMLR 18(153):1-43, 2018
# url: https://www.jmlr.org/papers/v18/17-468.html
# section: 3.1-3.2, the running example f(x1, x2) = ln(x1) + x1 x2 - sin(x2) at
#   (x1, x2) = (2, 5) (Tables 2 and 3)
# prints: (Table 3) y = 11.652; x̄1 = 5.5, x̄2 = 1.716
# note: the paper writes f as a formula; here it is that formula in Python's math spelling,
#   with the point of evaluation as assignments.
import math
x1 = 2
x2 = 5
y = math.log(x1) + x1 * x2 - math.sin(x2)
