# source: JAX documentation, "The Autodiff Cookbook"
# url: https://docs.jax.dev/en/latest/notebooks/autodiff_cookbook.html
# section: "Gradients: Starting with grad" (the first cell's imports of jit, vmap and random
#   are left out: they are not part of the language)
# prints: 0.070650816, -0.13621868, 0.25265405
import jax.numpy as jnp
from jax import grad

grad_tanh = grad(jnp.tanh)
print(grad_tanh(2.0))
