# source: JAX documentation, "The Autodiff Cookbook"
# url: https://docs.jax.dev/en/latest/notebooks/autodiff_cookbook.html
# section: "Gradients", "Starting with grad": the first cell's imports (jit, vmap and random
#   imported and not all used) and its grad of tanh, then the cell applying grad to its output
# prints: 0.070650816, -0.13621868, 0.25265405
import jax.numpy as jnp
from jax import grad, jit, vmap
from jax import random

key = random.key(0)

grad_tanh = grad(jnp.tanh)
print(grad_tanh(2.0))

print(grad(grad(jnp.tanh))(2.0))
print(grad(grad(grad(jnp.tanh)))(2.0))
