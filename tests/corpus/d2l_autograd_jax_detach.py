# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation", JAX tab
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.3 "Detaching Computation" (with the cells before it that define jnp, x and
#   grad)
# prints: Array([ True,  True,  True,  True]) (the grad of sum(u * x) is u = x * x)
from jax import numpy as jnp
x = jnp.arange(4.0)
from jax import grad
import jax

y = lambda x: x * x
# jax.lax primitives are Python wrappers around XLA operations
u = jax.lax.stop_gradient(y(x))
z = lambda x: u * x

grad(lambda x: z(x).sum())(x) == y(x)
