# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation", JAX tab
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.1 "A Simple Function" (the cells in order; the lone `x` and `y(x)` that a
#   notebook displays are left out: a bare expression can only be the last statement)
# prints: x_grad = Array([ 0.,  4.,  8., 12.]) (= 4x)
from jax import numpy as jnp
x = jnp.arange(4.0)
y = lambda x: 2 * jnp.dot(x, x)
from jax import grad
# The `grad` transform returns a Python function that
# computes the gradient of the original function
x_grad = grad(y)(x)
x_grad
