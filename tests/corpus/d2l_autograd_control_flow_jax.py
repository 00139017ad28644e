# source: Dive into Deep Learning (d2l.ai), 2.5 "Automatic Differentiation", JAX tab
# url: https://d2l.ai/chapter_preliminaries/autograd.html
# section: 2.5.4 "Gradients and Python Control Flow" (the tab's imports from 2.5.1 above it)
# prints: d_grad == d / a -> Array(True)
from jax import numpy as jnp
from jax import grad
def f(a):
    b = a * 2
    while jnp.linalg.norm(b) < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c
from jax import random
a = random.normal(random.PRNGKey(1), ())
d = f(a)
d_grad = grad(f)(a)
d_grad == d / a
