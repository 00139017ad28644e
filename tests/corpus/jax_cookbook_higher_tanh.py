# source: JAX documentation, "The Autodiff Cookbook"
# url: https://docs.jax.dev/en/latest/notebooks/autodiff_cookbook.html
# section: "Starting with grad", the second cell: "you can apply it to its own output to
#   differentiate as many times as you like" (the first cell's jnp and grad imports above it;
#   its jit, vmap and random are left out)
# prints: -0.13621868, 0.25265405
import jax.numpy as jnp
from jax import grad

print(grad(grad(jnp.tanh))(2.0))
print(grad(grad(grad(jnp.tanh)))(2.0))
