# source: JAX documentation, "Automatic differentiation" (the tutorial)
# url: https://docs.jax.dev/en/latest/automatic-differentiation.html
# section: "Computing gradients with jax.grad", the higher-order cells: f = x³ + 2x² − 3x + 1
#   and its four derivatives at 1
# prints: 4.0, 10.0, 6.0, 0.0
import jax
import jax.numpy as jnp
from jax import grad

f = lambda x: x**3 + 2*x**2 - 3*x + 1

dfdx = jax.grad(f)
d2fdx = jax.grad(dfdx)
d3fdx = jax.grad(d2fdx)
d4fdx = jax.grad(d3fdx)

print(dfdx(1.))
print(d2fdx(1.))
print(d3fdx(1.))
print(d4fdx(1.))
