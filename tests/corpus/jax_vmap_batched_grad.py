# source: JAX documentation, "Automatic differentiation" (the tutorial)
# url: https://docs.jax.dev/en/latest/automatic-differentiation.html
# section: "Computing gradients with jax.grad": per-example gradients, vmap(grad(f)) over a
#   batch (the tutorial's pattern, on a batch written out)
# prints: the per-example gradients of tanh (JAX's float32 numbers)
import jax
import jax.numpy as jnp
from jax import grad, jit, vmap

x = jnp.array([0.0, 0.5, 1.0, 2.0])
per_example = vmap(grad(jnp.tanh))(x)
print(per_example)
