# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation", JAX tab
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.2 "Backward for Non-Scalar Variables" (with the cells before it that define
#   jnp, x and grad)
# prints: Array([0., 2., 4., 6.])
from jax import numpy as jnp
x = jnp.arange(4.0)
from jax import grad
y = lambda x: x * x
# grad is only defined for scalar output functions
grad(lambda x: y(x).sum())(x)
