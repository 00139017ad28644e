# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation", JAX tab
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.1 "A Simple Function", "Now let's calculate another function of x" (with
#   the cells before it that define jnp, x and grad)
# prints: Array([1., 1., 1., 1.])
from jax import numpy as jnp
x = jnp.arange(4.0)
from jax import grad
y = lambda x: x.sum()
grad(y)(x)
