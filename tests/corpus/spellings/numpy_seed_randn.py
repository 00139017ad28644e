# source: NumPy documentation, numpy.random.seed / numpy.random.randn (legacy RandomState)
# url: https://numpy.org/doc/stable/reference/random/generated/numpy.random.randn.html
# section: seeded draws (np.random.seed(0), the numbers every NumPy prints)
# prints: [1.76405235 0.40015721 0.97873798]
import numpy as np
np.random.seed(0)
x = np.random.randn(3)
print(x)
