# source: HIPS autograd, README "Example use" (derivatives of derivatives, plotted there)
# url: https://github.com/HIPS/autograd
# section: elementwise_grad of tanh, to the sixth derivative (matplotlib's plot left out)
# prints: the derivatives at x = -7 … 7, as HIPS autograd computes them (not printed there)
import autograd.numpy as np
from autograd import elementwise_grad as egrad  # for functions that vectorize over inputs

def tanh(x):                 # Define a function
    y = np.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)

x = np.linspace(-7, 7, 7)
print(egrad(tanh)(x))
print(egrad(egrad(tanh))(x))
print(egrad(egrad(egrad(tanh)))(x))
